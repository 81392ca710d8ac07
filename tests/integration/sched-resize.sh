#!/bin/sh
# A resize (issue 25, check 3): an elastic gpt with ZeRO-1 (ranks: {min:
# 2, max: 4}) and an elastic mlp with top-k compression ({min: 1, max:
# 2}) each start at their min and are grown by the scheduler while they
# train.  Across the resize the loss goes on as an undisturbed run's at
# the same steps: its mean over the ten steps after the resize is not
# above the ten before by more than an undisturbed run moves there
# (three of its standard deviations, and 0.01); the optimizer's shards are re-cut (ZeRO-1) and the top-k
# residuals folded; and the checkpoint written after the resize loads in
# PyTorch and gives a loss near the run's.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/integration/gpt-lib.sh"
. "$SRCDIR/tests/integration/sched-lib.sh"
sched_config 2s 0.5s
gpt_text "$T/text" 60000
gpt_job "$T/gpt.yaml" rgpt "$T/text" '{min: 2, max: 4}' '  zero: 1
  optimizer: {type: adamw}' 'checkpoint: {every_steps: 20, keep: 2}'
sed -i 's/checkpoint: {every_steps: 0, keep: 2}//; s/epochs: 1/epochs: 2/; s/placement: spread/placement: pack/' "$T/gpt.yaml"
mkdata "$T/data" 2400 200
small_job "$T/mlp.yaml" rmlp "$T/data" 'compression: {method: topk, density: 0.05, warmup_epochs: 0}'
sed -i "s/ranks: 1/ranks: {min: 1, max: 2}/; s/^compression: {method: none}\$//; s/epochs: 2/epochs: 4/; s/micro: 32/micro: 16/; s/every_steps: 0/every_steps: 10/" "$T/mlp.yaml"

