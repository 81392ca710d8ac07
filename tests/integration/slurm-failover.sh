#!/bin/sh
# Slurm, check 2: sbatch of examples/slurm/hunter.sbatch on 3 nodes with
# --spares 1 places the 2-rank job on n1 and n2; killing the agent's srun
# step on the node of rank 1 (scancel JOB.STEP, as an operator or Slurm
# itself would) loses that node with srun's reason, and the job fails
# over to the spare n3 and finishes there, both ranks with one CRC.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/slurm/slurm-lib.sh"
# The data set is made while the cluster comes up.
mkdata "$T/data" 2048 128 &
mk=$!
slurm_up 2 3
wait $mk || fail "mkdata failed"
slurm_job "$T/job.yaml" fo "$T/data"
# slow=30: 30 ms a step in the first generation, so the kill finds it
# training; the relaunch runs at full speed.
J=$(sbatch --parsable -N3 -o "$T/out" --export=ALL,HUNTER="$HUNTER" \
	"$SRCDIR/examples/slurm/hunter.sbatch" --spares 1 --inject slow=30 \
	"$T/job.yaml") || fail "sbatch refused the example script"
wait_until 20 "rank metrics past step 10" past_step "$T/out" 10
node_of_rank1=$("$PY" - "$T/out" <<'PYEOF'
import json, sys
for l in open(sys.argv[1]):
    if l.startswith("{"):
        o = json.loads(l)
        if o["t"] == "metrics" and o.get("job") == "fo" and o.get("rank") == 1:
            print(o["node"]); break
PYEOF
)
[ "$node_of_rank1" = n2 ] || fail "rank 1 runs on '$node_of_rank1', expected n2"
S=$(agent_step "$J" n2)
[ -n "$S" ] || { squeue -s -j "$J"; fail "no hunter-agent step on n2"; }
echo "killing step $S (the agent of n2)"
scancel "$S"
wait_until 40 "job $J to complete" job_is "$J" COMPLETED
scontrol -o show job "$J" | grep -q 'ExitCode=0:0' ||
	{ tail -n 20 "$T/out"; fail "the batch job did not exit 0"; }
"$PY" - "$T/out" <<'PYEOF' || { grep -v '"metrics"' "$T/out" | tail -n 30; fail "see above"; }
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
ev = [o for o in objs if o["t"] == "event"]
down = [e["reason"] for e in ev if e["kind"] == "down" and e["node"] == "n2"]
fo = [e["reason"] for e in ev if e["kind"] == "failover" and e.get("job") == "fo"]
fin = {e["node"]: e["params_crc32"] for e in ev if e["kind"] == "finished"}
s = [o for o in objs if o["t"] == "summary"][-1]
print("down: %s" % down[:1])
print("failover: %s" % fo[:1])
print("finished on %s, state %s after %d steps" % (fin, s["state"], s["steps"]))
assert down and "srun" in down[0], down
assert any("moves to n3" in r for r in fo), fo
assert s["state"] == "finished" and s["steps"] == 128, s
assert sorted(fin) == ["n1", "n3"] and len(set(fin.values())) == 1, fin
PYEOF
pass "the lost srun step of n2 failed over to the spare n3, and the job finished"
