#!/bin/sh
# Scheduler check 6: one node's agent reports another version; the launch
# is refused, naming the nodes and their versions, and nothing runs.
. "$SRCDIR/tests/integration/lib.sh"
mkdata "$T/data" 1000 64
small_job "$T/j.yaml" vjob "$T/data"
HUNTER_FAKE_VERSION=9.9.9-other "$HUNTER" agent --node local1 \
	--dir "$HUNTER_STATE_DIR/nodes/local1" --idle-exit 60
set +e
"$HUNTER" run --json "$T/j.yaml" > "$T/out" 2> "$T/err"
rc=$?
set -e
cat "$T/err"
[ "$rc" = 1 ] || fail "launch exited $rc, expected 1"
grep -q "version mismatch" "$T/err" || fail "no mismatch message"
grep -q "local1 runs hunter 9.9.9-other" "$T/err" || fail "the odd node is not named with its version"
grep -q "0.1.0" "$T/err" || fail "the other version is not named"
grep -q '"kind":"refused"' "$T/out" || fail "no refused event"
! grep -q '"t":"metrics"' "$T/out" || fail "something ran"
pass "launch refused on a version mismatch"
