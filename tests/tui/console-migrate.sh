#!/bin/sh
# Console check 3: `m` moves rank 1 to the spare node local3: pick the
# rank, then the node from the list of nodes with a free slot.  The job
# screen then shows rank 1 on local3 and the step keeps advancing, under
# the same job.  Skips (77) while the backend refuses "migrate".
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/tui/tui-lib.sh"
tui_job "$T/j.yaml" movejob
tui_start "\"$HUNTER\" \"$T/j.yaml\""
need 'movejob +running' 20 "the job is not running"
keys 3
need '^│ +1 local[0-2] +running' 20 "rank 1 is not running on a working node"
step_advances 20 || { screen; fail "the step does not move before the migration"; }
keys m
need 'migrate which rank' 5 "no rank list"
keys j Enter
need 'migrate to which node' 5 "no node list"
# the list's rows, in order; local3 must be offered, marked spare
rows=$(grep 'free slot' "$T/screen" | sed 's/^[^l]*\(local[0-9]\).*/\1/')
echo "offered: $(echo $rows)"
grep 'local3 .*free slot.*(spare)' "$T/screen" > /dev/null || fail "the spare local3 is not offered"
n=0
for r in $rows; do
	[ "$r" = local3 ] && break
	n=$((n + 1))
done
while [ $n -gt 0 ]; do keys j; n=$((n - 1)); done
keys Enter
if ! screen_wait '^│ +1 local3 +running' 40; then
	cp "$T/screen" "$T/job-screen"
	skip_if_refused migrate
	cat "$T/job-screen"
	fail "rank 1 is not on local3"
fi
grep -q 'job movejob' "$T/screen" || fail "another job on the screen"
step_advances 20 || { screen; fail "the step did not advance after the migration"; }
gen=$(screen | grep -m1 -o 'generation [0-9]*' || true)
[ -n "$gen" ] && [ "$gen" != "generation 0" ] || fail "no new generation after the migration ('$gen')"
pass "rank 1 moved to local3 ($gen), the job goes on"
