#!/bin/sh
# Fault matrix, issue 21: a stalled agent never stops its workers.
# Rank 0 sends a step frame every step (--trace-steps, some 50 a second)
# and the agent of its node is stopped with SIGSTOP for 15 s: the
# worker -> agent socket fills within a few seconds.  Before the links
# were queued the rank then blocked in worker_send, holding its send
# lock, and with it the whole group in the next allreduce.  Now the
# frames the agent cannot take wait in the worker's queue: the
# checkpoints (every 50 steps, written by rank 0 itself) keep coming at
# half the rate before the stop or more, and after SIGCONT every step
# frame arrives, in order, none dropped: 15 s of them (some 60 kB) fit
# in the queue's bound (128 KiB), past which they would be dropped and
# counted (tests/unit/test-proto-queue.c).
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/faults/faults-lib.sh"
mkdata "$T/data" 2000 100
small_job "$T/j.yaml" astall "$T/data" 'policy: {failover: {heartbeat_timeout: 60s}}'
ckdir="$T/ck"
sed -i 's/ranks: 1/ranks: 2, placement: spread/; s/epochs: 2/epochs: 1000/; s/micro: 32/micro: 16/; s/every_steps: 0, keep: 3/every_steps: 50, keep: 1000/' "$T/j.yaml"
ckpt_dir_job "$T/j.yaml" "$ckdir"
STOP_S=${AGENT_STALL_S:-15}

now() { date +%s.%N; }
"$HUNTER" run --json --inject slow-data=20 --trace-steps 1000000 "$T/j.yaml" > "$T/out" 2> "$T/err" &
run=$!
apid=""
cleanup_hooks="kill -CONT \$apid 2>/dev/null || true; kill -9 \$run 2>/dev/null || true"
wait_for "$T/out" '"t":"metrics".*"rank":1,' 300
node=$(grep '"kind":"started","rank":0' "$T/out" | head -n 1 | sed 's/.*"node":"\([^"]*\)".*/\1/')
apid=$(cat "$HUNTER_STATE_DIR/nodes/$node/agent.pid")
sleep 5
t_stop=$(now)
kill -STOP "$apid"
echo "stopped the agent of $node (rank 0's; pid $apid) for $STOP_S s"
sleep "$STOP_S"
t_cont=$(now)
kill -CONT "$apid"
sleep 3
"$HUNTER" ctl astall stop > /dev/null || fail "hunter ctl astall stop"
rc=0
wait $run || rc=$?
cleanup_hooks=""
[ $rc = 0 ] || { tail -n 5 "$T/out" | cut -c1-300; tail -n 5 "$T/err"; fail "hunter run exited $rc"; }
"$PY" - "$T/out" "$ckdir" "$t_stop" "$t_cont" <<'PYEOF' || fail "see above"
import glob, json, os, re, sys
out, ckdir = sys.argv[1:3]
t_stop, t_cont = map(float, sys.argv[3:5])
ck = sorted((os.stat(p).st_mtime, int(re.search(r"step-0*(\d+)", p).group(1)))
            for p in glob.glob(os.path.join(ckdir, "step-*.safetensors")))

def rate(a, b):
    s = [st for t, st in ck if a <= t <= b]
    return (s[-1] - s[0]) / (b - a) if len(s) >= 2 else 0.0

before, during, late = rate(t_stop - 5, t_stop), rate(t_stop, t_cont), rate(t_cont - 5, t_cont)
print("steps/s from the checkpoints: before %.1f, during %.1f, last 5 s of it %.1f"
      % (before, during, late))
objs = [json.loads(l) for l in open(out) if l.startswith("{")]
drop = [o for o in objs if o["t"] == "event" and o.get("kind") == "dropped"]
steps = [o["step"] for o in objs if o["t"] == "step"]
summ = [o for o in objs if o["t"] == "summary"]
print("step frames: %d, steps %s..%s; %d dropped events" % (len(steps),
      steps[:1], steps[-1:], len(drop)))
fo = [o for o in objs if o["t"] == "event" and o.get("kind") in ("failover", "failed")]
assert before > 5, "the job hardly ran before the stop"
assert during >= 0.5 * before and late >= 0.5 * before, "the step stalled with the agent"
assert summ and steps == list(range(1, summ[-1]["steps"] + 1)), "step frames lost or out of order"
assert not drop, "dropped: %s" % drop[0]["reason"]
assert not fo, "failed over: %s" % fo[0]["reason"]
assert summ and summ[-1]["state"] == "stopped", "summary %s" % summ[-1:]
PYEOF
pass "the group trained on while rank 0's agent was stopped for $STOP_S s; no step frame lost"
