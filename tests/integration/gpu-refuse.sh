#!/bin/sh
# A device: cuda job on the embedded cluster (CPU slots only) is refused
# at placement with a reason naming cuda slots, and nothing runs; on a
# node that declares a cuda slot without a device, it fails once.
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

# A node that declares a cuda slot but has no usable device: the worker
# says why and exits before its first step; with no spare node to try,
# the job fails at once instead of re-forming on the same node again.
if [ -e /dev/nvidia0 ]; then
	echo "skipping the no-device half: this machine has a GPU"
	exit 0
fi
cat > "$T/gpu.yaml" <<EOC
cluster: fake-gpu
nodes:
  - {name: gpu0, host: local, rack: r1, devices: {cpu: 1, cuda: 1}}
EOC
set +e
"$HUNTER" run --json --cluster "$T/gpu.yaml" "$T/j.yaml" > "$T/out2" 2> "$T/err2"
rc=$?
set -e
grep '"kind":"failed"' "$T/out2" | cut -c1-300
[ "$rc" = 1 ] || fail "the job exited $rc, expected 1"
[ "$(grep -c '"reason":"no CUDA device' "$T/out2")" = 1 ] ||
	fail "the worker's 'no CUDA device' should come once"
grep -q 'before its first step, and no spare node is free to try; not restarting' \
	"$T/out2" || fail "no give-up event"
! grep -q '"kind":"failover"' "$T/out2" || fail "it re-formed on the same node"
grep -q '"state":"failed"' "$T/out2" || fail "the summary is not failed"
pass "a node without a usable device fails the job once, with the reason"
