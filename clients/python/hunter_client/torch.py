"""hunter_client.torch: hunter's program jobs with PyTorch.

Import it only where torch is installed (the package itself does not
need torch).  It gives:

* ``Controller``: a step-boundary controller.  Commands from hunter
  (checkpoint, pause, resume, stop) and the job's periodic checkpoints
  become calls at a step boundary on which every rank agrees (a small
  MAX all-reduce of the ranks' command counters, every few steps: about
  every 0.1 s of training), so a data-parallel group pauses, saves and
  stops at the same step without a collective left hanging::

      ctl = Controller(client, save=lambda path, step: torch.save(...))
      for batch in loader:
          with ctl.step():
              ... forward, backward, optimizer.step() ...
          if ctl.stop_requested:
              break

* ``TopKState`` and ``topk_hook``: a DDP communication hook that does
  what hunter's built-in top-k compressor does: each rank sends the
  largest `density` share of its accumulated gradient (error feedback),
  with momentum correction and factor masking (DGC: use the optimizer
  without momentum), a geometric warm-up from 25%, indices and fp16
  values exchanged in one all-gather; the bytes it hands to the
  collective are counted (``bytes_sent``) against the dense equivalent
  (``bytes_dense``).

* ``CountingState`` and ``allreduce_hook``: the dense all-reduce, with
  the same counters, for comparing in one script.
"""

import math
import time

import torch
import torch.distributed as dist

from . import COMMANDS

__all__ = ["Controller", "TopKState", "topk_hook", "CountingState",
           "allreduce_hook"]

# The densities of a warm-up start here, as DGC's do.
WARMUP_DENSITY = 0.25


class Controller:
    """Commands and checkpoints at step boundaries (see the module).

    client: a hunter_client.Client.  save(path, step): write a
    checkpoint of step to path; called on rank 0 only (save_all: on
    every rank), after which the checkpoint is declared to hunter.
    every: checkpoint every N steps (default HUNTER_CHECKPOINT_EVERY;
    0: only when asked).  save_on_stop: checkpoint before stopping.
    period_s: how much training time between two agreements.
    """

    def __init__(self, client, save=None, every=None, save_on_stop=True,
                 save_all=False, period_s=0.1, group=None, start_step=0):
        self.client = client
        self.env = client.env
        self.save = save
        self.every = self.env.checkpoint_every if every is None else every
        self.save_on_stop = save_on_stop
        self.save_all = save_all
        self.period_s = period_s
        self.group = group
        self.steps = start_step
        self.stop_requested = False
        self.saved_step = None
        self._done = {c: 0 for c in COMMANDS}
        self._next = start_step + 1
        self._slowest = 0.0
        self._t0 = None

    # A step as a context: its end is the boundary.
    def step(self):
        return _Step(self)

    def _world(self):
        return dist.get_world_size(self.group) \
            if dist.is_available() and dist.is_initialized() else 1

    def _rank(self):
        return dist.get_rank(self.group) \
            if dist.is_available() and dist.is_initialized() else 0

    def checkpoint(self, step=None):
        """Save now (all ranks call it; rank 0 writes) and declare it."""
        step = self.steps if step is None else step
        if self.save is None or self.saved_step == step:
            return None
        path = None
        if self.save_all or self._rank() == 0:
            path = self.client.checkpoint_path(step)
            if self.save_all and self._world() > 1:
                path = path + ".rank%d" % self._rank()
            self.save(path, step)
            self.client.checkpoint_done(step, path)
        self.saved_step = step
        return path

    def boundary(self, seconds=None):
        """The end of a step (with: as a context, called for you)."""
        self.steps += 1
        step = self.steps
        if seconds is not None:
            self._slowest = max(self._slowest, seconds)
        if self.env.trial:
            if step >= self.env.trial_steps:
                self.stop_requested = True
            return
        if self.every and step % self.every == 0:
            self.checkpoint(step)
        if self.client.active and step >= self._next:
            self._agree(step)

    def _agree(self, step):
        want = torch.tensor([float(self.client.requested(c)) for c in
                             ("stop", "pause", "checkpoint")] +
                            [self._slowest], dtype=torch.float64)
        if self._world() > 1:
            dist.all_reduce(want, op=dist.ReduceOp.MAX, group=self.group)
        stop, pause, ckpt, slowest = want.tolist()
        self._slowest = 0.0
        # Every rank computes the same period from the same slowest step.
        self._next = step + max(1, min(256, int(self.period_s /
                                                max(slowest, 1e-6))))
        if ckpt > self._done["checkpoint"]:
            self._done["checkpoint"] = int(ckpt)
            self.checkpoint(step)
        if stop > self._done["stop"]:
            self._done["stop"] = int(stop)
            if self.save_on_stop:
                self.checkpoint(step)
            self.stop_requested = True
            return
        if pause > self._done["pause"]:
            self._done["pause"] = int(pause)
            self._hold(step)

    def _hold(self, step):
        """Held at step until a resume (or a stop) comes to this rank;
        the first collective after it waits for the others."""
        self.client.paused(step)
        while self.client.active:
            self.client.wait(1.0)
            if self.client.requested("resume") > self._done["resume"]:
                self._done["resume"] = self.client.requested("resume")
                break
            if self.client.requested("stop") > self._done["stop"]:
                break
        self.client.resumed(step)
        self._next = step + 1     # agree again at once: a stop may wait


