#!/usr/bin/env python3
"""The PyTorch peer of `hunter bench gpt`: a GPT-2 of a given shape
(written here from the architecture: learned positions, pre-LayerNorm
blocks of causal attention and a 4C GELU MLP, a final LayerNorm, the head
tied to the token embedding), timed over forward + backward + AdamW steps
on random tokens.

usage: gpt_torch.py L H C T V B [STEPS]
prints one line: "torch ms_per_step tokens_per_s threads first_loss
last_loss peak_rss_kb" (the first step is the untimed warm-up; the peak
RSS is the process's, ru_maxrss)

Run it with Debian's /usr/bin/python3 (python3-torch).  The caller sets
the threads: OMP_NUM_THREADS and OPENBLAS_NUM_THREADS (torch's
set_num_threads does not reach OpenBLAS's own pool), and
OMP_WAIT_POLICY=PASSIVE for more than one.
"""
import math
import os
import resource
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, C, H):
        super().__init__()
        self.H = H
        self.ln_1 = nn.LayerNorm(C)
        self.c_attn = nn.Linear(C, 3 * C)
        self.c_proj = nn.Linear(C, C)
        self.ln_2 = nn.LayerNorm(C)
        self.c_fc = nn.Linear(C, 4 * C)
        self.mlp_proj = nn.Linear(4 * C, C)

    def forward(self, x, mask):
        B, T, C = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=2)
        q = q.view(B, T, self.H, C // self.H).transpose(1, 2)
        k = k.view(B, T, self.H, C // self.H).transpose(1, 2)
        v = v.view(B, T, self.H, C // self.H).transpose(1, 2)
        a = (q @ k.transpose(-2, -1)) / math.sqrt(C // self.H)
        a = F.softmax(a.masked_fill(mask[:, :, :T, :T] == 0, float("-inf")), -1)
        y = (a @ v).transpose(1, 2).contiguous().view(B, T, C)
        x = x + self.c_proj(y)
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, L, H, C, T, V):
        super().__init__()
        self.wte = nn.Embedding(V, C)
        self.wpe = nn.Embedding(T, C)
        self.h = nn.ModuleList([Block(C, H) for _ in range(L)])
        self.ln_f = nn.LayerNorm(C)
        self.register_buffer("mask", torch.tril(torch.ones(T, T)).view(1, 1, T, T))

    def forward(self, idx, targets):
        T = idx.shape[1]
        x = self.wte(idx) + self.wpe(torch.arange(T))
        for b in self.h:
            x = b(x, self.mask)
        logits = self.ln_f(x) @ self.wte.weight.t()
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1))


def main():
    L, H, C, T, V, B = map(int, sys.argv[1:7])
    steps = int(sys.argv[7]) if len(sys.argv) > 7 else 5
    threads = int(os.environ.get("OMP_NUM_THREADS", "1"))
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    m = GPT(L, H, C, T, V)
    opt = torch.optim.AdamW(m.parameters(), lr=3e-4, weight_decay=0.1)
    g = torch.Generator().manual_seed(1)
    idx = torch.randint(0, V, (B, T + 1), generator=g)
    x, y = idx[:, :-1], idx[:, 1:]

    def step():
        opt.zero_grad(set_to_none=True)
        loss = m(x, y)
        loss.backward()
        opt.step()
        return loss.item()
    first = step()      # warm-up: allocations, OpenBLAS's buffers
    t0 = time.perf_counter()
    for _ in range(steps):
        last = step()
    dt = (time.perf_counter() - t0) / steps
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print("torch %.1f %.0f %d %.4f %.4f %d" % (dt * 1e3, B * T / dt, threads,
                                               first, last, rss))


if __name__ == "__main__":
    main()
