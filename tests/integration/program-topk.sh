#!/bin/sh
# Program check 5: the client's top-k DDP hook (hunter_client.torch) in
# the example on 2 ranks, density 0.001 after a 1-epoch warm-up from 25%:
# after the warm-up each step sends at least 100x fewer gradient bytes
# than the dense all-reduce in the same script, and test_acc is within
# 1 point of the dense run's (same seed).
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/integration/program-lib.sh"
need_torch
mkdata "$T/data" 6000 500
for c in none topk; do
	# Every step's metrics (--metrics-every 0): the last frame is the
	# last step's, past the warm-up however fast the steps are (at 2 a
	# second, a fast machine's 281 steps after it could fall between two).
	torch_job "$T/$c.yaml" "t$c" '--epochs, "4", --batch, "64", --metrics-every, "0", --data, '"$T/data"', --compress, '$c', --density, "0.001", --warmup-epochs, "1"'
	timeout 300 "$HUNTER" run --json "$T/$c.yaml" > "$T/$c" 2>&1 ||
		{ rc=$?; tail -n 20 "$T/$c"; fail "the $c run exited $rc"; }
done
"$PY" - "$T/none" "$T/topk" <<'PYEOF' || fail "see above"
import json, sys
def load(p):
    o = [json.loads(l) for l in open(p) if l.startswith("{")]
    s = [x for x in o if x["t"] == "summary"][-1]
    last = [x for x in o if x["t"] == "metrics" and "bytes_sent" in x][-1]
    return s, last
d, dl = load(sys.argv[1])
c, cl = load(sys.argv[2])
ratio = dl["bytes_sent"] / cl["bytes_sent"]
print("dense: test_acc %.4f, %d bytes a step" % (d["test_acc"], dl["bytes_sent"]))
print("top-k: test_acc %.4f, %d bytes a step at density %.4g (dense equivalent %d)"
      % (c["test_acc"], cl["bytes_sent"], cl["density"], cl["bytes_dense"]))
print("%.0fx fewer bytes; accuracy %+.2f points" % (ratio, 100 * (c["test_acc"] - d["test_acc"])))
assert cl["density"] == 0.001 and ratio >= 100
assert abs(d["test_acc"] - c["test_acc"]) <= 0.01
assert d["state"] == c["state"] == "finished"
PYEOF
pass "top-k hook: 100x fewer bytes than dense, accuracy within 1 point"
