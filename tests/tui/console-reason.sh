#!/bin/sh
# Issue 21, check 4, in the console: a node's agent (fakeagent.py) sends
# an error frame whose reason is 4,000 bytes of three-byte characters
# (the backend used to cut it inside a character and die of SIGSEGV in
# journal_append).  The console stays up, its overview's events show the
# reason, cut on a character boundary (only whole euro signs before the
# cut, no replacement mark), and the job on that node runs to the end.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/tui/tui-lib.sh"
. "$SRCDIR/tests/integration/reason-lib.sh"
long_reason_setup
tui_start "\"$HUNTER\" --cluster \"$T/cluster.yaml\" \"$T/j.yaml\""
need 'longreason' 20 "the job is not in the job table"
keys 1
need 'node bad: €€€' 20 "the reason is not in the overview's events"
exited && { cat "$T/screen"; fail "the console exited"; }
# The reason's line: euro signs to the edge of the panel, nothing else.
line=$(grep -m1 'node bad: €' "$T/screen")
rest=${line#*node bad: }
rest=${rest%│}
printf '%s\n' "$rest" | grep -qE '^(€)+(…)? *$' ||
	{ printf '%s\n' "$line"; fail "the reason is not whole euro signs: '$rest'"; }
printf '%s' "$rest" | LC_ALL=C grep -q "$(printf '\357\277\275')" &&
	fail "a replacement character on the screen"
need 'longreason +finished' 30 "the job did not finish"
exited && { cat "$T/screen"; fail "the console exited"; }
n=$(printf '%s' "$rest" | tr -cd '€' | wc -c)
pass "the console shows the reason cut on a character boundary ($((n / 3)) euro signs in its cell) and the job finished"
