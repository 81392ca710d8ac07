#!/bin/sh
# Fault matrix 3: SIGSTOP the agent of rank 1's node for longer than the
# heartbeat timeout (3 s), then SIGCONT it.  The backend fails over once
# (rank 1 to the spare, a new generation), the job finishes with every
# step done and the final weights of an undisturbed run, and the old
# generation does not come back: after SIGCONT the stopped agent's
# queued frames of generation 0 are not counted (no metrics, epoch,
# "finished" or second failover from them in the backend's output, one
# "finished" per rank, all of the final generation).
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/faults/faults-lib.sh"
mkdata "$T/data" 2000 100
small_job "$T/j.yaml" astop "$T/data" 'policy: {failover: {heartbeat_timeout: 3s}}'
# spread placement: rank 0 on local0, rank 1 on local1 (its own agent)
sed -i 's/ranks: 1/ranks: 2, placement: spread/; s/epochs: 2/epochs: 4/; s/micro: 32/micro: 16/; s/every_steps: 0/every_steps: 10/' "$T/j.yaml"
plain_run "$T/j.yaml" "$T/plain"
want=$(final_crc "$T/plain" 2) || fail "undisturbed run: $want"
steps=$(jget "$T/plain" summary steps)

# About 50 ms a step: 248 steps take some 12 s.
"$HUNTER" run --json --inject slow-data=50 "$T/j.yaml" > "$T/out" 2>&1 &
run=$!
apid=""
cleanup_hooks="kill -CONT \$apid 2>/dev/null || true; kill -9 \$run 2>/dev/null || true"
wait_for "$T/out" '"kind":"started","rank":1'
node=$(grep '"kind":"started","rank":1' "$T/out" | head -n 1 | sed 's/.*"node":"\([^"]*\)".*/\1/')
[ "$node" != local0 ] || fail "rank 1 shares local0 with rank 0; the test needs it alone"
apid=$(cat "$HUNTER_STATE_DIR/nodes/$node/agent.pid")
wait_for "$T/out" '"t":"metrics".*"rank":1,'
kill -STOP "$apid"
t0=$(date +%s)
echo "stopped the agent of $node (pid $apid)"
# the failover should come within the timeout and a few seconds; give
# it 12 s, then wake the agent either way and judge the whole run (which
# fails without exactly one failover)
if poll_until 12 grep -q '"kind":"failover".*generation 1' "$T/out"; then
	sleep 2		# the new generation is running when the old agent wakes
fi
kill -CONT "$apid"
echo "continued it after $(( $(date +%s) - t0 )) s"
rc=0
wait $run || rc=$?
cleanup_hooks=""
[ $rc = 0 ] || { tail -n 5 "$T/out" | cut -c1-300; fail "hunter run exited $rc"; }
kill -0 "$apid" 2>/dev/null || fail "the stopped agent died"
"$PY" - "$T/out" "$steps" "$want" <<'PYEOF' || fail "see above"
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
steps, want = int(sys.argv[2]), sys.argv[3]
job = [o for o in objs if o.get("job") == "astop"]
fo = [o for o in job if o["t"] == "event" and o["kind"] == "failover"]
gen_fo = [o for o in fo if "generation" in o["reason"]]
print("%d failover events:" % len(fo))
for o in fo[:3] + (["..."] if len(fo) > 4 else []) + fo[3:][-1:]:
    print("  " + (o if o == "..." else o["reason"]))
idx = job.index(gen_fo[0]) if gen_fo else len(job)
# After the failover, nothing of generation 0 may be counted.
late = [o for o in job[idx + 1:] if o.get("generation") == 0]
fin = [o for o in job if o["t"] == "event" and o["kind"] == "finished"]
summ = [o for o in job if o["t"] == "summary"]
print("after the failover: %d frames of generation 0 (%s)" % (len(late),
      ", ".join(sorted(set(o["t"] + ("/" + o["kind"] if o["t"] == "event" else "") for o in late)))))
print("finished: %s" % [(o["rank"], o.get("generation"), o.get("params_crc32")) for o in fin])
print("summary: %s, %s steps" % (summ[-1]["state"], summ[-1]["steps"]) if summ else "no summary")
assert len(gen_fo) == 1, "%d failovers to a new generation, expected 1" % len(gen_fo)
assert "rank 1" in gen_fo[0]["reason"] and "local3" in gen_fo[0]["reason"], gen_fo[0]["reason"]
assert not late, "frames of generation 0 after the failover: %s" % late[:3]
assert sorted(o["rank"] for o in fin) == [0, 1], "finished events: %d" % len(fin)
assert all(o.get("generation") == 1 for o in fin), "a finished event of another generation"
assert set(o.get("params_crc32") for o in fin) == {want}, "weights differ from %s" % want
assert summ and summ[-1]["state"] == "finished" and summ[-1]["steps"] == steps
PYEOF
# the journal agrees: one failover decision
n=$(grep -c '"t":"decision".*"kind":"failover"' "$HUNTER_STATE_DIR/journal.jsonl" || true)
[ "$n" = 1 ] || fail "$n failover decisions in the journal"
pass "one failover after the agent stopped; its old generation stayed out"
