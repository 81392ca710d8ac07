#!/bin/sh
# Console check (issue 21, check 5): a stalled agent never freezes the
# console.  The job is paused (so the requests below start nothing), the
# agent of rank 1's node is stopped with SIGSTOP, and 400 checkpoint
# commands are sent (hunter ctl): each goes to that agent as one frame,
# and some 280 fill its socket.  Before the links were queued the backend's loop
# then blocked in the write to that socket, holding the backend's lock,
# and the console drew nothing more and took no key.  Now the commands
# wait in the backend's queue for that node: the header's clock keeps
# moving, the keys switch screens, and after SIGCONT the agent gets every
# command and its node is still up.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/tui/tui-lib.sh"
tui_job "$T/j.yaml" stalljob
sed -i 's/ranks: 2/ranks: 2, placement: spread/' "$T/j.yaml"
echo 'policy: {failover: {heartbeat_timeout: 60s}}' >> "$T/j.yaml"
tui_start "\"$HUNTER\" \"$T/j.yaml\""
need 'stalljob +running' 30 "the job is not running"
keys 3
need ' epoch [0-9]+/[0-9]+ +step [0-9]+' 30 "no step on the job screen"
keys p
need 'paused +epoch' 30 "the job did not pause"
log=$(grep -l 'started stalljob rank 1 ' "$HUNTER_STATE_DIR"/nodes/*/agent.log | head -n 1)
[ -n "$log" ] || fail "no agent started rank 1"
apid=$(cat "$(dirname "$log")/agent.pid")
kill -STOP "$apid"
cleanup_hooks="kill -CONT $apid 2>/dev/null || true; $cleanup_hooks"
echo "stopped the agent of $(basename "$(dirname "$log")") (pid $apid)"
# clock: the header's HH:MM:SS, which only a redraw moves
clock() { screen | head -n 1 | grep -oE '[0-9]{2}:[0-9]{2}:[0-9]{2} *$' | tr -d ' '; }
# 400 checkpoint commands, each answered once the backend has sent it
# on (the answer waits while the backend's loop is blocked)
( for i in $(seq 400); do
	"$HUNTER" ctl stalljob checkpoint > /dev/null 2>&1 || exit 1
done; touch "$T/ctl.done" ) &
ctl=$!
cleanup_hooks="kill $ctl 2>/dev/null || true; $cleanup_hooks"
poll_until 60 test -f "$T/ctl.done" && echo "400 checkpoint commands sent" ||
	echo "the commands were not all answered in 60 s"
c0=$(clock)
sleep 3
c1=$(clock)
[ -n "$c0" ] && [ "$c0" != "$c1" ] || { screen; fail "the console stopped redrawing (clock $c0 -> $c1)"; }
keys 5
need '─ help ' 10 "the console does not answer keys (5: help)"
keys 3
need '─ ranks ' 10 "the console does not answer keys (3: job)"
[ -f "$T/ctl.done" ] || fail "the backend did not answer all 400 commands"
kill -CONT "$apid"
# the agent takes its backlog and its node stays up
sleep 2
keys 2
need 'local1 .* up ' 10 "the node of the stopped agent is not up after SIGCONT"
keys 3
need 'paused +epoch' 10 "the job screen lost the job"
exited && fail "the console died"
pass "with the agent stopped the clock moved ($c0 -> $c1) and keys switched screens"
