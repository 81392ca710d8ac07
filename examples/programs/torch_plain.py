#!/usr/bin/env python3
"""torch_plain.py: an unmodified torchrun-style PyTorch DDP script, with
nothing of hunter in it: it reads its place from torch.distributed's
env:// variables (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), trains a
small MLP on a fixed synthetic problem over Gloo, prints a line per
epoch and exits 0.  torch-plain.yaml runs it under hunter; torchrun runs
it as it is.

It neither speaks hunter's line protocol nor handles SIGUSR1, so hunter
refuses a checkpoint request with the reason instead of signalling it
(SIGUSR1's default action would end it); a stop is SIGTERM.
"""

import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--steps", type=int, default=50, help="steps an epoch")
    ap.add_argument("--batch", type=int, default=64, help="global batch")
    ap.add_argument("--step-sleep", type=float, default=0.0,
                    help="seconds a step sleeps (to slow it down)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(1)
    w_true = torch.randn(32, 1)
    model = nn.parallel.DistributedDataParallel(
        nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    gen = torch.Generator().manual_seed(100 + rank)
    per_rank = max(1, args.batch // world)
    for epoch in range(1, args.epochs + 1):
        t0, total = time.monotonic(), 0.0
        for _ in range(args.steps):
            x = torch.randn(per_rank, 32, generator=gen)
            loss = nn.functional.mse_loss(model(x), x @ w_true)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
            if args.step_sleep > 0:
                time.sleep(args.step_sleep)
        if rank == 0:
            print("epoch %d/%d  loss %.4f  %.1f s" % (epoch, args.epochs,
                  total / args.steps, time.monotonic() - t0), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
