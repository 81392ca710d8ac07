#!/bin/sh
# Console check 5: untrusted text cannot drive the terminal.  A job file
# whose path holds ESC ] 0;pwned BEL (set the window title) and ESC [ 2 J
# (clear the screen) fails validation; the console shows the
# file:line:col error with those sequences stripped: the pane's title is
# unchanged, nothing of "pwned" or "^[" is drawn, and the screen was not
# cleared.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/tui/tui-lib.sh"
d="$T/$(printf '\033]0;pwned\007')x$(printf '\033[2J')"
mkdir -p "$d"
printf 'name: evil\nresuorces: {ranks: 1}\n' > "$d/bad.yaml"
printf '%s' "$d/bad.yaml" > "$T/path"
tui_start "\"$HUNTER\" \"\$(cat \"$T/path\")\""
need '^ hunter .*cluster local' 20 "the console did not start"
title0=$(tm display -p -t t '#{pane_title}')
need "/x/bad\.yaml:2:1: unknown key 'resuorces'" 10 "no error for the bad job file"
sleep 1
screen > "$T/screen"
grep -q 'pwned' "$T/screen" && { cat "$T/screen"; fail "the OSC payload was drawn"; }
grep -q '\^\[' "$T/screen" && { cat "$T/screen"; fail "an escape was drawn as ^["; }
head -n 1 "$T/screen" | grep -q '^ hunter' || { cat "$T/screen"; fail "the header is gone"; }
grep -q '─ events ' "$T/screen" || fail "the event pane is gone"
title1=$(tm display -p -t t '#{pane_title}')
[ "$title1" = "$title0" ] && [ "$title1" != pwned ] ||
	fail "the pane title changed: '$title0' -> '$title1'"
# the raw bytes never reached the pane: tmux would have set the title
tm capture-pane -p -e -t t | grep -q "$(printf '\033')\]0;" && fail "an OSC reached the pane"
pass "the hostile path was drawn as $(grep -o '[^ ]*/x/bad.yaml:2:1' "$T/screen" | head -n 1 | sed 's|.*/x/|.../x/|')"
