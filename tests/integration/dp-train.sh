#!/bin/sh
# Issue 3, check 1: fmnist-mlp on 2 and on 4 ranks of the embedded cluster
# (real agents, real worker processes, real Gloo) reaches >= 0.88, and at
# the end every rank holds identical weights: each rank reports the CRC-32
# of its final parameters and the test compares them.
. "$SRCDIR/tests/integration/lib.sh"
[ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] ||
	fail "dataset-fashion-mnist is not installed"
for ranks in 2 4; do
	sed "s/ranks: 4/ranks: $ranks/; s/micro: 64/micro: $((256 / ranks))/" \
		"$SRCDIR/examples/jobs/fmnist-mlp-dp.yaml" > "$T/dp$ranks.yaml"
	"$HUNTER" run --json "$T/dp$ranks.yaml" > "$T/out$ranks" ||
		{ rc=$?; tail -n 20 "$T/out$ranks"; fail "$ranks ranks: hunter run exited $rc"; }
	"$PY" - "$T/out$ranks" "$ranks" <<'PYEOF' || fail "$ranks ranks: see above"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
ranks = int(sys.argv[2])
summary = [o for o in lines if o["t"] == "summary"][-1]
crc = {o["rank"]: o["params_crc32"] for o in lines
       if o["t"] == "event" and o["kind"] == "finished" and "params_crc32" in o}
placed = [o["reason"] for o in lines if o["t"] == "event" and o["kind"] == "placed"]
print("%d ranks: %s; state %s, test_acc %.4f, %.0f samples/s; crc %s" % (
    ranks, placed[0], summary["state"], summary["test_acc"],
    summary["samples_per_s"], crc))
assert summary["state"] == "finished", summary
assert summary["test_acc"] >= 0.88, "test_acc %.4f < 0.88" % summary["test_acc"]
assert sorted(crc) == list(range(ranks)), "missing ranks: %s" % crc
assert len(set(crc.values())) == 1, "ranks hold different weights: %s" % crc
assert summary["bytes_sent"] > 0 and summary["bytes_dense"] > 0
PYEOF
done
pass "2 and 4 ranks reach >= 0.88 with identical weights"
