#!/bin/sh
# SSH nodes, check 3: kill -9 the sshd processes serving one node's link
# mid-run.  The node's agent daemon and its rank keep training (same agent
# pid, the rank's step keeps advancing); the backend says it lost the link
# and is reconnecting, reconnects over a new SSH session (metrics from
# that node again, past the step at the kill), and the job finishes.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/integration/sshd.sh"
sshd_start
known_hosts_trust
ssh_cluster "$T/cluster.yaml" n0 n1
mkdata "$T/data" 4000 200
small_job "$T/j.yaml" sshlink "$T/data" 'policy: {failover: {heartbeat_timeout: 30s}}'
sed -i 's/ranks: 1}/ranks: 2, placement: spread}/; s/epochs: 2/epochs: 4/; s/micro: 32/micro: 16/' "$T/j.yaml"
"$HUNTER" run --json --inject slow-data=20 --cluster "$T/cluster.yaml" "$T/j.yaml" > "$T/out" 2>&1 &
runpid=$!
cleanup_hooks="kill -9 $runpid 2>/dev/null || true; $cleanup_hooks"
# Two metrics from n1's rank: it is running and reporting over SSH.
n1_metrics() { grep '"t":"metrics"' "$T/out" | grep '"job":"sshlink"' | grep -c '"node":"n1"' || true; }
n1_busy() { [ "$(n1_metrics)" -ge 2 ]; }
poll_until 15 n1_busy || { cat "$T/out"; fail "no metrics from n1"; }
agent=$(cat "$T/n1/agent.pid")
session=$(sshd_session_of n1) || fail "no sshd session runs n1's agent --stdio"
[ "$session" != "$SSHD_PID" ] || fail "found the sshd master, not a session"
step_at_kill=$(grep '"t":"metrics"' "$T/out" | grep '"job":"sshlink"' | grep '"node":"n1"' | tail -n 1 |
	sed 's/.*"step":\([0-9]*\).*/\1/')
kills=$(pgrep -P "$session" || true)
kill -9 "$session" $kills
echo "killed sshd session $session (and $kills) serving n1 at step $step_at_kill"
set +e
wait $runpid
rc=$?
set -e
[ "$rc" = 0 ] || { tail -n 20 "$T/out"; fail "hunter run exited $rc"; }
kill -0 "$agent" 2>/dev/null || fail "n1's agent died with its SSH session"
[ "$(cat "$T/n1/agent.pid")" = "$agent" ] || fail "n1's agent was restarted"
"$PY" - "$T/out" "$step_at_kill" <<'PYEOF' || fail "see above"
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
killed = int(sys.argv[2])
lost = [i for i, o in enumerate(objs) if o["t"] == "event" and
        "lost the link to the agent of n1" in o.get("reason", "") and
        "reconnecting" in o.get("reason", "")]
assert lost, "no 'lost the link ... reconnecting' event for n1"
after = [o for o in objs[lost[0]:] if o["t"] == "metrics" and
         o.get("node") == "n1" and o.get("job") == "sshlink"]
summary = [o for o in objs if o["t"] == "summary"][-1]
moved = [o for o in objs if o["t"] == "event" and o["kind"] in ("failover", "migrated", "restarted")
         and o.get("rank") is not None and o.get("rank", -1) >= 0]
print("lost the link at line %d; %d metrics from n1 after it, steps %s..%s; state %s" % (
    lost[0], len(after), after[:1] and after[0].get("step"), after[-1:] and after[-1].get("step"),
    summary["state"]))
steps = sorted({o["step"] for o in after})
assert len(steps) >= 2 and steps[-1] > killed, "no live metrics from n1 past the kill: %s" % steps
assert not moved, "a rank was moved or restarted: %s" % moved
assert summary["state"] == "finished", summary
PYEOF
pass "the job outlived n1's SSH session and the backend reconnected"
