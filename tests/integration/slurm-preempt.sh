#!/bin/sh
# Slurm, check 3: `scancel --full --signal=USR1` on the batch job while it
# trains (--full: the batch shell, which is hunter run, and the steps;
# the agents, relays and workers in the steps ignore it) makes every rank
# checkpoint at one step and hunter exit 0, with the journal saying so.
# `scontrol requeue` then starts it again in the same state directory
# (SLURM_RESTART_COUNT=1): it resumes from that checkpoint and ends with
# the final checkpoint of an uninterrupted run, byte for byte.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/slurm/slurm-lib.sh"
# The data set is made while the cluster comes up.
mkdata "$T/data" 2048 128 &
mk=$!
slurm_up 3 2
wait $mk || fail "mkdata failed"
slurm_job "$T/job.yaml" pre "$T/data"
J=$(sbatch --parsable -N2 -o "$T/out" --export=ALL,HUNTER="$HUNTER" \
	"$SRCDIR/examples/slurm/hunter.sbatch" --inject slow=30 "$T/job.yaml") ||
	fail "sbatch refused the example script"
wait_until 20 "rank metrics past step 10" past_step "$T/out" 10
scancel --full --signal=USR1 "$J"
wait_until 20 "job $J to complete after SIGUSR1" job_is "$J" COMPLETED
scontrol -o show job "$J" | grep -q 'ExitCode=0:0' ||
	{ tail -n 20 "$T/out"; fail "hunter run did not exit 0 on SIGUSR1"; }
cp "$T/out" "$T/first"
stopped=$(jget "$T/first" summary steps)
[ "$(jget "$T/first" summary state)" = stopped ] || fail "the first run did not stop"
[ "$stopped" -gt 10 ] && [ "$stopped" -lt 128 ] ||
	fail "the first run stopped at step $stopped"
ck=$(jget "$T/first" summary checkpoint)
case $ck in
*/step-*$stopped.safetensors) [ -f "$ck" ] || fail "no checkpoint $ck" ;;
*) fail "the stop left checkpoint '$ck', not one of step $stopped" ;;
esac
grep '"t":"decision"' "$HUNTER_STATE_DIR/journal.jsonl" |
	grep '"kind":"preempted"' | grep -q "stopped at step $stopped" ||
	fail "the journal does not say where the preempted job stopped"
grep -q "SIGUSR1 (Slurm job $J)" "$HUNTER_STATE_DIR/journal.jsonl" ||
	fail "the journal does not name the signal"

# The requeued start resumes.  A requeue waits 2 minutes to start unless
# told otherwise.
scontrol requeue "$J" || fail "scontrol requeue $J"
scontrol update jobid="$J" StartTime=now || true
wait_until 30 "job $J to start again" grep -q "Slurm job $J was requeued" "$T/out"
wait_until 30 "the requeued job $J to complete" job_is "$J" COMPLETED
# The output file is appended to: the second run is what follows the first.
tail -n +"$(($(wc -l < "$T/first") + 1))" "$T/out" > "$T/second"
grep -q "Slurm job $J was requeued (restart 1)" "$T/second" ||
	fail "the requeued start did not say it resumes"
grep '"kind":"restarted"' "$T/second" | grep -q "at step $stopped " ||
	fail "the requeued start did not resume from step $stopped"
[ "$(jget "$T/second" summary state)" = finished ] || fail "the second run did not finish"

# The same job uninterrupted, in a state directory of its own.
HUNTER_STATE_DIR="$T/straight" salloc -N2 "$HUNTER" run --json "$T/job.yaml" \
	< /dev/null > "$T/straight.out" 2> "$T/straight.err" ||
	{ cat "$T/straight.err"; fail "the uninterrupted run failed"; }
a=$(jget "$T/straight.out" summary checkpoint)
b=$(jget "$T/second" summary checkpoint)
"$PY" "$SRCDIR/tests/integration/safetensors_read.py" --dump "$a" > "$T/a.sum"
"$PY" "$SRCDIR/tests/integration/safetensors_read.py" --dump "$b" > "$T/b.sum"
cmp "$T/a.sum" "$T/b.sum" || { diff "$T/a.sum" "$T/b.sum" | head; fail "the final checkpoints differ"; }
crc_a=$(grep '"kind":"finished"' "$T/straight.out" | grep -o '"params_crc32":"[0-9a-f]*"' | sort -u)
crc_b=$(grep '"kind":"finished"' "$T/second" | grep -o '"params_crc32":"[0-9a-f]*"' | sort -u)
echo "stopped at step $stopped; resumed: $crc_b; uninterrupted: $crc_a"
[ -n "$crc_a" ] && [ "$crc_a" = "$crc_b" ] || fail "params_crc32 differ"
pass "preempted at step $stopped, exit 0, requeued and resumed to the uninterrupted run's $(wc -l < "$T/a.sum") tensors"
