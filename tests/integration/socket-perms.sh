#!/bin/sh
# Issue 3, check 6: the agent's and the console's sockets are 0600 inside
# 0700 directories, and another (non-root) user cannot connect to them.
. "$SRCDIR/tests/integration/lib.sh"
[ "$(id -u)" = 0 ] || { echo "skip: needs root to switch users"; exit 77; }
command -v setpriv > /dev/null || { echo "skip: no setpriv"; exit 77; }
mkdata "$T/data" 2000 64
small_job "$T/j.yaml" perms "$T/data"
sed -i 's/epochs: 2/epochs: 6/' "$T/j.yaml"
"$HUNTER" run --json --inject slow-data=3 "$T/j.yaml" > "$T/out" 2>&1 &
runpid=$!
cleanup_hooks="kill $runpid 2>/dev/null || true; wait $runpid 2>/dev/null || true"
socks() {
	[ -S "$HUNTER_STATE_DIR/console.sock" ] &&
		[ -S "$HUNTER_STATE_DIR/nodes/local0/agent.sock" ]
}
wait_until 15 "console.sock and local0's agent.sock" socks
chmod 755 "$T"	# let nobody reach the state dir's parent, to test the dir itself
for s in "$HUNTER_STATE_DIR/console.sock" "$HUNTER_STATE_DIR/nodes/local0/agent.sock"; do
	[ -S "$s" ] || fail "$s missing"
	[ "$(stat -c %a "$s")" = 600 ] || fail "$s is $(stat -c %a "$s")"
	[ "$(stat -c %a "$(dirname "$s")")" = 700 ] || fail "$(dirname "$s") is not 0700"
	if setpriv --reuid=65534 --regid=65534 --clear-groups "$PY" -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])' "$s" 2>"$T/err"; then
		fail "user nobody connected to $s"
	fi
	grep -q "Permission denied" "$T/err" || { cat "$T/err"; fail "unexpected error"; }
	echo "$s: 0600 in a 0700 dir; nobody gets: $(tail -n 1 "$T/err")"
done
pass "sockets are private"
