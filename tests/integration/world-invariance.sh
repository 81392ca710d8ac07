#!/bin/sh
# Issue 3, check 2: a 2-rank run at micro-batch 64 and a 1-rank run at
# batch 128 (same global batch, same seed, so the same samples in the same
# order) agree on the loss to 1e-4 relative at each of the first 40 steps
# and to 1e-3 up to step 50.  The two add the same gradients in another
# order, a float32 rounding of about 1e-7 that SGD with momentum grows
# about 1.5x a step: on an AVX-512 Xeon, 8e-6 at step 42 and 1.2e-4 at
# step 50, so a bound of 1e-4 to step 50 held on some CPUs only.  A
# wrong split (other samples, a wrong average) differs by 1e-2 and more
# from the first steps.
. "$SRCDIR/tests/integration/lib.sh"
[ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] ||
	fail "dataset-fashion-mnist is not installed"
mk() {
	cat > "$T/$1.yaml" <<YEOF
name: inv$1
resources: {ranks: $1}
model: {type: mlp, hidden: [256, 256]}
train:
  epochs: 1
  seed: 42
  optimizer: {type: sgd, momentum: 0.9, weight_decay: 5e-4}
  lr: {base: 0.05, schedule: cosine, warmup_steps: 10}
  batch: {global: 128, micro: $2}
compression: {method: none}
checkpoint: {every_steps: 0}
YEOF
}
mk 1 128
mk 2 64
for w in 1 2; do
	"$HUNTER" run --json --trace-steps 50 "$T/$w.yaml" \
		> "$T/out$w" || fail "world $w: hunter run exited $?"
done
"$PY" - "$T/out1" "$T/out2" <<'PYEOF' || fail "losses differ"
import json, sys
def steps(p):
    return {o["step"]: o["loss"] for o in map(json.loads, open(p))
            if o.get("t") == "step"}
a, b = steps(sys.argv[1]), steps(sys.argv[2])
assert sorted(a) == list(range(1, 51)) == sorted(b), (sorted(a), sorted(b))
rel = {s: abs(a[s] - b[s]) / abs(a[s]) for s in a}
early = max(rel[s] for s in range(1, 41))
late = max(rel[s] for s in range(41, 51))
print("steps 1..50: loss %.5f -> %.5f; worst relative difference "
      "%.2e to step 40, %.2e to step 50" % (a[1], a[50], early, late))
assert a[50] < a[1] * 0.7, "loss did not fall"
assert early <= 1e-4 and late <= 1e-3
PYEOF
pass "world size 1 and 2 agree"
