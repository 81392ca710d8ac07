#!/bin/sh
# Scheduler check 4: rank 1 leaking 1 MiB a step is found within two
# windows of policy.leak.check_every (100 steps), checkpointed and
# restarted; its RSS falls back and the job continues to the end.
. "$SRCDIR/tests/integration/lib.sh"
mkdata "$T/data" 4000 64
small_job "$T/j.yaml" leaky "$T/data" 'policy: {leak: {check_every: 100, growth_limit: 64MiB}}'
sed -i 's/ranks: 1/ranks: 2/; s/epochs: 2/epochs: 3/; s/micro: 32/micro: 16/' "$T/j.yaml"
"$HUNTER" run --json --inject slow-data=50 --inject leak=1MiB/step@1 "$T/j.yaml" \
	> "$T/out" 2>&1 || { rc=$?; tail -n 20 "$T/out"; fail "hunter run exited $rc"; }
"$PY" - "$T/out" <<'PYEOF' || fail "see above"
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
rs = [o for o in objs if o["t"] == "event" and o["kind"] == "restarted" and "memory grows" in o["reason"]]
m1 = [o for o in objs if o["t"] == "metrics" and o.get("rank") == 1 and "rss" in o]
before = [o for o in m1 if o.get("generation", 0) == 0]
after = [o for o in m1 if o.get("generation", 0) == 1]
summary = [o for o in objs if o["t"] == "summary"][-1]
print("decision: %s" % (rs[0]["reason"] if rs else None))
print("rank 1 rss: %.0f MiB at step %d before; %.0f MiB after the restart" % (
    before[-1]["rss"] / 2**20, before[-1]["step"], after[-1]["rss"] / 2**20))
assert rs and "rank 1" in rs[0]["reason"]
assert before[-1]["step"] <= 200 + 60, "found late: step %d" % before[-1]["step"]
# Rank 1 had leaked about 1 MiB a step by then; at least half of that must
# be gone (the sanitizer build keeps more of its own memory around).
assert after[-1]["rss"] < before[-1]["rss"] - 0.5 * before[-1]["step"] * 2**20
assert summary["state"] == "finished"
PYEOF
pass "leak found, rank restarted, memory back"
