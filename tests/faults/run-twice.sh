#!/bin/sh
# The same job never runs twice (issue 27, item 3).  A 2-rank job's
# hunter run is killed with kill -9; its ranks train on.  A plain
# hunter run of the same file then follows that run instead of starting
# a second copy, and so does a --resume after a second kill -9: the
# agents started each rank once, the journal has one launch, nothing was
# moved aside, and the job finishes.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/faults/faults-lib.sh"
mkdata "$T/data" 2000 64
small_job "$T/j.yaml" twice "$T/data" 'checkpoint: {every_steps: 10, keep: 3}'
sed -i "s/ranks: 1/ranks: 2/; s/epochs: 2/epochs: 6/; s/micro: 32/micro: 16/; s/^checkpoint: {every_steps: 0, keep: 3}\$//" "$T/j.yaml"

"$HUNTER" run --json --inject slow=25 "$T/j.yaml" > "$T/out1" 2>&1 &
run=$!
cleanup_hooks="kill -9 $run 2>/dev/null || true"
wait_for "$T/out1" '"t":"metrics".*"step":[1-9]'
kill -9 $run
wait $run 2>/dev/null || true

"$HUNTER" run --json "$T/j.yaml" > "$T/out2" 2>&1 &
run=$!
cleanup_hooks="kill -9 $run 2>/dev/null || true"
wait_for "$T/out2" 'still runs (run [0-9]*; rank on local[0-9] as pid [0-9]*): following it'
wait_for "$T/out2" '"t":"metrics"'
kill -9 $run
wait $run 2>/dev/null || true

set +e
"$HUNTER" run --json --resume "$T/j.yaml" > "$T/out3" 2>&1
rc=$?
set -e
grep -q 'still runs (run [0-9]*.*following it' "$T/out3" ||
	{ grep -v '"metrics"' "$T/out3" | tail -n 5 | cut -c1-300; fail "--resume did not follow the running job"; }
[ "$rc" = 0 ] || { tail -n 5 "$T/out3" | cut -c1-300; fail "the run exited $rc"; }
[ "$(jget "$T/out3" summary state)" = finished ] || fail "not finished"
starts=$(cat "$HUNTER_STATE_DIR"/nodes/*/agent.log | grep -c 'started twice rank')
launches=$(grep -c '"t":"job","job":"twice"' "$HUNTER_STATE_DIR/journal.jsonl")
echo "agents started $starts ranks; the journal has $launches launch records"
[ "$starts" = 2 ] || { grep 'started twice' "$HUNTER_STATE_DIR"/nodes/*/agent.log; fail "ranks were started $starts times"; }
[ "$launches" = 1 ] || fail "$launches launches in the journal"
! ls -d "$HUNTER_STATE_DIR"/checkpoints/twice/previous-* 2>/dev/null ||
	fail "the live job's checkpoints were moved aside"
crc=$(final_crc "$T/out3" 2) || fail "final weights: $crc"
pass "the job ran once; two later runs followed it (weights $crc)"
