#!/bin/sh
# A device: cuda job on the embedded cluster (CPU slots only) is refused
# at placement with a reason naming cuda slots, and nothing runs; so is
# one on a node that declares a cuda slot its agent has no GPU for.
. "$SRCDIR/tests/integration/lib.sh"
mkdata "$T/data" 200 32
small_job "$T/j.yaml" gjob "$T/data"
sed -i 's/resources: {ranks: 1}/resources: {ranks: 1, device: cuda}/' "$T/j.yaml"
grep -q 'device: cuda' "$T/j.yaml" || fail "the job is not a cuda job"
set +e
"$HUNTER" run --json "$T/j.yaml" > "$T/out" 2> "$T/err"
rc=$?
set -e
cat "$T/err"
[ "$rc" = 1 ] || fail "launch exited $rc, expected 1"
grep -q "needs 1 cuda slots" "$T/err" || fail "the reason does not name cuda slots"
grep -q "has 0 free" "$T/err" || fail "the reason does not say none are free"
grep -q '"kind":"refused"' "$T/out" || fail "no refused event"
! grep -q '"t":"metrics","scope":"rank"' "$T/out" || fail "a rank ran"
pass "cuda job refused on a cluster without cuda slots"

# A node that declares a cuda slot but whose agent sees no GPU (NVML)
# gets none for placement: the cuda job is refused with both reasons,
# and nothing runs.  (On a machine with a GPU this half is skipped.)
if [ -e /dev/nvidia0 ]; then
	echo "skipping the no-device half: this machine has a GPU"
	exit 0
fi
cat > "$T/gpu.yaml" <<EOC
cluster: fake-gpu
nodes:
  - {name: gpu0, host: local, rack: r1, devices: {cpu: 1, cuda: 1}}
EOC
# hunter check counts its cuda slots the same way: none free of one.
"$HUNTER" check --cluster "$T/gpu.yaml" > "$T/check" 2>&1 || true
cat "$T/check"
grep -qE '^gpu0 .* 1/1 +0/1 +OpenBLAS ' "$T/check" || fail "hunter check: FREE-CUDA is not 0/1"
set +e
"$HUNTER" run --json --cluster "$T/gpu.yaml" "$T/j.yaml" > "$T/out2" 2> "$T/err2"
rc=$?
set -e
grep '"kind":"refused"' "$T/out2" | cut -c1-300
[ "$rc" = 1 ] || fail "the job exited $rc, expected 1"
grep -q 'node gpu0 declares 1 cuda slot but its agent sees 0 GPUs' "$T/out2" ||
	fail "no event naming the node's missing GPU"
grep -q "needs 1 cuda slots" "$T/err2" || fail "the job was not refused at placement"
! grep -q '"kind":"placed"' "$T/out2" || fail "the job was placed"
pass "a node without a GPU gets no cuda rank"

# A rank that fails by itself before its first step (here: training
# images cut after their header, which the check before placing reads
# but the loader does not get past), on a cluster with no spare to move
# it to, fails the job once instead of re-forming on the same node again
# and again.
mkdir "$T/nodata"
cp "$T"/data/*labels* "$T"/data/t10k-images* "$T/nodata/"
"$PY" -c 'import gzip, sys
d = gzip.open(sys.argv[1]).read()
gzip.open(sys.argv[2], "wb").write(d[:16 + 100])' \
	"$T/data/train-images-idx3-ubyte.gz" "$T/nodata/train-images-idx3-ubyte.gz"
sed 's/device: cuda/device: cpu/' "$T/j.yaml" |
	sed "s|path: $T/data|path: $T/nodata|" > "$T/j2.yaml"
grep -q "path: $T/nodata" "$T/j2.yaml" || fail "could not edit the job"
set +e
"$HUNTER" run --json --cluster "$T/gpu.yaml" "$T/j2.yaml" > "$T/out3" 2> "$T/err3"
rc=$?
set -e
grep '"kind":"failed"' "$T/out3" | cut -c1-300
[ "$rc" = 1 ] || fail "the job exited $rc, expected 1"
[ "$(grep -c '"kind":"failed".*nodata/train-images-idx3-ubyte.gz: truncated' "$T/out3")" = 2 ] ||
	fail "the rank's reason should come once, and once more in the job's"
grep -q 'before its first step, and no spare node is free to try; not restarting' \
	"$T/out3" || fail "no give-up event"
! grep -q '"kind":"failover"' "$T/out3" || fail "it re-formed on the same node"
grep -q '"state":"failed"' "$T/out3" || fail "the summary is not failed"
pass "a rank that cannot start fails the job once, with its reason"
