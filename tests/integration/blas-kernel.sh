#!/bin/sh
# BLAS check 1 (issue 26): the kernel a worker runs, reported and right.
# Each run starts agents of its own (a fresh state directory), since a
# rank inherits its agent's environment:
#  - OPENBLAS_CORETYPE=Prescott, as if the library had chosen it: the
#    operator's value wins, the worker says Prescott, chosen by
#    OPENBLAS_CORETYPE, and its kernel agrees with the reference GEMM to
#    1e-5;
#  - no variable: the worker's kernel is of the class cpuid allows, found
#    here independently from /proc/cpuinfo's flags (AVX-512: SkylakeX,
#    Cooperlake or SapphireRapids; AVX2 and FMA: Haswell or Zen; ...);
#  - Prescott marked as hunter's own choice (what a hunter process on
#    another CPU would leave in the environment, as srun passes it on):
#    hunter starts again with this CPU's kernel, and says it chose it.
. "$SRCDIR/tests/integration/lib.sh"
mkdata "$T/data" 256 64
small_job "$T/j.yaml" kernel "$T/data"
run_with() {	# LABEL ENV...: one run, with agents of its own
	HUNTER_STATE_DIR="$T/st-$1"
	shift
	env -u OPENBLAS_CORETYPE -u HUNTER_BLAS_CORETYPE "$@" \
		"$HUNTER" run --json "$T/j.yaml" > "$T/out" 2>&1 ||
		{ rc=$?; tail -n 5 "$T/out"; fail "the run exited $rc"; }
	stop_agents
	cp "$T/out" "$T/out-$(echo "$HUNTER_STATE_DIR" | sed 's/.*st-//')"
}
run_with operator OPENBLAS_CORETYPE=Prescott
run_with none
run_with inherited OPENBLAS_CORETYPE=Prescott HUNTER_BLAS_CORETYPE=Prescott
"$PY" - "$T" <<'PYEOF' || fail "see above"
import json, sys
flags = set()
for line in open("/proc/cpuinfo"):
    if line.startswith("flags"):
        flags = set(line.split(":", 1)[1].split())
        break
classes = [
    ({"avx512f", "avx512dq", "avx512cd", "avx512bw", "avx512vl"},
     {"SkylakeX", "Cooperlake", "SapphireRapids"}),
    ({"avx2", "fma"}, {"Haswell", "Zen", "Excavator"}),
    ({"avx"}, {"Sandybridge", "Bulldozer", "Piledriver", "Steamroller"}),
]
allowed = next((k for need, k in classes if need <= flags), None)
def started(label):
    o = [json.loads(l) for l in open("%s/out-%s" % (sys.argv[1], label))
         if l.startswith("{")]
    s = [x for x in o if x["t"] == "event" and x["kind"] == "started"]
    assert len(s) == 1 and [x for x in o if x["t"] == "summary"][-1]["state"] \
        == "finished", label
    print("%-9s %s" % (label, s[0]["reason"].split("; ", 1)[1]))
    assert s[0]["blas"].startswith("OpenBLAS ") and s[0]["blas_threads"] >= 1
    assert 0 < s[0]["blas_check"] <= 1e-5, s[0]["blas_check"]
    assert s[0]["kernel"] in s[0]["reason"]
    return s[0]
print("cpuid's class here: %s" % (sorted(allowed) if allowed else "SSE"))
op = started("operator")
assert op["kernel"] == "Prescott" and op["kernel_by"] == "operator", op
none = started("none")
assert none["kernel_by"] in ("library", "hunter"), none
assert allowed is None or none["kernel"] in allowed, none
inh = started("inherited")
if allowed is not None:
    assert inh["kernel"] in allowed and inh["kernel_by"] == "hunter", inh
PYEOF
pass "the worker reports the kernel it ran: the operator's Prescott, cpuid's class without a variable, corrected when inherited"
