#!/bin/sh
# Console check 2: `p` pauses the selected job: the job screen says
# paused and the step stays put for 3 s; `p` again resumes and the step
# moves on.  Skips (77) while the backend refuses "pause".
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/tui/tui-lib.sh"
tui_job "$T/j.yaml" pausejob
tui_start "\"$HUNTER\" \"$T/j.yaml\""
need 'pausejob +running' 20 "the job is not running"
keys 3
need ' epoch [0-9]+/[0-9]+ +step [0-9]+' 20 "no step on the job screen"
step_advances 20 || { screen; fail "the step does not move before the pause"; }
keys p
if ! screen_wait 'paused +epoch' 20; then
	cp "$T/screen" "$T/job-screen"
	skip_if_refused pause
	cat "$T/job-screen"
	fail "the job did not pause"
fi
sleep 1		# the pause event is sent at the step boundary itself
s0=$(job_step)
sleep 3
s1=$(job_step)
[ -n "$s0" ] && [ "$s0" = "$s1" ] || { screen; fail "paused, yet the step moved ($s0 -> $s1)"; }
grep -qE '^│ +[01] local[0-9] +paused' "$T/screen" || screen | grep -qE '^│ +[01] local[0-9] +paused' ||
	{ screen; fail "the ranks table does not say paused"; }
keys p
need 'running +epoch' 20 "the job did not resume"
step_advances 20 || { screen; fail "the step did not move after resume"; }
pass "paused at step $s0 for 3 s, resumed and advancing"
