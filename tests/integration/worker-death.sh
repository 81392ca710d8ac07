#!/bin/sh
# Issue 3, check 4: kill -9 one worker.  The other rank gets an error
# within the configured timeout rather than hanging, the agent reports the
# exit with signal 9, and the backend marks the rank failed with an event.
. "$SRCDIR/tests/integration/lib.sh"
mkdata "$T/data" 6000 200
small_job "$T/j.yaml" wdeath "$T/data" 'policy: {failover: {heartbeat_timeout: 4s}}'
sed -i 's/ranks: 1/ranks: 2/; s/epochs: 2/epochs: 30/; s/micro: 32/micro: 16/' "$T/j.yaml"
"$HUNTER" run --json "$T/j.yaml" > "$T/out" 2>&1 &
runpid=$!
cleanup_hooks="kill -9 $runpid 2>/dev/null || true"
pid=""
for i in $(seq 100); do
	pid=$(grep '"t":"metrics"' "$T/out" | grep '"rank":1,' | head -n 1 |
		sed 's/.*"pid":\([0-9]*\).*/\1/')
	[ -n "$pid" ] && break
	sleep 0.1
done
[ -n "$pid" ] || { cat "$T/out"; fail "no metrics from rank 1"; }
t0=$(date +%s.%N)
kill -9 "$pid"
set +e
for i in $(seq 150); do
	kill -0 $runpid 2>/dev/null || break
	sleep 0.1
done
wait $runpid
rc=$?
set -e
t1=$(date +%s.%N)
[ "$rc" = 1 ] || { cat "$T/out"; fail "hunter run exited $rc, expected 1 (failed)"; }
"$PY" - "$T/out" "$t0" "$t1" <<'PYEOF' || fail "see above"
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
secs = float(sys.argv[3]) - float(sys.argv[2])
ev = [o for o in objs if o["t"] == "event"]
sig = [o for o in ev if o["kind"] == "failed" and o["rank"] == 1 and "signal 9" in o["reason"]]
peer = [o for o in ev if o["kind"] == "failed" and o["rank"] == 0]
summary = [o for o in objs if o["t"] == "summary"][-1]
print("rank 1: %s" % (sig[0]["reason"] if sig else None))
print("rank 0: %s" % (peer[0]["reason"] if peer else None))
print("job %s %.1f s after the kill (timeout 4 s)" % (summary["state"], secs))
assert sig, "no event with signal 9 for rank 1"
assert peer, "rank 0 did not report the error"
assert summary["state"] == "failed"
assert secs < 4 + 3, "took %.1f s" % secs
PYEOF
grep -q "rank 1 (pid $pid) killed by signal 9" "$HUNTER_STATE_DIR"/nodes/*/agent.log ||
	fail "the agent log does not show the signal"
pass "a dead peer is an error, not a hang"
