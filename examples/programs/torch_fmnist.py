#!/usr/bin/env python3
"""torch_fmnist.py: the Fashion-MNIST MLP of hunter's built-in demo, as an
ordinary PyTorch DDP program that hunter runs as a program job
(torch-fmnist.yaml beside it; hunter(1), PROGRAMS).

It reads the rank's place from torch.distributed's env:// variables, so
the same file runs under hunter, under torchrun, or by itself with
--spawn N (torch.multiprocessing).  Through hunter_client it reports its
metrics and epochs, declares its checkpoints, resumes from
HUNTER_RESUME_FROM, takes pause/checkpoint/stop at step boundaries, and
runs hunter's autotune trials (HUNTER_MICRO_BATCH, HUNTER_TRIAL_STEPS).
Outside hunter the client does nothing.

Same model and data as examples/jobs/fmnist-mlp-dp.yaml: 784-256-256-10
with ReLU, pixels scaled to [0, 1] then standardised with the training
set's mean and deviation, SGD with momentum and weight decay, a linear
warm-up then a cosine learning rate; each global batch is cut into
contiguous per-rank slices of one permutation per epoch drawn from the
seed, so the samples seen depend only on seed and global batch.
"""

import argparse
import gzip
import json
import math
import os
import socket
import struct
import sys
import time
from datetime import timedelta

try:
    import hunter_client as hunter
except ImportError:     # run from hunter's tree without installing it
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(
        __file__)), "..", "..", "clients", "python"))
    import hunter_client as hunter

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

FMNIST_MEAN, FMNIST_STD = 0.2860, 0.3530


