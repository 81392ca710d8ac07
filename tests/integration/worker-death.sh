#!/bin/sh
# Issue 3, check 4: kill -9 one worker.  The other rank gets an error
# rather than hanging (the failover comes, and soon), the agent reports the
# exit with signal 9, and the backend marks the rank failed with an event.
# Then (the scheduler's part) it fails over and the job finishes.
. "$SRCDIR/tests/integration/lib.sh"
mkdata "$T/data" 6000 200
small_job "$T/j.yaml" wdeath "$T/data" 'policy: {failover: {heartbeat_timeout: 4s}}'
sed -i 's/ranks: 1/ranks: 2/; s/epochs: 2/epochs: 30/; s/micro: 32/micro: 16/; s/every_steps: 0/every_steps: 100/' "$T/j.yaml"
# slow=5 (the first launch only): 5 ms a step at least, so the 5600
# steps outlast the kill; over shared memory the job runs in 0.6 s.
"$HUNTER" run --json --inject slow=5 "$T/j.yaml" > "$T/out" 2>&1 &
runpid=$!
cleanup_hooks="kill -9 $runpid 2>/dev/null || true"
pid=""
rank1_pid() {
	pid=$(grep '"t":"metrics"' "$T/out" | grep '"rank":1,' | head -n 1 |
		sed 's/.*"pid":\([0-9]*\).*/\1/')
	[ -n "$pid" ]
}
poll_until 10 rank1_pid || { cat "$T/out"; fail "no metrics from rank 1"; }
t0=$(date +%s.%N)
kill -9 "$pid"
# The failover event comes once every rank of the old group has exited,
# so its arrival bounds the time rank 0 took to see the error.  A rank 0
# that hangs on its dead peer never lets it come: 15 s is the deadline of
# that (the latency itself is a timing, printed, not held to a figure).
poll_until 15 grep -q '"kind":"failover".*generation 1' "$T/out" ||
	{ tail -n 20 "$T/out"; fail "no failover within 15 s of the kill"; }
t1=$(date +%s.%N)
set +e
wait $runpid
rc=$?
set -e
[ "$rc" = 0 ] || { tail -n 20 "$T/out"; fail "hunter run exited $rc"; }
"$PY" - "$T/out" "$t0" "$t1" <<'PYEOF' || fail "see above"
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
secs = float(sys.argv[3]) - float(sys.argv[2])
ev = [o for o in objs if o["t"] == "event"]
sig = [o for o in ev if o["kind"] == "failed" and o["rank"] == 1 and "signal 9" in o["reason"]]
peer = [o for o in ev if o["kind"] == "failed" and o["rank"] == 0]
fo = [o for o in ev if o["kind"] == "failover" and "generation 1" in o["reason"]]
summary = [o for o in objs if o["t"] == "summary"][-1]
print("rank 1: %s" % (sig[0]["reason"] if sig else None))
print("rank 0: %s" % (peer[0]["reason"] if peer else None))
print("failover %.1f s after the kill (timeout 4 s): %s" % (secs, fo[0]["reason"] if fo else None))
print("job %s at step %s" % (summary["state"], summary.get("steps")))
assert sig, "no event with signal 9 for rank 1"
assert peer, "rank 0 did not report the error"
assert fo, "no failover"
assert summary["state"] == "finished"
PYEOF
grep -q "rank 1 (pid $pid) killed by signal 9" "$HUNTER_STATE_DIR"/nodes/*/agent.log ||
	fail "the agent log does not show the signal"
pass "a dead peer is an error, not a hang; the job failed over and finished"
