#!/bin/sh
# hunter check's BLAS (issue 26, item 2): each node's library, kernel
# (and who chose it) and sgemm GFLOP/s on one thread, measured by the
# check one node at a time; a node below half the best node of the same
# CPU model is measured twice more and, still below, named in a warning;
# a node whose operator's OPENBLAS_CORETYPE runs under 90% of the kernel
# cpuid allows there is named too, with that kernel's figure, measured by
# its agent in a child process.
# Two local nodes; the agent of "slow" is started by hand with
# OPENBLAS_CORETYPE=Prescott, an operator's choice of the SSE3 kernel,
# 4-5x slower than an AVX2 or AVX-512 one (the figures are CPU time, so a
# loaded machine does not blur them much).
. "$SRCDIR/tests/integration/lib.sh"
cat > "$T/cluster.yaml" <<EOF2
cluster: blas
nodes:
  - {name: fast, host: local, devices: {cpu: 1}}
  - {name: slow, host: local, devices: {cpu: 1}}
EOF2
mkdir -p "$HUNTER_STATE_DIR/nodes/slow"
chmod 700 "$HUNTER_STATE_DIR" "$HUNTER_STATE_DIR/nodes" "$HUNTER_STATE_DIR/nodes/slow"
env OPENBLAS_CORETYPE=Prescott "$HUNTER" agent --node slow \
	--dir "$HUNTER_STATE_DIR/nodes/slow" --idle-exit 120 ||
	fail "the slow node's agent did not start"
env -u OPENBLAS_CORETYPE -u HUNTER_BLAS_CORETYPE "$HUNTER" check \
	--cluster "$T/cluster.yaml" > "$T/out" 2>&1 || { rc=$?; cat "$T/out"; fail "hunter check exited $rc"; }
cat "$T/out"
"$PY" - "$T/out" <<'PYEOF' || fail "see above"
import re, sys
text = open(sys.argv[1]).read()
lines = text.splitlines()
head = lines[0].split()
assert head[-3:] == ["BLAS", "KERNEL", "GFLOP/S"], head
rows = {l.split()[0]: l for l in lines[1:3]}
def cells(node):
    m = re.search(r"(OpenBLAS \S+)\s+(\S+) \((\w+)\)\s+([0-9.]+)\s*$", rows[node])
    assert m, rows[node]
    return m.group(1), m.group(2), m.group(3), float(m.group(4))
fast, slow = cells("fast"), cells("slow")
print("fast: %s; slow: %s" % (fast, slow))
assert slow[1] == "Prescott" and slow[2] == "operator", slow
assert fast[1] != "Prescott" and fast[2] in ("library", "hunter"), fast
assert fast[3] > 0 and slow[3] > 0
flags = next(l for l in open("/proc/cpuinfo") if l.startswith("flags")).split()
warns = [l for l in lines if l.startswith("warning: node") and " runs sgemm at " in l]
owns = [l for l in lines if l.startswith("warning: node") and "OPENBLAS_CORETYPE (the operator's)" in l]
if "avx2" in flags and "fma" in flags:
    assert fast[3] > 2 * slow[3], (fast, slow)
    assert len(warns) == 1 and warns[0].startswith("warning: node slow runs sgemm"), warns
    assert "Prescott (operator)" in warns[0] and "node fast's" in warns[0], warns
    # The kernel cpuid allows, measured on the slow node: well above
    # Prescott's, as the fast node's (hunter's or the library's choice).
    assert len(owns) == 1 and owns[0].startswith("warning: node slow runs kernel Prescott"), owns
    m = re.search(r"at ([0-9.]+) GFLOP/s a thread; (\S+), which cpuid allows there, runs ([0-9.]+) \(([0-9.]+)x\)", owns[0])
    assert m, owns[0]
    assert float(m.group(1)) == slow[3], (m.group(1), slow)
    assert float(m.group(3)) > 2 * slow[3], (m.group(3), slow)
    print("the slow node's own best kernel: %s at %s" % (m.group(2), m.group(3)))
assert len(warns) + len(owns) == len([l for l in lines if l.startswith("warning:")]), lines
assert not any(l.startswith("warning: node fast") for l in lines)
assert lines[-1].startswith("ok: 2 nodes run hunter")
PYEOF
# The slow node was measured twice more before it was named; the fast
# one, the best, once.
if grep -q "avx2" /proc/cpuinfo && grep -q "fma" /proc/cpuinfo; then
	n=$(grep -c "sgemm on one thread" "$HUNTER_STATE_DIR/nodes/slow/agent.log")
	[ "$n" = 3 ] || fail "the slow node measured $n times, not 3"
fi
n=$(grep -c "sgemm on one thread" "$HUNTER_STATE_DIR/nodes/fast/agent.log")
[ "$n" = 1 ] || fail "the fast node measured $n times, not once"
# Only the operator's node measures the kernel cpuid allows beside its own.
! grep -q "which cpuid allows" "$HUNTER_STATE_DIR/nodes/fast/agent.log" ||
	fail "the fast node, which runs hunter's or the library's choice, measured another kernel"
pass "hunter check shows each node's BLAS, kernel and GFLOP/s and names the slow one"
