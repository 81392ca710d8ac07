#!/bin/sh
# lr.schedule adaptive: with 2 ranks the gradient noise scale is estimated
# from the ranks' gradients against the aggregate and shown live
# (noise_scale, lr_gain in the metrics); the gain stays in [1/world, 1],
# every rank applies the same rate (identical weights), and it trains.
. "$SRCDIR/tests/integration/lib.sh"
mkdata "$T/data" 4096 256
small_job "$T/j.yaml" ada "$T/data"
sed -i 's/ranks: 1/ranks: 2/; s/schedule: cosine/schedule: adaptive/; s/micro: 32/micro: 16/; s/epochs: 2/epochs: 3/' "$T/j.yaml"
"$HUNTER" run --json --inject slow-data=1 "$T/j.yaml" > "$T/out" || fail "run exited $?"
"$PY" - "$T/out" <<'PYEOF' || fail "see above"
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
m = [o for o in objs if o["t"] == "metrics" and "lr_gain" in o]
ns = [o["noise_scale"] for o in m if "noise_scale" in o]
gains = [o["lr_gain"] for o in m]
crc = {o["rank"]: o["params_crc32"] for o in objs if o["t"] == "event" and "params_crc32" in o}
s = [o for o in objs if o["t"] == "summary"][-1]
print("noise scale %s; gain %.3f..%.3f; test_acc %.3f; crc %s" % (
    ["%.0f" % x for x in ns[-3:]], min(gains), max(gains), s["test_acc"], crc))
assert ns and all(x > 0 for x in ns)
assert all(0.5 <= g <= 1 for g in gains) and min(gains) < 1
assert len(set(crc.values())) == 1 and len(crc) == 2
assert s["state"] == "finished" and s["test_acc"] > 0.5
PYEOF
pass "adaptive lr estimates the noise scale"
