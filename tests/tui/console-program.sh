#!/bin/sh
# Program check 1, on the console: the PyTorch example as a program job
# (2 ranks, Gloo): the job screen shows the program it runs and, for each
# rank, its step, loss and samples/s from the program's own metrics and
# its own numbers (batch_acc); the logs screen shows what a rank printed.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/tui/tui-lib.sh"
. "$SRCDIR/tests/integration/program-lib.sh"
need_torch
mkdata "$T/data" 4000 300
torch_job "$T/j.yaml" tuiprog '--epochs, "200", --data, '"$T/data"
tui_start "\"$HUNTER\" \"$T/j.yaml\""
need 'tuiprog +running' 30 "the job is not in the job table"
keys 3
need 'program: .*torch_fmnist.py --epochs 200' 10 "no program line"
for r in 0 1; do
	need "^│ +$r +local[0-9] +running +[0-9]+ +[0-9]+\.[0-9]{4} +[0-9.]+ +[0-9.]+[kM]? .*batch_acc [0-9.]+" 90 \
	    "rank $r has no step, loss, samples/s and batch_acc"
done
grep -E '^│ +0 +local' "$T/screen" | head -n 1
keys 4
need 'epoch [0-9]+/200 +step [0-9]+ +loss' 60 "the rank's output is not on the logs screen"
pass "the job screen shows both ranks' own metrics; the logs screen their output"
