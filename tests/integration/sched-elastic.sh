#!/bin/sh
# The live scheduler (issue 25, check 2), on the embedded cluster (three
# working nodes of 2 slots, and the spare).  An elastic job (ranks: {min:
# 1, max: 6}) alone grows to every free slot; a second one handed in
# with hunter submit makes the first shrink (a resized event) and starts;
# once it ends the first grows back; both finish with the accuracy of a
# fixed-size run, and hunter jobs shows both, no node over its slots.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/integration/sched-lib.sh"
sched_config 2s 0.5s
mkdata "$T/data" 1920 200
for n in a b; do
	small_job "$T/$n.yaml" "el$n" "$T/data"
	sed -i "s/ranks: 1/ranks: {min: 1, max: 6}/; s/global: 32, micro: 32/global: 96, micro: auto/; s/every_steps: 0/every_steps: 10/" "$T/$n.yaml"
done
sed -i 's/epochs: 2/epochs: 20/' "$T/a.yaml"
sed -i 's/epochs: 2/epochs: 3/' "$T/b.yaml"

"$HUNTER" run --json --inject slow-sample=1000 "$T/a.yaml" > "$T/out" 2>&1 &
run=$!
cleanup_hooks="kill -9 $run 2>/dev/null || true"
_grown() { resizes "$T/out" ela | grep -q '^1->[2-6]$'; }
wait_until 40 "ela to grow past 1 rank" _grown
"$HUNTER" submit "$T/b.yaml" > "$T/submit" || { cat "$T/submit"; fail "hunter submit"; }
cat "$T/submit"
grep -q 'elb: queued, position 1\|elb: placing' "$T/submit" || fail "submit did not say where elb is"
_both() { "$HUNTER" jobs --json > "$T/jobs" 2>/dev/null && grep -q '"job": *"elb"' "$T/jobs" &&
	grep -q '"phase": *"running"' "$T/jobs"; }
wait_until 30 "hunter jobs to list both" _both
"$HUNTER" jobs
wait $run || { rc=$?; tail -n 5 "$T/out" | cut -c1-300; fail "the run exited $rc"; }
echo "ela: $(resizes "$T/out" ela | tr '\n' ' ')"
echo "elb: $(resizes "$T/out" elb | tr '\n' ' ')"
"$PY" - "$T/out" "$T/jobs" <<'PYEOF' || fail "see above"
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
ev = [o for o in objs if o["t"] == "event"]
def idx(pred):
    return next((i for i, o in enumerate(ev) if pred(o)), None)
ra = [(i, o["from"], o["to"]) for i, o in enumerate(ev)
      if o["kind"] == "resized" and o["job"] == "ela"]
b_placed = idx(lambda o: o["kind"] == "placed" and o["job"] == "elb")
b_end = idx(lambda o: o["kind"] == "phase" and o["job"] == "elb" and o["to"] == "finished")
assert ra and ra[0][1] == 1 and ra[0][2] > 1, ra
shrink = [r for r in ra if r[2] < r[1]]
assert shrink, "ela never shrank: %s" % ra
assert b_placed is not None and b_end is not None, "elb did not run and end"
assert any(r[0] < b_end for r in shrink), "ela shrank only after elb ended: %s" % ra
assert any(r[0] > b_end and r[2] > r[1] for r in ra), "ela did not grow back after elb: %s" % ra
for o in [o for o in ev if o["kind"] == "resized"]:
    assert "global_batch" in o and "lr" in o, o
summ = {o["job"]: o for o in objs if o["t"] == "summary"}
assert summ["ela"]["state"] == "finished" and summ["elb"]["state"] == "finished", summ
jobs = [json.loads(l) for l in open(sys.argv[2])]
used = {}
for j in jobs:
    for n in j["nodes"]:
        used[n] = used.get(n, 0) + 1
assert all(v <= 2 for v in used.values()) and "local3" not in used, used
print("test_acc: ela %.4f, elb %.4f" % (summ["ela"]["test_acc"], summ["elb"]["test_acc"]))
PYEOF
(cd "$T" && "$HUNTER" report ela > /dev/null) || fail "hunter report ela"
grep -q 'Allocation: ranks over time (the scheduler resized it)' "$T/ela-report.html" ||
	fail "the report does not draw the allocation over time"
acc_a=$(grep '"t":"summary","job":"ela"' "$T/out" | sed 's/.*"test_acc":\([0-9.e-]*\).*/\1/')
# The same job at a fixed size, for its accuracy.
stop_agents
sed 's/ranks: {min: 1, max: 6}/ranks: 2/' "$T/a.yaml" > "$T/fixed.yaml"
HUNTER_STATE_DIR="$T/fixed-state" "$HUNTER" run --json "$T/fixed.yaml" > "$T/fixed" 2>&1 ||
	fail "the fixed-size run"
for p in "$T"/fixed-state/nodes/*/agent.pid; do kill "$(cat "$p")" 2>/dev/null || true; done
acc_f=$(grep '"t":"summary"' "$T/fixed" | sed 's/.*"test_acc":\([0-9.e-]*\).*/\1/')
"$PY" -c "import sys; a, f = map(float, sys.argv[1:]); print('elastic %.4f, fixed %.4f' % (a, f)); sys.exit(abs(a - f) > 0.01)" \
	"$acc_a" "$acc_f" || fail "the elastic job's accuracy is not the fixed run's"
pass "an elastic job grew, shrank for a second and grew back; both finished"
