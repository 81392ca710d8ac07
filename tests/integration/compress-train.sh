#!/bin/sh
# Compression checks 2 and 3: fmnist-mlp on 2 ranks, 10 epochs, top-k at
# density 0.001, against the same job dense (same seed).  Test accuracy is
# within 1 point of the dense run's, bytes_sent (counted on the wire) is at
# least 100x smaller than dense, and in each run every rank ends with the
# same weights (CRC-32 of the final parameters).
. "$SRCDIR/tests/integration/lib.sh"
[ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] ||
	fail "dataset-fashion-mnist is not installed"
job="$SRCDIR/examples/jobs/fmnist-mlp-topk.yaml"
sed 's/method: topk/method: none/; s/name: fmnist-mlp-topk/name: fmnist-mlp-dense/' \
	"$job" > "$T/dense.yaml"
"$HUNTER" run --json "$T/dense.yaml" > "$T/dense" || fail "dense run exited $?"
"$HUNTER" run --json "$job" > "$T/topk" || fail "topk run exited $?"
"$PY" - "$T/dense" "$T/topk" <<'PYEOF' || fail "see above"
import json, sys
def load(p):
    objs = [json.loads(l) for l in open(p) if l.startswith("{")]
    s = [o for o in objs if o["t"] == "summary"][-1]
    crc = {o["rank"]: o["params_crc32"] for o in objs if o["t"] == "event"
           and o["kind"] == "finished" and "params_crc32" in o}
    return s, crc
d, dc = load(sys.argv[1])
c, cc = load(sys.argv[2])
ratio = d["bytes_sent"] / c["bytes_sent"]
print("dense: test_acc %.4f, %d bytes sent; crc %s" % (d["test_acc"], d["bytes_sent"], dc))
print("topk:  test_acc %.4f, %d bytes sent (dense equivalent %d); crc %s" % (
    c["test_acc"], c["bytes_sent"], c["bytes_dense"], cc))
print("accuracy difference %.2f points; %.0fx fewer bytes than dense" % (
    100 * (d["test_acc"] - c["test_acc"]), ratio))
assert d["state"] == c["state"] == "finished"
assert abs(d["test_acc"] - c["test_acc"]) <= 0.01
assert c["bytes_dense"] / c["bytes_sent"] >= 100 and ratio >= 100
for crc in (dc, cc):
    assert sorted(crc) == [0, 1] and len(set(crc.values())) == 1, crc
PYEOF
pass "top-k within a point of dense at 100x+ fewer bytes, ranks identical"
