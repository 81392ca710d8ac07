#!/bin/sh
# Scheduler check 3: rank 1 made slow by 200 ms a step is found as a
# straggler within the window (policy.failover.for: 3s) and migrated to the
# spare; the job continues and its median step time comes back to within
# 20% of that of the same job without the slowdown.
. "$SRCDIR/tests/integration/lib.sh"
mkdata "$T/data" 4000 64
small_job "$T/j.yaml" straggler "$T/data" 'policy: {failover: {for: 3s, heartbeat_timeout: 10s}}'
sed -i 's/ranks: 1/ranks: 2/; s/epochs: 2/epochs: 2/; s/micro: 32/micro: 16/' "$T/j.yaml"
# slow-data makes every step ~50 ms of waiting, so timing noise (a loaded
# machine, a sanitizer build) stays well under the 20% margin.
"$HUNTER" run --json --inject slow-data=50 "$T/j.yaml" > "$T/base" || fail "baseline run"
stop_agents
rm -rf "$HUNTER_STATE_DIR"
"$HUNTER" run --json --inject slow-data=50 --inject slow=200@1 "$T/j.yaml" > "$T/out" 2>&1 ||
	{ rc=$?; tail -n 20 "$T/out"; fail "hunter run exited $rc"; }
"$PY" - "$T/base" "$T/out" <<'PYEOF' || fail "see above"
import json, statistics, sys
def load(p):
    return [json.loads(l) for l in open(p) if l.startswith("{")]
base, out = load(sys.argv[1]), load(sys.argv[2])
def med(objs, gen):
    v = [o["step_ms"] for o in objs if o["t"] == "metrics" and "step_ms" in o
         and o.get("generation", 0) == gen]
    return statistics.median(v) if v else None
mig = [o for o in out if o["t"] == "event" and o["kind"] == "migrated"]
summary = [o for o in out if o["t"] == "summary"][-1]
b, slow, after = med(base, 0), med(out, 0), med(out, 1)
print("median step: baseline %.1f ms, slowed %.1f ms, after migration %s ms"
      % (b, slow, after))
print("migration: %s" % (mig[0]["reason"] if mig else None))
assert mig and "straggler" in mig[0]["reason"] and "rank 1" in mig[0]["reason"]
assert after is not None and abs(after - b) <= 0.2 * b
assert summary["state"] == "finished"
PYEOF
pass "straggler migrated; step time back to normal"
