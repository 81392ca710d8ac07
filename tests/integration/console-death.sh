#!/bin/sh
# Issue 3, check 3: kill -9 the backend (hunter run) mid-run.  The agents
# and workers keep training; `hunter run --attach` finds the same job with
# its step still advancing and follows it to its summary.
. "$SRCDIR/tests/integration/lib.sh"
mkdata "$T/data" 6000 200
small_job "$T/j.yaml" deathjob "$T/data" 'policy: {failover: {heartbeat_timeout: 5s}}'
sed -i 's/ranks: 1/ranks: 2/; s/epochs: 2/epochs: 8/; s/micro: 32/micro: 16/' "$T/j.yaml"
"$HUNTER" run --json --inject slow-data=4 "$T/j.yaml" > "$T/first" 2>&1 &
runpid=$!
cleanup_hooks="kill -9 $runpid 2>/dev/null || true"
wait_for "$T/first" '"t":"metrics"' 10
kill -9 $runpid
wait $runpid 2>/dev/null || true
step_at_kill=$(grep '"t":"metrics"' "$T/first" | tail -n 1 | sed 's/.*"step":\([0-9]*\).*/\1/')
sleep 1.5
[ "$(test_workers | wc -l)" = 2 ] || fail "workers died with the console"
"$HUNTER" run --attach --json > "$T/second" 2>&1 || { rc=$?; cat "$T/second"; fail "attach exited $rc"; }
"$PY" - "$T/second" "$step_at_kill" <<'PYEOF' || fail "attach did not follow the job"
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
killed = int(sys.argv[2])
steps = [o["step"] for o in objs if o["t"] == "metrics" and o.get("job") == "deathjob"]
summary = [o for o in objs if o["t"] == "summary"]
print("step at kill %d; after attach: %d metrics, steps %s..%s; summary %s" %
      (killed, len(steps), steps[:1], steps[-1:], summary[-1]["state"] if summary else None))
assert any(o["t"] == "event" and o["kind"] == "restarted" and "re-attached" in o["reason"] for o in objs)
assert len(steps) >= 2 and max(steps) > min(steps) and max(steps) > killed, "step not advancing"
assert summary and summary[-1]["state"] == "finished" and summary[-1]["job"] == "deathjob"
PYEOF
pass "the job outlived its console and finished under a new one"
