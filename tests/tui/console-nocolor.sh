#!/bin/sh
# Console check 7: NO_COLOR.  Without it, capture-pane -e shows colour
# escapes (so this check can see them); with NO_COLOR=1 no screen has a
# single SGR colour parameter (30-37, 40-47, 90-97, 100-107, 38/48
# extended; 39 and 49, back to the default, are tmux's own resets).
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/tui/tui-lib.sh"
colours() {
	tm capture-pane -p -e -t t | "$PY" -c '
import re, sys
n = 0
for m in re.finditer(r"\x1b\[([0-9;:]*)m", sys.stdin.read()):
    for p in re.split("[;:]", m.group(1)):
        if p and int(p) not in (39, 49) and (30 <= int(p) <= 48 or
                                            90 <= int(p) <= 107):
            n += 1
print(n)'
}
tui_start "\"$HUNTER\" --simulate 32"
need 'sim-train +running' 20 "the console did not start"
n=$(colours)
[ "$n" -gt 0 ] || fail "no colour escapes even without NO_COLOR"
echo "with colour: $n colour parameters on the overview"
tui_respawn "env NO_COLOR=1 \"$HUNTER\" --simulate 32"
need 'sim-train +running' 20 "the console did not restart"
for s in 1:'─ events ' 2:'sim0000 r01 up' 3:'loss per step' 4:'─ log: ' 5:'theme default, no colour'; do
	keys "${s%%:*}"
	need "${s#*:}" 10 "screen ${s%%:*} did not draw"
	sleep 0.3
	n=$(colours)
	[ "$n" = 0 ] || { tm capture-pane -p -e -t t | cat -v | head -5; fail "screen ${s%%:*}: $n colour escapes under NO_COLOR"; }
done
pass "colour escapes without NO_COLOR, none on any screen with NO_COLOR=1"
