#!/bin/sh
# Console check 6: `q` with a job running asks first ("jobs keep
# running; run `hunter` to re-attach"), then detaches: the console exits,
# the job does not.  `hunter` with no job re-attaches to it from the
# journal, its ranks live on (no failover, no restart) and its step
# keeps advancing from where it was.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/tui/tui-lib.sh"
tui_job "$T/j.yaml" detachjob
tui_start "\"$HUNTER\" \"$T/j.yaml\""
need 'detachjob +running' 20 "the job is not running"
keys 3
need ' epoch [0-9]+/[0-9]+ +step [0-9]+' 20 "no step"
step_advances 20 || fail "the step does not move"
keys q
need 'jobs keep running; run `hunter` to re-attach' 5 "q did not ask first"
exited && fail "q quit without asking"
keys n
sleep 0.5
screen | grep -q 'jobs keep running' && fail "n did not dismiss the question"
exited && fail "n quit anyway"
keys q
need 'jobs keep running; run `hunter` to re-attach' 5 "q did not ask again"
before=$(job_step)
keys y
need 'detached; 1 job keeps running; run `hunter` to re-attach' 10 "no parting message"
need '^\[exit 0\]$' 5 "the console did not exit 0 after y"
sleep 2
tui_respawn "\"$HUNTER\""
need 're-attached to detachjob' 20 "hunter did not re-attach"
keys 3
need 'job detachjob' 10 "the job screen does not show the job"
need 'running +epoch' 20 "the job is not running after re-attach"
step_advances 20 || { screen; fail "the step does not advance after re-attach"; }
after=$(job_step)
[ "$after" -gt "$before" ] || fail "step $after after re-attach, $before before"
# the ranks lived through it: no failover, no restart from scratch
keys 4
need 'detachjob' 5 "no logs screen"
if grep -E 'failover|failed|killed' "$T/screen"; then
	fail "the job was restarted after the re-attach"
fi
# The re-attach line is in the job's log, however many epoch lines came
# after it: the search (/) keeps only the lines that match.
keys /
sleep 0.3
tm send-keys -t t -l 're-attached'
keys Enter
need 're-attached to detachjob' 5 "no re-attach line in the job's log"
pass "detached at step $before after confirming; re-attached, step $after"
