#!/bin/sh
# The tests' own waits can fail.  A poll that runs out its deadline and
# carries on lets a test pass on what it never saw, so every wait in a
# test script goes through the helpers of tests/integration/lib.sh
# (poll_until, wait_until, wait_for) or tests/tui/tui-lib.sh
# (screen_wait, need, step_advances), whose deadlines are checked here:
#
#  1. no test script polls by hand: a for, while or until loop that
#     sleeps is allowed only in the helper files (lib.sh, sshd.sh,
#     *-lib.sh), where the cleanup waits (stop the agents, at most so
#     long) live too;
#  2. wait_until and wait_for fail the test (exit 1, naming what was
#     awaited) at their deadline, no sooner and not much later;
#     poll_until returns 1; the fault matrix's fail (faults-lib.sh) does
#     the same through wait_for; and each returns at once on success.
set -eu
: "${SRCDIR:?SRCDIR must point at the source tree}"
cd "$SRCDIR"
bad=$(find tests -name '*.sh' ! -name lib.sh ! -name sshd.sh ! -name '*-lib.sh' |
	sort | xargs awk '
	FNR == 1 { depth = 0; hd = "" }
	hd != "" { t = $0; sub(/^\t+/, "", t); if (t == hd) hd = ""; next }
	{
		line = $0
		sub(/^[ \t]*#.*/, "", line)
		gsub(/"[^"]*"/, "\"\"", line)
		gsub(/\047[^\047]*\047/, "\"\"", line)
	}
	line ~ /<</ {		# a here-document: its body is not shell
		hd = $0
		sub(/.*<<-?[ \t]*/, "", hd)
		gsub(/["\\\047]/, "", hd)
		sub(/[^A-Za-z0-9_].*/, "", hd)
	}
	line ~ /(^|[;&|(][ \t]*|^[ \t]*)(for|while|until)[ \t]/ {
		if (depth == 0) { start = FNR; body = "" }
		depth++
	}
	depth > 0 { body = body line "\n" }
	depth > 0 && line ~ /(^|[;&|][ \t]*|^[ \t]*)done([ \t;)|]|$)/ {
		if (--depth == 0 && body ~ /(^|[^a-z_.])sleep[ \t]/)
			printf "%s:%d: a loop that sleeps: use poll_until, wait_until or wait_for\n", FILENAME, start
	}')
if [ -n "$bad" ]; then
	echo "$bad"
	echo "FAIL: hand-written polls in the tests (their deadlines pass unnoticed)"
	exit 1
fi
echo "ok: no test script polls by hand"

# The helpers, in a throwaway test of their own (lib.sh's trap cleans up).
HUNTER=/bin/false
export HUNTER
probe() {	# probe NAME SCRIPT: run SCRIPT after the libraries; its rc and time
	cat > "$tmp/$1.sh" <<PROBE
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/faults/faults-lib.sh"
echo present > "\$T/file"
$2
echo "carried on"
PROBE
	t0=$(date +%s%N)
	rc=0
	sh "$tmp/$1.sh" > "$tmp/$1.out" 2>&1 || rc=$?
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	echo "$1: exit $rc after $ms ms: $(grep -v '^---' "$tmp/$1.out" | tr '\n' ' ' | cut -c1-160)"
}
tmp=$(mktemp -d /tmp/hunter-waits.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
expect() {	# expect NAME RC MIN_MS MAX_MS [TEXT]
	grep -q "carried on" "$tmp/$1.out" && [ "$2" != 0 ] &&
		{ echo "FAIL: $1 carried on past its deadline"; fails=1; return; }
	[ "$rc" = "$2" ] || { echo "FAIL: $1 exited $rc, expected $2"; fails=1; return; }
	[ "$ms" -ge "$3" ] && [ "$ms" -le "$4" ] ||
		{ echo "FAIL: $1 took $ms ms, expected $3..$4"; fails=1; return; }
	[ -z "${5:-}" ] || grep -q "$5" "$tmp/$1.out" ||
		{ echo "FAIL: $1 did not say '$5'"; fails=1; }
}
# The upper bounds only catch a wait that does not end: 10 s over.
probe until-false 'wait_until 2 "the sky to fall" false'
expect until-false 1 1900 12000 "FAIL: the sky to fall"
probe until-true 'wait_until 2 "a file" test -f "$T/file"'
expect until-true 0 0 10000
probe for-missing 'wait_for "$T/file" absent 2'
expect for-missing 1 1900 12000 "FAIL: no 'absent' in"
probe for-nofile 'wait_for "$T/nofile" present 1'
expect for-nofile 1 900 11000 "FAIL: no 'present' in"
probe for-found 'wait_for "$T/file" present'
expect for-found 0 0 10000
probe poll-false 'poll_until 1 false && echo "said yes"; echo "poll said $?"'
expect poll-false 0 900 11000 "poll said 1"
grep -q "said yes" "$tmp/poll-false.out" && { echo "FAIL: poll_until said yes to false"; fails=1; }
[ $fails = 0 ] || exit 1
echo "ok: every wait helper fails at its deadline"
