#!/bin/sh
# A device: cuda job on the embedded cluster (CPU slots only) is refused
# at placement with a reason naming cuda slots, and nothing runs.
. "$SRCDIR/tests/integration/lib.sh"
mkdata "$T/data" 200 32
small_job "$T/j.yaml" gjob "$T/data"
sed -i 's/resources: {ranks: 1}/resources: {ranks: 1, device: cuda}/' "$T/j.yaml"
grep -q 'device: cuda' "$T/j.yaml" || fail "the job is not a cuda job"
set +e
"$HUNTER" run --json "$T/j.yaml" > "$T/out" 2> "$T/err"
rc=$?
set -e
cat "$T/err"
[ "$rc" = 1 ] || fail "launch exited $rc, expected 1"
grep -q "needs 1 cuda slots" "$T/err" || fail "the reason does not name cuda slots"
grep -q "has 0 free" "$T/err" || fail "the reason does not say none are free"
grep -q '"kind":"refused"' "$T/out" || fail "no refused event"
! grep -q '"t":"metrics","scope":"rank"' "$T/out" || fail "a rank ran"
pass "cuda job refused on a cluster without cuda slots"
