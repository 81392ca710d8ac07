#!/bin/sh
# gpt check 1: an independent reference.  hunter trains a GPT-2 of L=2,
# H=2, C=32, T=16, V=256 on a batch of 3 windows for 10 AdamW steps with
# gradient clipping, dumping what each step saw and did (HUNTER_DUMP);
# gpt_reference.py builds the same GPT-2 in PyTorch (Debian's
# python3-torch) from the architecture and hunter's first parameters,
# read by GPT-2's tensor names and layouts, and checks the loss (1e-5
# relative), every tensor's gradient (1e-4) and the parameters after
# every update (1e-4).
. "$SRCDIR/tests/integration/lib.sh"
"$PY" -c 'import torch' 2>/dev/null ||
	fail "python3-torch is not installed (bootstrap installs it)"
head -c 600 /usr/share/common-licenses/GPL-3 > "$T/text.txt"
cat > "$T/ref.yaml" <<YEOF
name: gpt-ref
resources: {ranks: 1}
model: {type: gpt, layers: 2, heads: 2, channels: 32, context: 16}
data: {path: $T/text.txt}
train:
  epochs: 1
  seed: 3
  optimizer: {type: adamw, weight_decay: 0.1, beta1: 0.9, beta2: 0.95, eps: 1e-8}
  lr: {base: 0.001, schedule: constant, warmup_steps: 0}
  batch: {global: 3, micro: 3}
  grad_clip: 1.0
compression: {method: none}
checkpoint: {every_steps: 0, keep: 1}
YEOF
mkdir "$T/dump"
HUNTER_DUMP="$T/dump" "$HUNTER" run --json "$T/ref.yaml" > "$T/run" ||
	fail "hunter run exited $?"
[ "$(jget "$T/run" summary state)" = finished ] || fail "the run did not finish"
[ -f "$T/dump/step-10.params" ] || fail "no dump of step 10"
"$PY" "$SRCDIR/tests/integration/gpt_reference.py" \
	"$HUNTER_STATE_DIR/checkpoints/gpt-ref/config.json" "$T/dump" 10 \
	0.001 0.1 1.0 || fail "hunter's gpt and PyTorch's disagree"
pass "loss, gradients and 10 AdamW steps agree with an independent GPT-2"
