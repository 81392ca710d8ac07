#!/bin/sh
# Issue 21: the journal rotates.  With a 3 KB limit (HUNTER_JOURNAL_MAX_BYTES,
# for tests) a 2-rank job's events fill the journal several times over:
# it becomes journal.jsonl.1 and a new file starts with the live job's
# launch record, so after a kill -9 of the backend `hunter run --attach`
# still finds the job and follows it to its summary (before, the journal
# grew without bound and was never rotated).
. "$SRCDIR/tests/integration/lib.sh"
J="$HUNTER_STATE_DIR/journal.jsonl"
mkdata "$T/data" 3000 100
small_job "$T/j.yaml" rotjob "$T/data" 'policy: {failover: {heartbeat_timeout: 5s}}'
sed -i 's/ranks: 1/ranks: 2/; s/epochs: 2/epochs: 6/; s/micro: 32/micro: 16/; s/every_steps: 0/every_steps: 10/' "$T/j.yaml"
HUNTER_JOURNAL_MAX_BYTES=3000 "$HUNTER" run --json --inject slow-data=10 \
	"$T/j.yaml" > "$T/first" 2>&1 &
run=$!
cleanup_hooks="kill -9 $run 2>/dev/null || true"
_ready1() { [ -f "$J.1" ] && [ "$(grep -c '"kind":"checkpoint"' "$T/first")" -ge 8 ]; }
poll_until 30 _ready1 || true
[ -f "$J.1" ] || { ls -l "$HUNTER_STATE_DIR"; fail "the journal was never rotated"; }
kill -9 $run
wait $run 2>/dev/null || true
ls -l "$J" "$J.1"
[ "$(stat -c %s "$J.1")" -lt 20000 ] || fail "journal.jsonl.1 grew past its limit"
grep -q '"t":"job","job":"rotjob"' "$J" || { cat "$J"; fail "the new journal lacks the live job's record"; }
rc=0
timeout 120 "$HUNTER" run --attach --json > "$T/second" 2>&1 || rc=$?
[ $rc -eq 0 ] || { tail -n 5 "$T/second"; fail "attach exited $rc"; }
[ "$(jget "$T/second" summary state)" = finished ] ||
	{ tail -n 5 "$T/second"; fail "the attached job did not finish"; }
pass "the journal rotates at its limit and a re-attach still finds the job"
