#!/bin/sh
# The submit options outlive their backend.  `hunter run
# --stop-after-epochs 3` (and a pacing, 2 ms a sample), kill -9 of the
# backend, --attach, then a migration: the generation the attached
# backend launches still stops after epoch 3 (the launch record in the
# journal keeps the options every generation runs with; it used to run
# on, unpaced, to its 40th epoch and finish).
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/faults/faults-lib.sh"
. "$SRCDIR/tests/integration/program-lib.sh"
mkdata "$T/data" 4800 200
small_job "$T/j.yaml" aopt "$T/data"
sed -i 's/ranks: 1/ranks: 2/; s/epochs: 2/epochs: 40/; s/micro: 32/micro: 16/' "$T/j.yaml"
"$HUNTER" run --json --stop-after-epochs 3 --inject slow-sample=2000 \
    "$T/j.yaml" > "$T/out1" 2>&1 &
run=$!
cleanup_hooks="kill -9 $run 2>/dev/null || true"
jwait "$T/out1" 60 'any(x["t"] == "metrics" and x.get("step", 0) > 5 for x in o)'
kill -9 $run
wait $run 2>/dev/null || true
timeout 120 "$HUNTER" run --json --attach aopt > "$T/out2" 2>&1 &
run=$!
cleanup_hooks="kill -9 $run 2>/dev/null || true"
jwait "$T/out2" 20 'any(x["kind"] == "restarted" and "re-attached" in x["reason"] for x in ev)'
"$HUNTER" ctl aopt migrate 1 local3 || fail "ctl migrate"
set +e
wait $run
rc=$?
set -e
"$PY" - "$T/out2" <<'PYEOF' || { grep -v '"metrics"' "$T/out2" | tail -n 8 | cut -c1-300; fail "the options were lost (exit $rc)"; }
import json, sys
o = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
ep = [x["epoch"] for x in o if x["t"] == "epoch"]
mig = [x for x in o if x["t"] == "event" and x["kind"] == "migrated"]
g1 = [x for x in o if x["t"] == "metrics" and x.get("generation") == 1]
s = [x for x in o if x["t"] == "summary"][-1]
print("migrated: %s; generation 1 reported %d metrics; epochs %s; %s" %
      (mig[0]["reason"][:60] if mig else None, len(g1), ep, s["state"]))
assert mig and g1, "no generation 1"
assert s["state"] == "stopped" and ep and max(ep) == 3, "did not stop after epoch 3"
PYEOF
pass "a generation launched by the attached backend kept --stop-after-epochs"