def load_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    magic, = struct.unpack(">I", data[:4])
    ndim = magic & 0xff
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return np.frombuffer(data, np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load_set(d, prefix):
    def pick(name):
        for suffix in (".gz", ""):
            p = os.path.join(d, name + suffix)
            if os.path.exists(p):
                return p
        raise SystemExit("torch_fmnist: no %s in %s" % (name, d))
    x = load_idx(pick(prefix + "-images-idx3-ubyte"))
    y = load_idx(pick(prefix + "-labels-idx1-ubyte"))
    x = (x.reshape(len(x), -1).astype(np.float32) / 255.0 - FMNIST_MEAN) \
        / FMNIST_STD
    return torch.from_numpy(x), torch.from_numpy(y.astype(np.int64))


def mlp(hidden):
    layers, width = [], 784
    for h in hidden:
        layers += [nn.Linear(width, h), nn.ReLU()]
        width = h
    layers.append(nn.Linear(width, 10))
    return nn.Sequential(*layers)


def lr_at(step, total, base, warmup):
    if step < warmup:
        return base * (step + 1) / warmup
    t = (step - warmup) / max(1, total - warmup)
    return base * 0.5 * (1 + math.cos(math.pi * min(1.0, t)))


def evaluate(model, x, y):
    model.eval()
    correct, loss = 0, 0.0
    with torch.no_grad():
        for i in range(0, len(x), 1000):
            out = model(x[i:i + 1000])
            loss += F.cross_entropy(out, y[i:i + 1000], reduction="sum").item()
            correct += (out.argmax(1) == y[i:i + 1000]).sum().item()
    model.train()
    return correct / len(x), loss / len(x)


def comm_hook(args, ddp, world, steps_per_epoch):
    """The gradient exchange asked for, and the state that counts it."""
    from hunter_client import torch as ht
    if args.compress == "topk":
        state = ht.TopKState(density=args.density, momentum=args.momentum,
                             warmup_steps=int(args.warmup_epochs *
                                              steps_per_epoch))
        ddp.register_comm_hook(state, ht.topk_hook)
    elif args.compress == "powersgd":
        from torch.distributed.algorithms.ddp_comm_hooks import \
            powerSGD_hook as ps
        state = ht.CountingState()
        handed = _count_allreduce()
        psg = ps.PowerSGDState(process_group=None, matrix_approximation_rank=2,
                               start_powerSGD_iter=2, use_error_feedback=True,
                               warm_start=True)

        # PowerSGD's second all-reduce (Q) runs in a callback after the
        # hook returns: each bucket is charged what was handed to
        # all_reduce since the last one, which per step is the same.
        def hook(s, bucket):
            n = bucket.buffer().numel() * bucket.buffer().element_size()
            state._count(bucket, handed.take(), n)
            return ps.powerSGD_hook(psg, bucket)
        ddp.register_comm_hook(None, hook)
    else:
        state = ht.CountingState()
        ddp.register_comm_hook(state, ht.allreduce_hook)
    return state


class _count_allreduce:
    """The bytes handed to dist.all_reduce from now on (PowerSGD's)."""

    def __init__(self):
        self.n, real = 0, dist.all_reduce

        def counting(tensor, *a, **kw):
            self.n += tensor.numel() * tensor.element_size()
            return real(tensor, *a, **kw)
        dist.all_reduce = counting

    def take(self):
        n, self.n = self.n, 0
        return n


def train(args):
    client = hunter.Client(every=args.metrics_every)
    env = client.env
    rank, world = env.rank, env.world_size
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    if world > 1:
        dist.init_process_group("gloo", init_method="env://", timeout=
                                timedelta(seconds=max(30, 3 *
                                                      env.heartbeat_timeout)))
    xtr, ytr = load_set(args.data, "train")
    xte, yte = load_set(args.data, "t10k")
    if args.limit_train:
        xtr, ytr = xtr[:args.limit_train], ytr[:args.limit_train]
    if args.limit_test:
        xte, yte = xte[:args.limit_test], yte[:args.limit_test]
    micro = env.micro_batch or args.batch // world
    gbatch = micro * world
    steps_per_epoch = len(xtr) // gbatch
    total = args.epochs * steps_per_epoch
    model = mlp(args.hidden)
    ddp, state = model, None
    if world > 1:
        ddp = nn.parallel.DistributedDataParallel(model)
        state = comm_hook(args, ddp, world, steps_per_epoch)
    # DGC's momentum correction owns the momentum: the optimizer has none.
    momentum = 0.0 if args.compress == "topk" else args.momentum
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=momentum,
                          weight_decay=args.weight_decay)
    step = 0
    if env.resume_from and not env.trial:
        ck = torch.load(env.resume_from)
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["optim"])
        step = ck["step"]
        print("resumed from %s at step %d" % (env.resume_from, step),
              flush=True)

    def save(path, at):
        tmp = path + ".tmp"
        torch.save({"model": model.state_dict(), "optim": opt.state_dict(),
                    "step": at}, tmp)
        os.replace(tmp, path)

    from hunter_client import torch as ht
    ctl = ht.Controller(client, save=save, start_step=step)
    if env.trial:
        total = step + env.trial_steps
    seen, t_train, sent0 = 0, 0.0, None
    t0 = time.monotonic()
    acc = loss_v = loss = None
    while step < total and not ctl.stop_requested:
        epoch = step // steps_per_epoch
        perm = torch.from_numpy(np.random.default_rng(
            args.seed + epoch).permutation(len(xtr)))
        for b in range(step % steps_per_epoch, steps_per_epoch):
            lo = b * gbatch + rank * micro
            idx = perm[lo:lo + micro]
            for g in opt.param_groups:
                g["lr"] = lr_at(step, total, args.lr, args.warmup_steps)
            with ctl.step():
                tc = time.monotonic()
                out = ddp(xtr[idx])
                loss = F.cross_entropy(out, ytr[idx])
                fwd = time.monotonic() - tc
                opt.zero_grad(set_to_none=True)
                loss.backward()
                tc = time.monotonic()
                opt.step()
                fwd += time.monotonic() - tc
            step += 1
            seen += micro
            if args.pace > 0:
                time.sleep(args.pace)
            last = env.trial and step == total
            if not (client.due() or last):
                if ctl.stop_requested or step >= total:
                    break
                continue
            # The batch's own accuracy: a number of the program's own,
            # which the job screen shows beside the rank's metrics.
            extra = {"batch_acc": (out.argmax(1) == ytr[idx]).float().mean()}
            if state is not None:
                extra.update(bytes_sent=state.last_sent,
                             bytes_dense=state.last_dense)
                if args.compress == "topk":
                    extra["density"] = state.density_now()
            client.metrics(step, loss=loss.item(), samples=seen, epoch=epoch,
                           micro_batch=micro, accum=1, lr=opt.param_groups[0]
                           ["lr"], compute_ms=1000 * fwd,
                           force=last, **extra)
            if ctl.stop_requested or step >= total:
                break
        if step % steps_per_epoch == 0 and not env.trial and rank == 0:
            acc, tl = evaluate(model, xte, yte)
            loss_v = loss.item()
            client.epoch(epoch, epochs=args.epochs, step=step, loss=loss_v,
                         test_acc=acc, test_loss=tl)
            print("epoch %d/%d  step %d  loss %.4f  test_acc %.4f" % (
                epoch + 1, args.epochs, step, loss_v, acc), flush=True)
    t_train = time.monotonic() - t0
    client.idle()           # no more steps: rank 0 evaluates, all wait
    if rank == 0 and not env.trial:
        if acc is None or step % steps_per_epoch != 0:
            acc, _ = evaluate(model, xte, yte)
        result = {"test_acc": acc, "steps": step, "world": world,
                  "samples_per_s": seen * world / max(t_train, 1e-9),
                  "train_s": t_train, "micro_batch": micro}
        if state is not None:
            sent, dense = state.per_step()
            result.update(bytes_sent=state.bytes_sent,
                          bytes_dense=state.bytes_dense,
                          bytes_per_step=sent, dense_per_step=dense)
        client.summary(**result)
        print("result " + json.dumps(result), flush=True)
    if world > 1:
        dist.barrier()      # no rank leaves while a peer is still in one
        dist.destroy_process_group()


def spawned(index, args, port):
    os.environ.update(RANK=str(index), WORLD_SIZE=str(args.spawn),
                      LOCAL_RANK=str(index), MASTER_ADDR="127.0.0.1",
                      MASTER_PORT=str(port))
    train(args)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--batch", type=int, default=256, help="global batch")
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--weight-decay", type=float, default=5e-4)
    p.add_argument("--warmup-steps", type=int, default=100)
    p.add_argument("--hidden", type=int, nargs="+", default=[256, 256])
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--compress", choices=("none", "topk", "powersgd"),
                   default="none")
    p.add_argument("--density", type=float, default=0.001)
    p.add_argument("--warmup-epochs", type=float, default=1.0)
    p.add_argument("--limit-train", type=int, default=0)
    p.add_argument("--limit-test", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--metrics-every", type=float, default=0.5,
                   metavar="SECONDS", help="at most one metrics line a "
                   "SECONDS (0: every step)")
    p.add_argument("--pace", type=float, default=0.0, metavar="SECONDS",
                   help="sleep SECONDS after every step (the tests' way to "
                   "land a kill or a command mid-run on a fast machine)")
    p.add_argument("--spawn", type=int, default=0, metavar="N",
                   help="run N ranks here with torch.multiprocessing")
    args = p.parse_args()
    if args.spawn:
        import torch.multiprocessing as mp
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        mp.spawn(spawned, args=(args, port), nprocs=args.spawn)
    else:
        train(args)


if __name__ == "__main__":
    main()
