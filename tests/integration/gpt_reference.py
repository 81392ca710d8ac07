#!/usr/bin/env python3
"""An independent GPT-2 in PyTorch, checked against hunter's gpt.

usage: gpt_reference.py CONFIG DUMPDIR STEPS LR WD CLIP

Builds GPT-2 from its architecture (learned positions, pre-LayerNorm
blocks of causal attention and a 4C tanh-GELU MLP, a final LayerNorm, the
output head tied to the token embedding) with the sizes of CONFIG
(hunter's config.json), in float64, from the parameters hunter dumped
before its first step (HUNTER_DUMP: tensors.json, step-0.params).  For
each of STEPS steps it feeds the inputs hunter saw (step-N.inputs), and
compares the loss (1e-5 relative), every tensor's gradient (1e-4
relative: the largest difference over the largest gradient of that
tensor) and, after an AdamW update with GPT-2's weight-decay groups and
clipping by the global norm, every tensor's parameters (1e-4 relative).
One slice is compared apart: the key part of each attn.c_attn.bias.  Its
gradient is zero in exact arithmetic (a softmax does not move when every
score of a row shifts by the same amount), so both sides hold rounding
noise there, 1e-11 in hunter's float32 and 1e-21 here, and Adam, which
divides by the gradient's own size, turns that noise into steps of up to
lr/1000.  There the parameters must stay within 10 * lr / 1000 of each
other, which a wrong update (a decay, a bias correction) would break.
The weights are read by GPT-2's tensor names and layouts ([in, out]
projections), so this also checks that hunter lays them out as the
PyTorch ecosystem does.  Exit 0 when everything agrees.
"""
import json
import math
import os
import struct
import sys

import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)


