#!/bin/sh
# Program check 4: a shell program that never speaks the protocol.  A
# checkpoint reaches it as SIGUSR1, a pause as SIGSTOP of its process
# group (the event warns of peers' timeouts) and a resume as SIGCONT, a
# stop as SIGTERM, which it ignores, then SIGKILL once stop_grace (2 s)
# is over; its output reaches the stream as log lines, sanitized, and
# stays in the rank's log file.  The agent beats for it meanwhile.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/integration/program-lib.sh"
cat > "$T/plain.sh" <<'EOF2'
trap 'echo "got USR1: checkpoint"' USR1
trap 'echo "got TERM at $(date +%s.%N): ignoring it"' TERM
printf 'plain \033[31mred\033[0m \033]0;title\007 output\n'
i=0
while :; do i=$((i + 1)); echo "tick $i" > tick; sleep 0.1; done
EOF2
cat > "$T/plain.yaml" <<'EOF2'
name: plain
resources: {ranks: 1}
program:
  argv: [sh, plain.sh]
  stop_grace: 2s
policy: {failover: {heartbeat_timeout: 3s}}
EOF2
( cd "$T" && timeout 60 "$HUNTER" run --json plain.yaml > out 2>&1 ) &
run=$!
cleanup_hooks="kill $run 2>/dev/null || true"
jwait "$T/out" 20 'any(x["t"] == "log" and "output" in x["line"] for x in o)'
"$HUNTER" ctl plain checkpoint || fail "ctl checkpoint"
jwait "$T/out" 10 'any(x["t"] == "log" and x["line"] == "got USR1: checkpoint" for x in o)'
"$HUNTER" ctl plain pause || fail "ctl pause"
jwait "$T/out" 10 'any(x["kind"] == "paused" and "SIGSTOP" in x["reason"] and "timeouts may fire" in x["reason"] for x in ev)'
sleep 0.5
t0=$(cat "$T/tick")
sleep 4		# past the heartbeat timeout: the agent's beats say paused
t1=$(cat "$T/tick")
[ "$t0" = "$t1" ] || fail "it ran while held: $t0 -> $t1"
"$HUNTER" ctl plain resume || fail "ctl resume"
jwait "$T/out" 10 'any(x["kind"] == "resumed" and "SIGCONT" in x["reason"] for x in ev)'
sleep 0.5
[ "$(cat "$T/tick")" != "$t1" ] || fail "it did not go on after SIGCONT"
ts=$(date +%s.%N)
"$HUNTER" ctl plain stop || fail "ctl stop"
wait $run || fail "hunter run exited $?"
"$PY" - "$T/out" "$ts" <<'PYEOF' || fail "see above"
import json, sys
o = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
logs = [x["line"] for x in o if x["t"] == "log"]
ev = [x for x in o if x["t"] == "event"]
s = [x for x in o if x["t"] == "summary"][-1]
term = [l for l in logs if l.startswith("got TERM")][0]
stopped = [x for x in ev if x["kind"] == "stopped"][0]
print("log: %s" % logs[0])
print("%s, %.1f s after the stop" % (term, float(term.split()[3][:-1]) - float(sys.argv[2])))
print("then, %.1f s after the stop: %s" % (stopped["ts"] - float(sys.argv[2]),
      stopped["reason"]))
assert stopped["ts"] - float(sys.argv[2]) >= 1.9
assert logs[0] == "plain ?[31mred?[0m ?]0;title? output", logs[0]
assert "killed by signal 9" in stopped["reason"] and "program.stop_grace" in stopped["reason"]
assert not any(x["kind"] in ("failover", "failed") for x in ev)
assert s["state"] == "stopped", s
PYEOF
grep -q "got USR1: checkpoint" "$HUNTER_STATE_DIR"/nodes/*/plain.rank0.log ||
	fail "the output is not in the rank's log file"
pass "SIGUSR1, SIGSTOP/SIGCONT, SIGTERM then SIGKILL after 2 s; output sanitized"
