#!/bin/sh
# Console check 8: a broken theme file shows its file:line:col error and
# the console runs with the default theme (its header colour is on the
# screen).  Then `t` steps through every shipped theme, none with an
# error.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/tui/tui-lib.sh"
printf 'name: broken\nelements:\n  header: {fg: purpel}\n  nodes_hot: {fg: red}\n' > "$T/broken.yaml"
tui_start "\"$HUNTER\" --simulate 16 --theme ./broken.yaml"
need 'sim-train +running' 20 "the console did not start"
keys 1
need "broken\.yaml:3:16: unknown colour 'purpel'" 10 "no file:line:col for the colour"
need "broken\.yaml:4:3: unknown element 'nodes_hot' \(did you mean 'node_hot'\?\)" 2 "no error for the element"
# default's header: xterm colour 255 on 24
tm capture-pane -p -e -t t | head -n 1 | grep -q '48;5;24' || fail "the header is not default's"
keys 5
need '─ theme default ' 5 "not on the default theme"
for name in high-contrast light mono solarized-dark default; do
	keys t
	need "─ theme $name " 5 "t did not reach $name"
done
keys 1
sleep 0.5
screen | grep -E 'theme [^ ]*:[0-9]+:[0-9]+' | grep -v broken && fail "a shipped theme has errors"
# an 8-colour terminal: default's 256-colour numbers fall back to its
# fg8/bg8 (the header: white on blue), and no 38/48 escape is sent
TUI_TERM=screen tui_respawn "\"$HUNTER\" --simulate 16"
need 'sim-train +running' 20 "the console did not start on TERM=screen"
tm capture-pane -p -e -t t | "$PY" -c '
import re, sys
lines = sys.stdin.read().split("\n")
params = lambda text: [p for m in re.finditer(r"\x1b\[([0-9;:]*)m", text)
                       for p in re.split("[;:]", m.group(1)) if p]
header = params(lines[0])
assert "44" in header, "header not on blue: %s" % header
assert not {"38", "48"} & set(params("\n".join(lines))), "256-colour escapes"
' || fail "the 8-colour fallback is wrong"
pass "broken theme reported with file:line:col, default used, 5 themes load, 8-colour fallback"
