#!/bin/sh
# Slurm, check 4: outside an allocation `--cluster slurm` says so and
# exits 2 (and --spares, which only an allocation has, too).  Inside one,
# a node that Slurm reports but srun cannot reach (its slurmd killed
# after the allocation was granted) is marked down with srun's reason,
# and the 2-rank job still places on the other two and finishes.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/slurm/slurm-lib.sh"
mkdata "$T/data" 2048 128
slurm_job "$T/job.yaml" reach "$T/data"

unset SLURM_JOB_ID
for cmd in run check; do
	rc=0
	if [ $cmd = run ]; then
		"$HUNTER" run --cluster slurm "$T/job.yaml" > "$T/o" 2> "$T/e" || rc=$?
	else
		"$HUNTER" check --cluster slurm > "$T/o" 2> "$T/e" || rc=$?
	fi
	[ $rc -eq 2 ] || { cat "$T/o" "$T/e"; fail "hunter $cmd --cluster slurm outside exited $rc, expected 2"; }
	grep -q "not inside a Slurm allocation (SLURM_JOB_ID is not set)" "$T/e" ||
		{ cat "$T/e"; fail "hunter $cmd does not say it is outside an allocation"; }
done
echo "outside: $(cat "$T/e")"
rc=0
"$HUNTER" run --spares 1 "$T/job.yaml" > "$T/o" 2> "$T/e" || rc=$?
[ $rc -eq 2 ] && grep -q "spares is for a Slurm allocation" "$T/e" ||
	{ cat "$T/e"; fail "--spares outside an allocation exited $rc"; }

slurm_up 4 3
slurmd3=$(awk '$1 == "slurmd-n3" { print $2 }' "$SX_DIR/pids")
[ -n "$slurmd3" ] || fail "no pid for n3's slurmd"
rc=0
salloc -N3 sh -c "kill -9 $slurmd3 && exec \"\$0\" run --json \"\$1\"" \
	"$HUNTER" "$T/job.yaml" < /dev/null > "$T/out" 2> "$T/err" || rc=$?
[ $rc -eq 0 ] || { tail -n 20 "$T/out" "$T/err"; fail "hunter run exited $rc"; }
"$PY" - "$T/out" <<'PYEOF' || { grep -v '"metrics"' "$T/out" | tail -n 20; fail "see above"; }
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
ev = [o for o in objs if o["t"] == "event"]
down = [e["reason"] for e in ev if e["kind"] == "down"]
placed = [e["reason"] for e in ev if e["kind"] == "placed"]
s = [o for o in objs if o["t"] == "summary"][-1]
print("down: %s" % down)
print("placed: %s; %s after %d steps" % (placed, s["state"], s["steps"]))
assert len(down) == 1 and down[0].startswith("node n3 is down: srun"), down
assert "n3" in down[0].split(": srun")[1], "srun's reason does not name n3"
assert len(placed) == 1 and "n3" not in placed[0], placed
assert s["state"] == "finished" and s["steps"] == 128, s
PYEOF
pass "outside: exit 2; inside: n3 down with srun's reason, the job ran on n1 and n2"
