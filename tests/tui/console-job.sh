#!/bin/sh
# Console check 1: `hunter JOB.yaml` opens the console with the job
# submitted; the job table shows it running, the job screen's step
# advances between captures, and the loss chart is drawn (braille dots
# under "loss per step").
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/tui/tui-lib.sh"
tui_job "$T/j.yaml" tuijob
tui_start "\"$HUNTER\" \"$T/j.yaml\""
need 'tuijob +running' 20 "the job is not in the job table"
need 'cluster local' 5 "no header"
keys 3
need ' epoch [0-9]+/1000 +step [0-9]+' 20 "no step on the job screen"
s0=$(job_step)
step_advances 20 || { screen; fail "the step did not advance in 20 s (from $s0)"; }
s1=$(job_step)
# braille: U+2800..U+28FF is e2 a0..a3 xx in UTF-8
braille=$(printf '\342[\240\241\242\243]')
need 'loss per step' 5 "no loss chart"
chart_drawn() { screen | sed -n '/loss per step/,/ranks/p' | LC_ALL=C grep -q "$braille"; }
poll_until 15 chart_drawn || { screen; fail "the loss chart stayed empty"; }
need 'loss per epoch' 1 "no epoch chart"
need 'micro-batch 4 . accum 4' 10 "no autotune line"
pass "console shows tuijob running, step $s0 -> $s1, loss chart drawn"
