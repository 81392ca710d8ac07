#!/bin/sh
# hunter sim against arithmetic done by hand (issue 25, check 4): two
# jobs on one node of 2 slots.  The application "toy" computes 1 ms a
# sample and exchanges in 8 ms within a node (its steps.csv holds
# exactly that, so the fit is exact); its batch is 64, so on 2 ranks a
# step is 32 + 8 = 40 ms for 64 samples (1600 samples/s) and on 1 rank
# 64 ms (1000 samples/s).  A change of allocation, the first start
# included, costs 10 s.  a (6400 samples) arrives at 0, b (3200) at 10,
# each asking for 2 ranks.
#   fifo, las: a starts at 0, runs from 10 for 6400/1600 = 4 s, ends at
#     14 (JCT 14); b waits for it, restarts to 24, runs 3200/1600 = 2 s,
#     ends at 26 (JCT 16); makespan 26, every slot held: utilisation 1.
#   goodput: a alone takes 2 ranks (speedup 1.6); at 10 b comes and both
#     run on 1 each, a restarting (restarts 1) before it made progress:
#     b restarts to 20, ends at 20 + 3.2 = 23.2 (JCT 13.2); a restarts to
#     20 and ends at 20 + 6.4 = 26.4 (JCT 26.4): growing back at 23.2
#     would cost its factor (23.2 - 10) / (23.2 + 10) = 0.398 of a 1.6
#     speedup, less than staying; held: 2 x 10 + 16.4 + 13.2 = 49.6 of
#     2 x 26.4 slot-seconds.
. "$SRCDIR/tests/integration/lib.sh"
cd "$T"
mkdir -p models/toy models/bad
cat > models/toy/app.conf <<'EOF'
# 1 ms a sample, 8 ms to exchange within a node
batch 64
micro_max 64
samples 6400
EOF
cat > models/toy/steps.csv <<'EOF'
nodes,ranks,micro,accum,step_ms,exchange_ms
1,1,32,1,32,0
1,1,64,1,64,0
1,2,32,1,40,8
EOF
cat > trace.csv <<'EOF'
name,time,application,ranks,batch,samples
a,0,toy,2,64,6400
b,10,toy,2,64,3200
EOF
echo 'batch 64' > models/bad/app.conf
set +e
"$HUNTER" sim --models models --nodes 1 --slots 2 trace.csv > out 2>&1
rc=$?
set -e
cat out
[ "$rc" = 1 ] || fail "a model without micro_max: exit $rc"
grep -q 'models/bad/app.conf: batch, micro_max and samples are needed' out ||
	fail "the bad model is not named"
rm -r models/bad
"$HUNTER" sim --models models --nodes 1 --slots 2 --racks 1 --interval 60 \
	--restart 10 --json trace.csv > out || { cat out; fail "sim failed"; }
cat out
"$PY" - out <<'PYEOF' || fail "a figure differs from the arithmetic above"
import json, sys
want = {
    "fifo": {"a": 14, "b": 16, "avg_jct": 15, "p99_jct": 16, "makespan": 26,
             "utilisation": 1.0, "restarts": 0},
    "las": {"a": 14, "b": 16, "avg_jct": 15, "p99_jct": 16, "makespan": 26,
            "utilisation": 1.0, "restarts": 0},
    "goodput": {"a": 26.4, "b": 13.2, "avg_jct": 19.8, "p99_jct": 26.4,
                "makespan": 26.4, "utilisation": 49.6 / 52.8, "restarts": 1},
}
seen = set()
for line in open(sys.argv[1]):
    r = json.loads(line)
    w = want[r["policy"]]
    seen.add(r["policy"])
    for k, v in w.items():
        got = r["jobs"][k] if k in ("a", "b") else r[k]
        assert abs(got - v) < 1e-9, (r["policy"], k, got, v)
assert seen == set(want), seen
PYEOF
# A trace that cannot be read says where.
printf 'name,time,application,ranks,batch\na,0,toy,3,64\n' > bad.csv
set +e
"$HUNTER" sim --models models --nodes 1 --slots 2 bad.csv > out 2>&1
rc=$?
set -e
[ "$rc" = 1 ] && grep -q 'bad.csv:2: batch must be a multiple of ranks (3)' out ||
	{ cat out; fail "a bad trace line was not reported"; }
printf 'name,time,application,ranks,batch\na,0,toy,4,64\n' > big.csv
set +e
"$HUNTER" sim --models models --nodes 1 --slots 2 --policy fifo big.csv > out 2>&1
rc=$?
set -e
[ "$rc" = 1 ] && grep -q "job 'a' (4 ranks of toy) never runs on 1 nodes of 2 slots under fifo" out ||
	{ cat out; fail "a job that can never run was not reported"; }
pass "sim gives the hand-computed JCTs"
