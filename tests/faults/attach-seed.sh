#!/bin/sh
# A backend that re-attaches to a live job takes each rank's last
# metrics from the job's saved series.  The agents send their history
# again and the last metrics of the workers they still run, but not of
# a worker that ended while no backend was attached; before, such a
# rank's exit was said to be "(step 0, epoch 0)".  Here a 2-rank job is
# paused (each rank reports the step it holds at before it says it
# holds, and `hunter jobs` lists that step), its backend killed (kill
# -9), both workers sent SIGTERM and gone; the backend that re-attaches
# ends the job stopped, and the reason names the paused step.  Then a
# backend attached to the ended job prints the summary its ranks sent,
# its wall time the one the job ended with (from the journal).
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/faults/faults-lib.sh"
. "$SRCDIR/tests/integration/program-lib.sh"
mkdata "$T/data" 4800 200
small_job "$T/j.yaml" aseed "$T/data"
sed -i 's/ranks: 1/ranks: 2/; s/epochs: 2/epochs: 40/; s/micro: 32/micro: 16/' "$T/j.yaml"
# 16 ms a step: the job outlasts the test, which ends it.
"$HUNTER" run --json --inject slow-sample=1000 "$T/j.yaml" > "$T/out1" 2>&1 &
run=$!
cleanup_hooks="kill -9 $run 2>/dev/null || true"
jwait "$T/out1" 60 'any(x["t"] == "metrics" and x.get("step", 0) > 5 for x in o)'
"$HUNTER" ctl aseed pause || fail "ctl pause"
jwait "$T/out1" 20 'len([x for x in ev if x["kind"] == "paused"]) == 2'
"$HUNTER" jobs --json > "$T/jobs" || fail "hunter jobs"
"$HUNTER" jobs > "$T/table" || fail "hunter jobs (the table)"
cat "$T/table"
step=$("$PY" - "$T/jobs" "$T/out1" <<'PYEOF'
import json, sys
a = [json.loads(l) for l in open(sys.argv[1]) if '"aseed"' in l][0]
o = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")]
held = [x for x in o if x["t"] == "metrics" and x.get("job") == "aseed"]
held = {x["rank"]: x["step"] for x in held}
sys.stderr.write("paused: %s; the ranks' last steps %s\n" % (a, held))
assert a["phase"] == "paused" and a["step"] > 5 and "epoch" in a, a
assert held == {0: a["step"], 1: a["step"]}, (held, a["step"])
print(a["step"])
PYEOF
) || fail "hunter jobs does not list the step the ranks hold at"
grep -q "^aseed .* $step (0) " "$T/table" || fail "the table has no step $step (0)"
kill -9 $run
wait $run 2>/dev/null || true
pids=$(echo $(test_workers))
[ "$(echo $pids | wc -w)" = 2 ] || fail "this test's agents run workers '$pids', not 2"
kill -TERM $pids
wait_until 20 "the workers to end" sh -c "for p in $pids; do kill -0 \$p 2>/dev/null && exit 1; done; exit 0"
set +e
timeout 60 "$HUNTER" run --json --attach aseed > "$T/out2" 2>&1
rc=$?
set -e
[ "$(jget "$T/out2" summary state)" = stopped ] ||
	{ grep -v '"metrics"' "$T/out2" | tail -n 8 | cut -c1-300; fail "the attached run ended $(jget "$T/out2" summary state) (exit $rc)"; }
grep -q "exited before the end of training (step $step, epoch 0)" "$T/out2" ||
	{ grep -v '"metrics"' "$T/out2" | tail -n 8 | cut -c1-300; fail "the reason does not name step $step"; }
# Attached to once it has ended, a backend says how from the journal and
# the saved series: the summary the ranks sent, steps and all (before,
# the series' frames, which leave the run to their header, never matched
# and the summary said 0 steps).
sleep 2	# the ended job's wall time ends at its end, not at this attach
timeout 30 "$HUNTER" run --json --attach aseed > "$T/out3" 2>&1 ||
	{ rc=$?; tail -n 5 "$T/out3"; fail "attach to the ended job exited $rc"; }
[ "$(jget "$T/out3" summary steps)" = "$(jget "$T/out2" summary steps)" ] &&
	[ "$(jget "$T/out3" summary optimizer_bytes)" = "$(jget "$T/out2" summary optimizer_bytes)" ] ||
	{ grep summary "$T/out2" "$T/out3" | cut -c1-300; fail "the ended job's summary is not the one its ranks sent"; }
w2=$(jget "$T/out2" summary wall_s) w3=$(jget "$T/out3" summary wall_s)
"$PY" -c "import sys; a, b = map(float, sys.argv[1:]); sys.exit(not abs(a - b) < 1)" "$w2" "$w3" ||
	fail "the ended job's wall time is $w3 s after the end, $w2 s at it"
pass "the re-attached backend named the step ($step) its ranks ended at while it was gone, and the summary after the end"