class _Step:
    def __init__(self, ctl):
        self.ctl = ctl

    def __enter__(self):
        self.t0 = time.monotonic()
        return self

    def __exit__(self, kind, value, tb):
        if kind is None:
            self.ctl.boundary(time.monotonic() - self.t0)
        return False


class CountingState:
    """Bytes handed to the collectives by a hook, in all and per step."""

    def __init__(self, process_group=None):
        self.process_group = process_group
        self.bytes_sent = 0
        self.bytes_dense = 0
        self.steps = 0
        self.last_sent = self.last_dense = 0     # of the last step
        self._sent = self._dense = 0

    def _world(self):
        return dist.get_world_size(self.process_group)

    def _count(self, bucket, sent, dense):
        self.bytes_sent += sent
        self.bytes_dense += dense
        self._sent += sent
        self._dense += dense
        if bucket.is_last():
            self.steps += 1
            self.last_sent, self.last_dense = self._sent, self._dense
            self._sent = self._dense = 0

    def per_step(self):
        """(bytes sent, dense bytes) per step so far."""
        s = max(1, self.steps)
        return self.bytes_sent / s, self.bytes_dense / s


def allreduce_hook(state, bucket):
    """The dense average, counted."""
    t = bucket.buffer()
    t.div_(state._world())
    n = t.numel() * t.element_size()
    state._count(bucket, n, n)
    fut = dist.all_reduce(t, group=state.process_group,
                          async_op=True).get_future()
    return fut.then(lambda f: f.value()[0])


class TopKState(CountingState):
    """The top-k hook's settings and per-bucket state (see the module).
    warmup_steps: steps over which the density falls from 25% to the
    target (0: none).  momentum: of the momentum correction; run the
    optimizer without momentum when it is on."""

    def __init__(self, process_group=None, density=0.001, warmup_steps=0,
                 momentum=0.9, error_feedback=True, momentum_correction=True,
                 fp16=True):
        super().__init__(process_group)
        if not 0 < density <= 1:
            raise ValueError("density must be in (0, 1], got %r" % density)
        self.density = density
        self.warmup_steps = warmup_steps
        self.momentum = momentum
        self.error_feedback = error_feedback
        self.momentum_correction = momentum_correction and error_feedback \
            and momentum > 0
        self.fp16 = fp16
        self.u = {}
        self.v = {}

    def density_now(self):
        d = self.density
        if self.warmup_steps <= 0 or d >= WARMUP_DENSITY or \
                self.steps >= self.warmup_steps:
            return d
        return WARMUP_DENSITY * (d / WARMUP_DENSITY) ** (
            self.steps / self.warmup_steps)

    def state_dict(self):
        return {"u": self.u, "v": self.v, "steps": self.steps}

    def load_state_dict(self, sd):
        self.u, self.v = sd.get("u", {}), sd.get("v", {})
        self.steps = sd.get("steps", 0)


def topk_hook(state, bucket):
    """DDP communication hook: top-k of the accumulated gradient."""
    world = state._world()
    g = bucket.buffer()
    i = bucket.index()
    n = g.numel()
    acc = g
    if state.momentum_correction:
        u = state.u.get(i)
        if u is None or u.numel() != n:
            u = state.u[i] = torch.zeros_like(g)
        u.mul_(state.momentum).add_(g)
        acc = u
    if state.error_feedback:
        v = state.v.get(i)
        if v is None or v.numel() != n:
            v = state.v[i] = torch.zeros_like(g)
        v.add_(acc)
        sel = v
    else:
        sel = acc
    k = max(1, min(n, int(math.ceil(state.density_now() * n))))
    _, idx = torch.topk(sel.abs(), k, sorted=False)
    vals = sel[idx]
    vdtype = torch.float16 if state.fp16 else torch.float32
    # One all-gather of bytes (Gloo gathers uint8, not int16): the
    # int32 indices, then the values.
    payload = torch.cat([idx.to(torch.int32).view(torch.uint8),
                         vals.to(vdtype).view(torch.uint8)])
    if state.error_feedback:
        v[idx] = 0
    if state.momentum_correction:
        u[idx] = 0
    state._count(bucket, payload.numel() * payload.element_size(),
                 n * g.element_size())
    out = [torch.empty_like(payload) for _ in range(world)]
    fut = dist.all_gather(out, payload, group=state.process_group,
                          async_op=True).get_future()

    def decode(_):
        res = torch.zeros_like(g)
        for p in out:
            ri = p[:4 * k].view(torch.int32).long()
            rv = p[4 * k:].view(vdtype).to(g.dtype)
            res.index_add_(0, ri, rv)
        return res.div_(world)

    return fut.then(decode)
