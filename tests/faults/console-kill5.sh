#!/bin/sh
# Fault matrix 2: kill -9 the console (hunter run) 5 times in a row
# during one job of 2 ranks.  Each time `hunter run --attach` re-attaches
# (a "restarted ... re-attached" event), sees the job's step still
# advancing past where the previous console died, and the last one
# follows the job to its summary: finished, with every step done and the
# final weights of an undisturbed run.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/faults/faults-lib.sh"
mkdata "$T/data" 2000 100
small_job "$T/j.yaml" ck5 "$T/data" 'policy: {failover: {heartbeat_timeout: 5s}}'
sed -i 's/ranks: 1/ranks: 2/; s/epochs: 2/epochs: 4/; s/micro: 32/micro: 16/; s/every_steps: 0/every_steps: 20/' "$T/j.yaml"
plain_run "$T/j.yaml" "$T/plain"
want=$(final_crc "$T/plain" 2) || fail "undisturbed run: $want"
steps=$(jget "$T/plain" summary steps)

# step_of FILE: the newest step in FILE's metrics frames of job ck5.
step_of() {
	grep '"t":"metrics".*"job":"ck5"' "$1" | tail -n 1 | sed -n 's/.*"step":\([0-9]*\).*/\1/p'
}
# past_step FILE STEP: whether FILE's newest step is past STEP.
past_step() { _s=$(step_of "$1"); [ -n "$_s" ] && [ "$_s" -gt "$2" ]; }

# About 40 ms a step: 250 steps take some 10 s, long enough for 5 kills.
"$HUNTER" run --json --inject slow-data=40 "$T/j.yaml" > "$T/c0" 2>&1 &
run=$!
cleanup_hooks="kill -9 \$run 2>/dev/null || true"
prev=0
for k in 1 2 3 4 5; do
	out="$T/c$((k - 1))"
	# wait for a metrics frame newer than the previous console's last one
	poll_until 15 past_step "$out" "$prev" ||
		{ tail -n 3 "$out" | cut -c1-300; fail "console $k: no step past $prev"; }
	s=$(step_of "$out")
	grep -q '"t":"summary"' "$out" && fail "console $k: the job ended before the kill"
	kill -9 $run
	wait $run 2>/dev/null || true
	echo "console $k killed at step $s"
	prev=$s
	if [ $k -gt 1 ]; then
		grep -q '"kind":"restarted".*re-attached' "$out" ||
			fail "console $k: no re-attached event"
	fi
	"$HUNTER" run --attach --json > "$T/c$k" 2>&1 &
	run=$!
done
rc=0
wait $run || rc=$?
cleanup_hooks=""
[ $rc = 0 ] || { tail -n 5 "$T/c5" | cut -c1-300; fail "the last attach exited $rc"; }
grep -q '"kind":"restarted".*re-attached' "$T/c5" || fail "console 6: no re-attached event"
"$PY" - "$T/c5" "$steps" "$want" "$prev" <<'PYEOF' || fail "see above"
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
steps, want, killed = int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
summ = [o for o in objs if o["t"] == "summary" and o.get("job") == "ck5"]
fin = {o["rank"]: o.get("params_crc32") for o in objs
       if o["t"] == "event" and o["kind"] == "finished" and o.get("job") == "ck5"}
seen = [o["step"] for o in objs if o["t"] == "metrics" and o.get("job") == "ck5"]
fo = [o for o in objs if o["t"] == "event" and o["kind"] == "failover"]
print("last console: steps %s..%s, summary %s at step %s, weights %s" % (
      seen[:1], seen[-1:], summ[-1]["state"] if summ else None,
      summ[-1]["steps"] if summ else None, fin))
assert summ and summ[-1]["state"] == "finished", "not finished"
assert summ[-1]["steps"] == steps, "summary steps %s, expected %d" % (summ[-1]["steps"], steps)
assert not fo, "a failover happened: %s" % fo[0]["reason"]
assert fin and set(fin.values()) == {want}, "final weights %r, undisturbed %s" % (fin, want)
PYEOF
pass "5 consoles killed; the 6th followed the job to its end, weights $want"