# run NAME FILE OUT STATE: the job, its steps traced, in a state dir;
# a sample costs 20 ms more on the gpt's "device", 2 ms on the mlp's, so
# that more ranks pay, and the scheduler grows each.
run() {
	HUNTER_STATE_DIR="$4" "$HUNTER" run --json --trace-steps 100000 \
	    --inject slow-sample=$(case $1 in gpt*) echo 20000 ;; *) echo 2000 ;; esac) \
	    "$2" > "$3" 2>&1 ||
		{ rc=$?; tail -n 5 "$3" | cut -c1-300; fail "$1: hunter run exited $rc"; }
	for p in "$4"/nodes/*/agent.pid; do kill "$(cat "$p")" 2>/dev/null || true; done
}
for job in gpt mlp; do
	run "$job" "$T/$job.yaml" "$T/$job.out" "$T/$job-state"
	sed 's/ranks: {min: [0-9]*, max: [0-9]*}/ranks: 2/' "$T/$job.yaml" > "$T/$job-fixed.yaml"
	run "$job fixed" "$T/$job-fixed.yaml" "$T/$job-fixed.out" "$T/$job-fixed-state"
done
"$PY" - "$T" <<'PYEOF' || fail "see above"
import json, sys
d = sys.argv[1]
def load(p):
    return [json.loads(l) for l in open(p) if l.startswith("{")]
for job in ("gpt", "mlp"):
    a, b = load("%s/%s.out" % (d, job)), load("%s/%s-fixed.out" % (d, job))
    rs = [o for o in a if o["t"] == "event" and o["kind"] == "resized"]
    assert rs and rs[0]["to"] > rs[0]["from"], "%s: no resize up: %s" % (job, rs)
    gen = [o.get("generation", 0) for o in a if o["t"] == "step"]
    steps_a = {}
    for o in a:
        if o["t"] == "step":
            steps_a[o["step"]] = o["loss"]      # the newest generation's
    steps_b = {o["step"]: o["loss"] for o in b if o["t"] == "step"}
    first = min(o["step"] for o in a if o["t"] == "step" and o.get("generation", 0) >= 1)
    before = [steps_a[s] for s in range(first - 10, first)]
    after = [steps_a[s] for s in range(first, first + 10)]
    # The noise of the undisturbed run over the same steps: how far its
    # mean over ten steps moves from the ten before.
    ub = [steps_b[s] for s in range(first - 10, first)]
    ua = [steps_b[s] for s in range(first, first + 10)]
    mean = lambda v: sum(v) / len(v)
    sd = (sum((x - mean(ub + ua)) ** 2 for x in ub + ua) / 19) ** 0.5
    jump, noise = mean(after) - mean(before), abs(mean(ua) - mean(ub)) + 3 * sd
    sa = [o for o in a if o["t"] == "summary"][-1]
    print("%s: %d -> %d ranks at step %d; loss over the ten steps before %.4f, "
          "after %.4f (a jump of %.4f; the undisturbed run's noise there %.4f); "
          "final %s" % (job, rs[0]["from"], rs[0]["to"], first, mean(before),
          mean(after), jump, noise, sa["state"]))
    assert jump <= noise + 0.01, "the loss jumped at the resize"
    assert sa["state"] == "finished", sa
PYEOF
# The checkpoint after the resize, in PyTorch.
ck=$(jget "$T/gpt.out" summary checkpoint)
/usr/bin/python3 - "$ck" "$SRCDIR/tests/integration" "$T/text" <<'PYEOF' || fail "PyTorch cannot use the checkpoint"
import json, math, os, sys
import torch
sys.path.insert(0, sys.argv[2])
from safetensors_read import load
meta, tensors = load(sys.argv[1])
cfg = json.load(open(os.path.join(os.path.dirname(sys.argv[1]), "config.json")))
sd = {}
for name, (dtype, shape, raw) in tensors.items():
    if dtype == "F32" and not name.startswith(("extra.", "opt.", "adam")):
        sd[name] = torch.frombuffer(bytearray(raw), dtype=torch.float32).reshape(shape)
C, L, H, V = cfg["n_embd"], cfg["n_layer"], cfg["n_head"], cfg["vocab_size"]
assert sd["wte.weight"].shape == (V, C) and sd["h.%d.mlp.c_fc.weight" % (L - 1)].shape == (C, 4 * C)
# GPT-2's forward (Conv1D layout), on a window of the text.
text = open(sys.argv[3], "rb").read()[:cfg["n_positions"] + 1]
idx = torch.tensor([list(text[:-1])])
tgt = torch.tensor([list(text[1:])])
F = torch.nn.functional
x = sd["wte.weight"][idx] + sd["wpe.weight"][:idx.shape[1]]
T = idx.shape[1]
mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
for i in range(L):
    h = "h.%d." % i
    a = F.layer_norm(x, (C,), sd[h + "ln_1.weight"], sd[h + "ln_1.bias"], 1e-5)
    q, k, v = (a @ sd[h + "attn.c_attn.weight"] + sd[h + "attn.c_attn.bias"]).split(C, dim=2)
    q, k, v = (z.view(1, T, H, C // H).transpose(1, 2) for z in (q, k, v))
    s = ((q @ k.transpose(-1, -2)) / math.sqrt(C // H)).masked_fill(~mask, float("-inf")).softmax(-1)
    x = x + (s @ v).transpose(1, 2).reshape(1, T, C) @ sd[h + "attn.c_proj.weight"] + sd[h + "attn.c_proj.bias"]
    a = F.layer_norm(x, (C,), sd[h + "ln_2.weight"], sd[h + "ln_2.bias"], 1e-5)
    x = x + F.gelu(a @ sd[h + "mlp.c_fc.weight"] + sd[h + "mlp.c_fc.bias"], approximate="tanh") @ sd[h + "mlp.c_proj.weight"] + sd[h + "mlp.c_proj.bias"]
x = F.layer_norm(x, (C,), sd["ln_f.weight"], sd["ln_f.bias"], 1e-5)
loss = F.cross_entropy((x @ sd["wte.weight"].t()).reshape(-1, V), tgt.reshape(-1)).item()
print("PyTorch: %d tensors; loss %.3f on a window of the text (ln 256 = %.3f)" % (len(sd), loss, math.log(256)))
assert loss < math.log(256), loss
PYEOF
pass "resizes of a ZeRO-1 gpt and a top-k mlp: the loss went on; the checkpoint loads in PyTorch"
