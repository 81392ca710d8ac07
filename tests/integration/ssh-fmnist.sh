#!/bin/sh
# SSH nodes, check 1 (real data): fmnist-mlp (examples/jobs/
# fmnist-mlp-dp.yaml on 2 ranks, micro 128, spread placement) on two
# nodes reached over SSH reaches >= 0.88 test accuracy, with one rank on
# each node and identical final weights on both.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/integration/sshd.sh"
[ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] ||
	fail "dataset-fashion-mnist is not installed"
sshd_start
known_hosts_trust
ssh_cluster "$T/cluster.yaml" n0 n1
sed 's/ranks: 4/ranks: 2/; s/micro: 64/micro: 128/; s/placement: rack/placement: spread/' \
	"$SRCDIR/examples/jobs/fmnist-mlp-dp.yaml" > "$T/dp2.yaml"
grep -q 'ranks: 2' "$T/dp2.yaml" && grep -q 'micro: 128' "$T/dp2.yaml" ||
	fail "could not edit the example job"
rc=0
"$HUNTER" run --json --cluster "$T/cluster.yaml" "$T/dp2.yaml" > "$T/out" 2>&1 || rc=$?
[ $rc -eq 0 ] || { tail -n 20 "$T/out"; fail "hunter run exited $rc"; }
"$PY" - "$T/out" <<'PYEOF' || fail "fmnist over SSH: see above"
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
summary = [o for o in objs if o["t"] == "summary"][-1]
nodes = {o.get("node") for o in objs if o["t"] == "metrics" and o.get("job") == "fmnist-mlp-dp"}
crc = {o["rank"]: o["params_crc32"] for o in objs
       if o["t"] == "event" and o["kind"] == "finished" and "params_crc32" in o}
print("state %s, test_acc %.4f, %.0f samples/s, ranks on %s, crc %s" % (
    summary["state"], summary["test_acc"], summary["samples_per_s"],
    sorted(n for n in nodes if n), crc))
assert summary["state"] == "finished", summary
assert summary["test_acc"] >= 0.88, "test_acc %.4f < 0.88" % summary["test_acc"]
assert {"n0", "n1"} <= nodes, nodes
assert sorted(crc) == [0, 1] and len(set(crc.values())) == 1, crc
PYEOF
pass "fmnist-mlp on 2 SSH nodes reaches >= 0.88"
