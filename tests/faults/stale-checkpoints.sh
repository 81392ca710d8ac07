#!/bin/sh
# A fresh run (no --resume) of a job whose name was used before, with the
# earlier run's checkpoints (other seed, more steps) still in the job's
# checkpoint directory.  A worker dies at step 23 of the new run.  The
# failover must resume from the new run's own checkpoint (step 20), not
# from the stale ones, the new run's checkpoints must not be pruned in
# favour of the stale ones, and the final weights must be those of an
# undisturbed run of the new job.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/faults/faults-lib.sh"
mkdata "$T/data" 2000 100
small_job "$T/new.yaml" stale "$T/data" 'policy: {failover: {heartbeat_timeout: 4s}}'
sed -i 's/ranks: 1/ranks: 2/; s/micro: 32/micro: 16/; s/every_steps: 0/every_steps: 10/' "$T/new.yaml"
sed 's/seed: 7/seed: 8/; s/epochs: 2/epochs: 3/' "$T/new.yaml" > "$T/old.yaml"
plain_run "$T/new.yaml" "$T/plain"
want=$(final_crc "$T/plain" 2) || fail "undisturbed run: $want"
"$HUNTER" run --json "$T/old.yaml" > "$T/old" 2>&1 || fail "the earlier run exited $?"
dir="$HUNTER_STATE_DIR/checkpoints/stale"
echo "left by the earlier run: $(ls "$dir" | tr '\n' ' ')"
rc=0
"$HUNTER" run --json --inject crash-at=23@1 "$T/new.yaml" > "$T/new" 2>&1 || rc=$?
echo "after the new run: $(ls "$dir" | tr '\n' ' ')"
"$PY" - "$T/new" "$want" <<'PYEOF' || fail "see above"
import json, re, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
want = sys.argv[2]
ev = [o for o in objs if o["t"] == "event"]
fo = [o for o in ev if o["kind"] == "failover"]
res = [o for o in ev if o["kind"] == "restarted" and "resumed from" in o["reason"]]
bad = [o for o in ev if o["kind"] == "failed" and o.get("generation", 0) >= 1]
fin = set(o.get("params_crc32") for o in ev if o["kind"] == "finished")
summ = [o for o in objs if o["t"] == "summary"]
print("failovers: %d; first resume: %s" % (len(fo), res[0]["reason"] if res else None))
if bad:
    print("after the failover: %s" % bad[0]["reason"])
print("summary: %s; weights %s (undisturbed %s)" % (summ[-1]["state"] if summ else None, fin, want))
assert res and re.search(r"at step 2[0-3] ", res[0]["reason"]), "did not resume from this run's step-20 checkpoint"
assert len(fo) == 1, "%d failovers" % len(fo)
assert summ and summ[-1]["state"] == "finished", "not finished"
assert fin == {want}, "final weights differ"
PYEOF
[ $rc = 0 ] || fail "hunter run exited $rc"
pass "the new run resumed from its own checkpoint"
