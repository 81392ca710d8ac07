#!/bin/sh
# Ranks that fit the cores (issue 26, item 4): the agent gives each rank
# OPENBLAS_NUM_THREADS and OMP_NUM_THREADS, the node's cores over the CPU
# slots of its machine, unless the rank's environment already says:
#  - one node of 1 slot: a rank gets every core; its worker says so;
#  - two nodes of 1 slot on the same host (local): half the cores each;
#  - the embedded cluster, 8 slots on this machine: 1 (at least one);
#  - a program job's env sets OPENBLAS_NUM_THREADS: that wins, and
#    OMP_NUM_THREADS still comes from the agent;
#  - the worker's started event and a program's own environment agree;
#  - where the job's ranks on a host are as many as its cores, each loads
#    its batches itself, with no prefetch thread, and says so in its
#    started event: a 2-rank job of the embedded cluster does on a
#    2-core machine, a 1-rank job does not (unless the machine has one
#    core), nor does one whose spec keeps the thread on a host with cores
#    spare; data.prefetch: 0 asks for it on any host.
# Each run has agents of its own (a fresh state directory).
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/integration/program-lib.sh"
cores=$("$PY" -c 'import os; print(len(os.sched_getaffinity(0)))')
half=$((cores / 2)); [ "$half" -ge 1 ] || half=1
mkdata "$T/data" 256 64
small_job "$T/j.yaml" threads "$T/data"
cat > "$T/show.yaml" <<EOF2
name: show
resources: {ranks: 1}
program:
  argv: [sh, -c, 'echo "threads \$OPENBLAS_NUM_THREADS omp \$OMP_NUM_THREADS"']
EOF2
sed 's/^program:$/program:\n  env: {OPENBLAS_NUM_THREADS: "3"}/' "$T/show.yaml" > "$T/own.yaml"
cat > "$T/one.yaml" <<EOF2
cluster: one
nodes:
  - {name: solo, host: local, devices: {cpu: 1}}
EOF2
cat > "$T/two.yaml" <<EOF2
cluster: two
nodes:
  - {name: a, host: local, devices: {cpu: 1}}
  - {name: b, host: local, devices: {cpu: 1}}
EOF2
# run LABEL JOB [--cluster FILE]: the run's JSON lines in $T/LABEL
run() {
	HUNTER_STATE_DIR="$T/st-$1"
	out="$T/$1"
	job=$2
	shift 2
	(cd "$T" && env -u OPENBLAS_NUM_THREADS -u OMP_NUM_THREADS \
		"$HUNTER" run --json "$@" "$job") > "$out" 2>&1 ||
		{ rc=$?; tail -n 5 "$out"; fail "run $out exited $rc"; }
	stop_agents
}
run w-one "$T/j.yaml" --cluster "$T/one.yaml"
run w-two "$T/j.yaml" --cluster "$T/two.yaml"
run w-default "$T/j.yaml"
sed 's/ranks: 1/ranks: 2/; s/micro: 32/micro: 16/' "$T/j.yaml" > "$T/j2.yaml"
sed 's/prefetch: 4/prefetch: 0/' "$T/j.yaml" > "$T/j0.yaml"
grep -q 'prefetch: 0' "$T/j0.yaml" || fail "no prefetch in the small job"
run w-two-ranks "$T/j2.yaml"
run w-prefetch0 "$T/j0.yaml"
run p-one "$T/show.yaml" --cluster "$T/one.yaml"
run p-default "$T/show.yaml"
run p-own "$T/own.yaml" --cluster "$T/one.yaml"
"$PY" - "$T" "$cores" "$half" <<'PYEOF' || fail "see above"
import json, sys
t, cores, half = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def frames(label):
    return [json.loads(l) for l in open("%s/%s" % (t, label)) if l.startswith("{")]
def worker(label):
    s = [x for x in frames(label) if x["t"] == "event" and x["kind"] == "started"]
    return s[0]["blas_threads"]
def program(label):
    lines = [x["line"] for x in frames(label) if x["t"] == "log" and
             x["line"].startswith("threads")]
    assert lines, label
    return lines[0]
got = {"w-one": worker("w-one"), "w-two": worker("w-two"),
       "w-default": worker("w-default"), "p-one": program("p-one"),
       "p-default": program("p-default"), "p-own": program("p-own")}
print("%d cores: %s" % (cores, got))
assert got["w-one"] == cores, got
assert got["w-two"] == half, got
assert got["w-default"] == 1, got
assert got["p-one"] == "threads %d omp %d" % (cores, cores), got
assert got["p-default"] == "threads 1 omp 1", got
assert got["p-own"] == "threads 3 omp %d" % cores, got
def inline(label):
    said = [x["reason"] for x in frames(label) if x["t"] == "event" and
            x["kind"] == "started"]
    assert said, label
    return ["loaded by the rank itself" in r for r in said]
loads = {k: inline(k) for k in ("w-one", "w-two", "w-default",
                                "w-two-ranks", "w-prefetch0")}
print("batches loaded by the rank itself: %s" % loads)
assert loads["w-two-ranks"] == [2 >= cores] * 2, loads
assert loads["w-default"] == [1 >= cores], loads
assert loads["w-two"] == [1 >= cores], loads
assert loads["w-one"] == [1 >= cores], loads
assert loads["w-prefetch0"] == [True], loads
PYEOF
pass "each rank runs the node's cores over its machine's slots, unless its environment says; ranks that fill the cores load their own batches"
