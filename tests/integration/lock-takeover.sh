#!/bin/sh
# One backend per state directory: a second `hunter run` names the pid of
# the first; `--attach --takeover` makes the first detach (exit 3) and
# follows the job itself.  Then Ctrl-C (SIGINT) stops the job: every rank
# checkpoints at the same step, the summary says "stopped", exit 130.
. "$SRCDIR/tests/integration/lib.sh"
mkdata "$T/data" 4000 64
small_job "$T/j.yaml" lockjob "$T/data"
sed -i 's/ranks: 1/ranks: 2/; s/epochs: 2/epochs: 20/; s/micro: 32/micro: 16/' "$T/j.yaml"
"$HUNTER" run --json --inject slow-data=4 "$T/j.yaml" > "$T/first" 2>&1 &
first=$!
cleanup_hooks="kill -9 $first 2>/dev/null || true"
wait_for "$T/first" '"t":"metrics"' 10
set +e
"$HUNTER" run "$T/j.yaml" > "$T/second" 2>&1
rc=$?
set -e
cat "$T/second"
[ "$rc" = 1 ] || fail "second backend exited $rc"
grep -q "another hunter (pid $first) is attached" "$T/second" || fail "pid not named"

"$HUNTER" run --attach --takeover --json > "$T/third" 2>&1 &
third=$!
cleanup_hooks="kill -9 $first $third 2>/dev/null || true"
set +e
wait $first
rc=$?
set -e
[ "$rc" = 3 ] || { cat "$T/first"; fail "first backend exited $rc, expected 3 (detached)"; }
grep -q "another console took over" "$T/first" || fail "first did not say why it left"
wait_for "$T/third" '"t":"metrics"' 10
kill -INT $third
set +e
wait $third
rc=$?
set -e
[ "$rc" = 130 ] || { tail -n 5 "$T/third"; fail "interrupted run exited $rc"; }
state=$(jget "$T/third" summary state)
ck=$(jget "$T/third" summary checkpoint)
[ "$state" = stopped ] || fail "state $state"
[ -f "$ck" ] || fail "no checkpoint after the stop ($ck)"
steps=$(jget "$T/third" summary steps)
echo "$ck" | grep -q "step-0*$steps.safetensors" || fail "checkpoint $ck is not at step $steps"
pass "lock named the owner, takeover worked, Ctrl-C stopped at step $steps with $ck"
