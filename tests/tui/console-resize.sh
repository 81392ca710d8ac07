#!/bin/sh
# Console check 4: resizing.  At 80x24 every screen still draws (the
# overview's job table with all its columns and whole names); at
# 60x20 the console says the terminal is too small and what it needs;
# back at 120x40 the full view returns, and the console never died.
# Runs on the simulated cluster (no agents needed).
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/tui/tui-lib.sh"
tui_start "\"$HUNTER\" --simulate 64"
need 'sim-train +running' 20 "the console did not start"
tm resize-window -t t -x 80 -y 24
need '^ hunter .*cluster sim' 10 "no header at 80x24"
[ "$(screen | wc -l)" = 24 ] || fail "the pane is not 24 lines"
# The job table keeps every column and the job's whole name at 80.
need 'job +state +ranks +epoch +step +loss +samples/s +acc +goodput' 5 \
	"the job table lost a column at 80x24"
need 'sim-train +running' 5 "the job's name is cut at 80x24"
for s in 1:'─ jobs ' 2:'sim0000 r01 up' 3:'─ ranks ' 4:'─ log: sim-train' 5:'─ help '; do
	keys "${s%%:*}"
	need "${s#*:}" 10 "screen ${s%%:*} does not draw at 80x24"
done
keys 1
tm resize-window -t t -x 60 -y 20
need 'terminal too small \(60×20, need 80×24\)' 10 "no too-small message"
tm resize-window -t t -x 120 -y 40
need '─ events ' 10 "the full view did not come back"
need 'sim-train +running' 5 "no job table after the resize"
grep -q 'too small' "$T/screen" && fail "the too-small message stayed"
exited && fail "the console died"
pass "80x24 draws every screen, 60x20 says too small, 120x40 is whole again"
