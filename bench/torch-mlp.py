#!/usr/bin/python3
# bench/torch-mlp.py: the peer of bench/dp-scaling and bench/slow-link in
# PyTorch: hunter's fmnist MLP (784-256-256-10, the same normalisation,
# SGD momentum 0.9, weight decay 5e-4, lr 0.1 with 100 warm-up steps then
# cosine), global batch 128, on Fashion-MNIST.  One process (--threads N),
# or one rank of a DDP group over Gloo (RANK, WORLD_SIZE, MASTER_ADDR,
# MASTER_PORT in the environment) with --hook allreduce|fp16|powersgd
# (PowerSGD: rank 2, error feedback, warm start, compressing from step 2).
# Rank 0 prints one JSON line: samples/s over the training steps of the
# whole run (evaluation left out, as hunter counts it) and test accuracy.
# The caller sets OMP_NUM_THREADS, OPENBLAS_NUM_THREADS (torch's own
# setting does not reach OpenBLAS's pool) and OMP_WAIT_POLICY.
import argparse, gzip, json, math, os, time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn

DATA = "/usr/share/datasets/fashion-mnist"
MEAN, STD = 0.2860, 0.3530


def idx(name):
    with gzip.open(os.path.join(DATA, name)) as f:
        raw = f.read()
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load(kind):
    x = idx("%s-images-idx3-ubyte.gz" % kind).reshape(-1, 784)
    y = idx("%s-labels-idx1-ubyte.gz" % kind)
    x = (torch.from_numpy(x.astype(np.float32)) / 255.0 - MEAN) / STD
    return x, torch.from_numpy(y.astype(np.int64))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--hook", default="none",
                    choices=["none", "allreduce", "fp16", "powersgd"])
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    torch.manual_seed(42)
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256),
                          nn.ReLU(), nn.Linear(256, 10))
    if world > 1:
        from torch.nn.parallel import DistributedDataParallel as DDP
        from torch.distributed.algorithms.ddp_comm_hooks import (
            default_hooks, powerSGD_hook)
        dist.init_process_group("gloo", init_method="env://")
        model = DDP(model)
        if a.hook == "fp16":
            model.register_comm_hook(None, default_hooks.fp16_compress_hook)
        elif a.hook == "powersgd":
            state = powerSGD_hook.PowerSGDState(
                process_group=None, matrix_approximation_rank=2,
                start_powerSGD_iter=2)
            model.register_comm_hook(state, powerSGD_hook.powerSGD_hook)
    x, y = load("train")
    tx, ty = load("t10k")
    per = a.batch // world
    steps = len(x) // a.batch
    total = steps * a.epochs
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9,
                          weight_decay=5e-4)
    lossf = nn.CrossEntropyLoss()
    g = torch.Generator().manual_seed(7)
    step, train_s = 0, 0.0
    for epoch in range(a.epochs):
        perm = torch.randperm(len(x), generator=g)
        t0 = time.monotonic()
        for s in range(steps):
            lr = 0.1 * (step + 1) / 100 if step < 100 else \
                0.05 * (1 + math.cos(math.pi * (step - 100) / (total - 100)))
            for pg in opt.param_groups:
                pg["lr"] = lr
            ids = perm[s * a.batch + rank * per:s * a.batch + (rank + 1) * per]
            opt.zero_grad()
            lossf(model(x[ids]), y[ids]).backward()
            opt.step()
            step += 1
        train_s += time.monotonic() - t0
    if rank == 0:
        with torch.no_grad():
            acc = (model(tx).argmax(1) == ty).float().mean().item()
        print(json.dumps({"samples_per_s": step * a.batch / train_s,
                          "test_acc": acc, "world": world, "hook": a.hook,
                          "threads": a.threads}), flush=True)
    if world > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