def floats(path, n=None):
    with open(path, "rb") as f:
        b = f.read()
    a = torch.tensor(struct.unpack("<%df" % (len(b) // 4), b))
    return a if n is None else a[:n]


def ints(path):
    with open(path, "rb") as f:
        b = f.read()
    return torch.tensor(struct.unpack("<%di" % (len(b) // 4), b))


class Ref:
    def __init__(self, cfg, tensors, flat):
        self.L, self.H = cfg["n_layer"], cfg["n_head"]
        self.C, self.T = cfg["n_embd"], cfg["n_positions"]
        self.V = cfg["vocab_size"]
        self.p = {}
        for t in tensors:
            n = math.prod(t["shape"])
            self.p[t["name"]] = flat[t["offset"]:t["offset"] + n].reshape(
                t["shape"]).clone().requires_grad_(True)

    def loss(self, idx, tgt):
        p, C, H = self.p, self.C, self.H
        B, T = idx.shape
        x = p["wte.weight"][idx] + p["wpe.weight"][:T]
        mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
        for i in range(self.L):
            h = "h.%d." % i
            a = F.layer_norm(x, (C,), p[h + "ln_1.weight"], p[h + "ln_1.bias"], 1e-5)
            qkv = a @ p[h + "attn.c_attn.weight"] + p[h + "attn.c_attn.bias"]
            q, k, v = qkv.split(C, dim=2)
            q, k, v = (z.view(B, T, H, C // H).transpose(1, 2) for z in (q, k, v))
            s = (q @ k.transpose(-1, -2)) / math.sqrt(C // H)
            s = s.masked_fill(~mask, float("-inf")).softmax(-1)
            y = (s @ v).transpose(1, 2).reshape(B, T, C)
            x = x + y @ p[h + "attn.c_proj.weight"] + p[h + "attn.c_proj.bias"]
            a = F.layer_norm(x, (C,), p[h + "ln_2.weight"], p[h + "ln_2.bias"], 1e-5)
            m = F.gelu(a @ p[h + "mlp.c_fc.weight"] + p[h + "mlp.c_fc.bias"],
                       approximate="tanh")
            x = x + m @ p[h + "mlp.c_proj.weight"] + p[h + "mlp.c_proj.bias"]
        x = F.layer_norm(x, (C,), p["ln_f.weight"], p["ln_f.bias"], 1e-5)
        logits = x @ p["wte.weight"].t()
        return F.cross_entropy(logits.reshape(-1, self.V), tgt.reshape(-1))


def worst(a, b):
    return ((a - b).abs().max() / b.abs().max().clamp_min(1e-30)).item()


def params_worst(q, ref, tensors, C, lr):
    """The worst relative difference of the parameters, and whether the
    key biases (see the top) stayed close."""
    w, keys_ok = 0.0, True
    for t in tensors:
        o, n = t["offset"], math.prod(t["shape"])
        a, b = q[o:o + n], ref.p[t["name"]].detach().reshape(-1)
        if t["name"].endswith("attn.c_attn.bias"):
            keys_ok &= (a[C:2 * C] - b[C:2 * C]).abs().max().item() <= 10 * lr / 1000
            a = torch.cat((a[:C], a[2 * C:]))
            b = torch.cat((b[:C], b[2 * C:]))
        w = max(w, worst(a, b))
    return w, keys_ok


def main():
    cfg = json.load(open(sys.argv[1]))
    d = sys.argv[2]
    steps, lr, wd, clip = int(sys.argv[3]), float(sys.argv[4]), \
        float(sys.argv[5]), float(sys.argv[6])
    tensors = json.load(open(os.path.join(d, "tensors.json")))
    names = [t["name"] for t in tensors]
    for want in ("wte.weight", "wpe.weight", "h.0.attn.c_attn.weight",
                 "h.0.mlp.c_proj.weight", "ln_f.weight"):
        assert want in names, "no %s among %s" % (want, names)
    C = cfg["n_embd"]
    shapes = {t["name"]: t["shape"] for t in tensors}
    assert shapes["h.0.attn.c_attn.weight"] == [C, 3 * C], shapes
    assert shapes["h.0.mlp.c_proj.weight"] == [4 * C, C], shapes
    n = sum(math.prod(t["shape"]) for t in tensors)
    ref = Ref(cfg, tensors, floats(os.path.join(d, "step-0.params"), n))
    T = cfg["n_positions"]
    # GPT-2's groups: decay on the projection weights only.
    decay = [ref.p[k] for k in names if ref.p[k].dim() >= 2 and
             k not in ("wte.weight", "wpe.weight")]
    rest = [ref.p[k] for k in names if not any(ref.p[k] is q for q in decay)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": wd},
                             {"params": rest, "weight_decay": 0.0}],
                            lr=lr, betas=(0.9, 0.95), eps=1e-8)
    bad = 0
    for s in range(1, steps + 1):
        tok = ints(os.path.join(d, "step-%d.inputs" % s))
        B = tok.numel() // (2 * T)
        idx, tgt = tok[:B * T].view(B, T), tok[B * T:].view(B, T)
        meta = json.load(open(os.path.join(d, "step-%d.json" % s)))
        opt.zero_grad()
        loss = ref.loss(idx, tgt)
        loss.backward()
        rel = abs(loss.item() - meta["loss"]) / abs(loss.item())
        g = floats(os.path.join(d, "step-%d.grads" % s), n)
        gw = max(worst(g[t["offset"]:t["offset"] + math.prod(t["shape"])],
                       ref.p[t["name"]].grad.reshape(-1)) for t in tensors)
        torch.nn.utils.clip_grad_norm_(list(ref.p.values()), clip)
        opt.step()
        q = floats(os.path.join(d, "step-%d.params" % s), n)
        pw, keys_ok = params_worst(q, ref, tensors, C, lr)
        ok = rel <= 1e-5 and gw <= 1e-4 and pw <= 1e-4 and keys_ok
        bad += not ok
        print("step %2d: loss %.9f (hunter %.9f, rel %.1e); worst gradient "
              "%.1e, parameters %.1e%s%s" % (s, loss.item(), meta["loss"], rel,
                                              gw, pw, "" if keys_ok else
                                              ", key biases apart", "" if ok
                                              else "  FAIL"))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
