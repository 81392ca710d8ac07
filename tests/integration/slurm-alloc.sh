#!/bin/sh
# Slurm, check 1: `salloc -N2 hunter run JOB.yaml --json`, non-interactive
# and with no --cluster: the allocation is the cluster.  fmnist-mlp with
# top-k compression (examples/jobs/fmnist-mlp-topk.yaml, 4 epochs at
# density 0.01) trains on 2 ranks to test_acc >= 0.87, one rank on each
# Slurm node, and its Gloo traffic goes between the two namespaces'
# addresses: the placed event names them (Slurm's NodeAddr), and while it
# trains a worker holds a TCP connection from one to the other.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/slurm/slurm-lib.sh"
[ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] ||
	fail "dataset-fashion-mnist is not installed"
slurm_up 1 2
a1=$(slurm_addr 1)
a2=$(slurm_addr 2)
sed 's/epochs: 10/epochs: 4/; s/density: 0.001/density: 0.01/' \
	"$SRCDIR/examples/jobs/fmnist-mlp-topk.yaml" > "$T/topk.yaml"
grep -q 'epochs: 4' "$T/topk.yaml" && grep -q 'density: 0.01' "$T/topk.yaml" ||
	fail "could not edit the example job"
# The TCP connections of n1's namespace, with their processes, while it runs.
slurm_sample_tcp 1 "$T/ss" &
sampler=$!
cleanup_hooks="kill $sampler 2>/dev/null; $cleanup_hooks"
rc=0
salloc -N2 "$HUNTER" run "$T/topk.yaml" --json < /dev/null > "$T/out" 2> "$T/err" || rc=$?
kill "$sampler" 2>/dev/null || true
[ $rc -eq 0 ] || { tail -n 20 "$T/out" "$T/err"; fail "salloc hunter run exited $rc"; }
"$PY" - "$T/out" "$a1" "$a2" <<'PYEOF' || fail "fmnist in the allocation: see above"
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
a1, a2 = sys.argv[2], sys.argv[3]
s = [o for o in objs if o["t"] == "summary"][-1]
placed = [o["reason"] for o in objs if o["t"] == "event" and o["kind"] == "placed"]
rank_node = {o["rank"]: o["node"] for o in objs if o["t"] == "metrics"
             and o.get("job") == "fmnist-mlp-topk"}
crc = {o["rank"]: o["params_crc32"] for o in objs if o["t"] == "event"
       and o["kind"] == "finished" and "params_crc32" in o}
print("state %s, test_acc %.4f; %s; ranks on %s; crc %s" % (s["state"],
      s["test_acc"], placed, rank_node, crc))
assert s["state"] == "finished", s
assert s["test_acc"] >= 0.87, "test_acc %.4f < 0.87" % s["test_acc"]
assert sorted(rank_node.values()) == ["n1", "n2"], rank_node
assert placed == ["2 ranks on n1 (%s), n2 (%s)" % (a1, a2)], placed
assert sorted(crc) == [0, 1] and len(set(crc.values())) == 1, crc
PYEOF
# A worker ("hunter") of n1 connected to n2's address, or n2's to n1's.
grep ESTAB "$T/ss" | grep '"hunter"' | grep -F "$a1:" | grep -q -F "$a2:" || {
	grep ESTAB "$T/ss" | sort -u | head
	fail "no TCP connection of a worker between $a1 and $a2"
}
echo "gloo: $(grep ESTAB "$T/ss" | grep '"hunter"' | grep -F "$a1:" | grep -F "$a2:" |
	awk '{ print $4, "<->", $5 }' | sort -u | head -n 2 | tr '\n' ' ')"
pass "fmnist-mlp-topk on 2 Slurm nodes, one rank each, Gloo between $a1 and $a2"
