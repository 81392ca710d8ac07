#!/bin/sh
# Ranks that fit the cores (issue 26, item 4): the agent gives each rank
# OPENBLAS_NUM_THREADS and OMP_NUM_THREADS, the node's cores over the CPU
# slots of its machine, unless the rank's environment already says:
#  - one node of 1 slot: a rank gets every core; its worker says so;
#  - two nodes of 1 slot on the same host (local): half the cores each;
#  - the embedded cluster, 8 slots on this machine: 1 (at least one);
#  - a program job's env sets OPENBLAS_NUM_THREADS: that wins, and
#    OMP_NUM_THREADS still comes from the agent;
#  - the worker's started event and a program's own environment agree.
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
PYEOF
pass "each rank runs the node's cores over its machine's slots, unless its environment says"
