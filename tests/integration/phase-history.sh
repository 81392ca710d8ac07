#!/bin/sh
# The job's life from the journal alone (docs/architecture.md, "A job's
# life"): a 2-rank job is migrated (hunter ctl), then its moved rank is
# killed with kill -9 (a failover), then stopped.  Reading nothing but
# journal.jsonl, each rank's phase history and the job's are rebuilt
# from the "phase" events: every move names where it came from, where it
# went and why, each starts where the one before it ended, and together
# they tell the run: two re-formations, the killed rank's failure, the
# stop.  The journal's other events of the job name its phase too.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/faults/faults-lib.sh"
mkdata "$T/data" 4000 64
small_job "$T/j.yaml" lifejob "$T/data" 'policy: {failover: {heartbeat_timeout: 4s}}'
sed -i 's/ranks: 1/ranks: 2/; s/epochs: 2/epochs: 40/; s/micro: 32/micro: 16/; s/every_steps: 0/every_steps: 10/' "$T/j.yaml"

"$HUNTER" run --json --inject slow=20 "$T/j.yaml" > "$T/out" 2>&1 &
run=$!
cleanup_hooks="kill -9 $run 2>/dev/null || true"
wait_for "$T/out" '"t":"metrics"'
"$HUNTER" ctl lifejob migrate 1 local3 || fail "ctl migrate"
wait_for "$T/out" '"kind":"migrated".*generation 1' 30

# The moved rank's process, from a metrics frame of generation 1.
_pid() { [ -n "$(rank_pid "$T/out" 1 1 1)" ]; }
wait_until 30 "a step of generation 1" _pid
kill -9 "$(rank_pid "$T/out" 1 1 1 | cut -d' ' -f1)" || fail "kill rank 1"
wait_for "$T/out" '"kind":"failover".*generation 2' 30
_gen2() { grep -q '"t":"metrics".*"generation":2' "$T/out"; }
wait_until 30 "a step of generation 2" _gen2
"$HUNTER" ctl lifejob stop || fail "ctl stop"
wait $run || fail "the run exited $?"
[ "$(jget "$T/out" summary state)" = stopped ] || fail "not stopped"

"$PY" - "$HUNTER_STATE_DIR/journal.jsonl" <<'PYEOF' || fail "the journal's history: see above"
import json, sys
hist = {}                       # -1: the job; 0, 1: its ranks
other = []
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o.get("t") != "event" or o.get("job") != "lifejob":
        continue
    if o["kind"] != "phase":
        other.append(o)
        continue
    assert o.get("from") and o.get("to") and o.get("reason"), o
    hist.setdefault(o["rank"], []).append((o["from"], o["to"], o["reason"],
                                           o.get("generation")))
for who in sorted(hist):
    print("%s:" % ("job" if who < 0 else "rank %d" % who))
    for f, t, why, gen in hist[who]:
        print("  g%s %-9s -> %-9s %s" % (gen, f, t, why[:90]))
assert sorted(hist) == [-1, 0, 1], sorted(hist)
for who, moves in hist.items():
    for (f0, t0, _, _), (f1, t1, _, _) in zip(moves, moves[1:]):
        assert t0 == f1, "%s: %s -> %s, then %s -> %s" % (who, f0, t0, f1, t1)
job = [(f, t) for f, t, _, _ in hist[-1]]
assert job[0] == ("queued", "placing"), job
assert job[-2:] == [("running", "stopping"), ("stopping", "stopped")], job
assert job.count(("running", "reforming")) == 2, job
assert job.count(("reforming", "placing")) == 2, job
reform = [why for f, t, why, _ in hist[-1] if t == "reforming"]
assert reform[0].startswith("migrated: rank 1"), reform
assert reform[1].startswith("failover: rank 1"), reform
r1 = [(f, t) for f, t, _, _ in hist[1]]
assert r1[0] == ("pending", "running"), r1
assert r1.count(("running", "failed")) == 1, r1
assert [g for f, t, _, g in hist[1] if t == "failed"] == [1], hist[1]
assert all(m[-1][1] == "exited" for m in hist.values() if m is not hist[-1]), hist
assert other and all("job_phase" in o for o in other), [o for o in other if "job_phase" not in o][:2]
print("%d job moves, %d and %d rank moves; %d other events name the phase" % (
      len(hist[-1]), len(hist[0]), len(hist[1]), len(other)))
PYEOF
pass "the phase history of the job and each rank, from the journal alone"
