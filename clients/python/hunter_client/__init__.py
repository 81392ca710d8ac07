"""hunter_client: a training program's side of hunter's line protocol.

hunter runs a program job's ranks with the environment of
torch.distributed's env:// (RANK, WORLD_SIZE, MASTER_ADDR, ...) plus
HUNTER_* and a socket on HUNTER_FD, on which the program and hunter
exchange JSON objects, one a line (docs/programs.md in hunter's tree).
This module speaks that protocol with the standard library only::

    import hunter_client as hunter

    h = hunter.Client()                  # a no-op outside hunter
    for step in range(steps):
        ...
        h.metrics(step, loss=loss, samples=n_seen, grad_norm=g)
        for cmd in h.poll():             # "checkpoint", "pause", ...
            ...
    h.checkpoint_done(step, path)        # "complete at step N in PATH"

The torch submodule (hunter_client.torch) adds a top-k DDP communication
hook and a step controller that turns commands into calls at step
boundaries; it is imported only when asked for.
"""

import atexit
import json
import os
import select
import socket
import time

__all__ = ["Client", "Env", "COMMANDS"]
__version__ = "0.1.0"

#: What hunter may ask of a program, as the "cmd" of a command line.
COMMANDS = ("checkpoint", "pause", "resume", "stop")


class Env:
    """The environment hunter gives a rank (each attribute None when not
    set: a program run by torchrun or by hand sees only what those set)."""

    def __init__(self, environ=None):
        e = os.environ if environ is None else environ
        g = lambda k, d=None: e.get(k, d) if e.get(k, "") != "" else d
        i = lambda k, d=None: int(g(k)) if g(k) is not None else d
        self.rank = i("RANK", 0)
        self.world_size = i("WORLD_SIZE", 1)
        self.local_rank = i("LOCAL_RANK", 0)
        self.local_world_size = i("LOCAL_WORLD_SIZE", 1)
        self.group_rank = i("GROUP_RANK", 0)
        self.master_addr = g("MASTER_ADDR")
        self.master_port = i("MASTER_PORT")
        self.job = g("HUNTER_JOB")
        self.run = g("HUNTER_RUN")
        self.generation = i("HUNTER_GENERATION", 0)
        self.node = g("HUNTER_NODE")
        self.checkpoint_dir = g("HUNTER_CHECKPOINT_DIR")
        self.checkpoint_every = i("HUNTER_CHECKPOINT_EVERY", 0)
        self.checkpoint_keep = i("HUNTER_CHECKPOINT_KEEP", 3)
        self.resume_from = g("HUNTER_RESUME_FROM")
        self.micro_batch = i("HUNTER_MICRO_BATCH")
        self.trial_steps = i("HUNTER_TRIAL_STEPS")
        self.heartbeat_timeout = float(g("HUNTER_HEARTBEAT_TIMEOUT", "10"))
        self.fd = i("HUNTER_FD")

    @property
    def under_hunter(self):
        """Whether hunter started this process (HUNTER_FD is set)."""
        return self.fd is not None

    @property
    def trial(self):
        """Whether this run is an autotune trial: run trial_steps steps
        at micro_batch, report samples, and exit 0."""
        return self.trial_steps is not None

    def __repr__(self):
        return "Env(%s)" % ", ".join("%s=%r" % kv for kv in
                                     sorted(vars(self).items()))


class Client:
    """One rank's link to hunter.  Outside hunter (no HUNTER_FD) every
    call is a no-op that costs next to nothing, so one script runs under
    hunter, torchrun or by hand.

    metrics are sent at most every `every` seconds (the agent rates them
    too).  A call within that time is held, not dropped: the next call
    that goes out carries the newest figures and what only the held one
    said, and the held line goes out before an epoch, checkpoint, pause,
    idle or summary line, at close() and when the program exits, so the
    last figures before each of those always arrive.  Epoch, checkpoint
    and pause lines go at once.
    """

    def __init__(self, every=0.5, environ=None, hello=True):
        self.env = Env(environ)
        self.every = every
        self._sock = None
        self._buf = b""
        self._last = 0.0
        self._prev = None
        self._held = None
        self._seq = {c: 0 for c in COMMANDS}
        self._queue = []
        self._callbacks = {}
        self._declared = []
        if self.env.fd is not None:
            try:
                self._sock = socket.socket(fileno=os.dup(self.env.fd))
                os.set_inheritable(self._sock.fileno(), False)
            except OSError:
                self._sock = None
        if hello:
            self.send({"t": "hello", "proto": 1,
                       "client": "hunter-python/" + __version__})
        if self._sock is not None:
            atexit.register(self.flush)

    @property
    def active(self):
        return self._sock is not None

    # -- program -> hunter ------------------------------------------------

    def send(self, obj):
        """Send one object as a line; False when there is no link."""
        if self._sock is None:
            return False
        data = (json.dumps(obj, separators=(",", ":"), allow_nan=False)
                + "\n").encode()
        try:
            self._sock.sendall(data)
        except (OSError, ValueError):
            self._sock = None
            return False
        return True

    def due(self):
        """Whether a metrics() call now would send (so figures that cost
        something need be computed only then)."""
        return self._sock is not None and \
            time.monotonic() - self._last >= self.every

    def metrics(self, step, loss=None, samples=None, force=False, **extra):
        """The rank's figures after a step: step (required), loss,
        samples (all this rank has processed so far; hunter derives
        samples/s), any field of hunter's rank metrics (samples_per_s,
        step_ms, compute_ms, comm_ms, bytes_sent, bytes_dense,
        micro_batch, lr, epoch, ...) and any other number, which the job
        screen shows.  Returns whether a line went out."""
        if self._sock is None:
            return False
        line = {"t": "metrics", "step": int(step)}
        if loss is not None:
            line["loss"] = float(loss)
        if samples is not None:
            line["samples"] = float(samples)
        for k, v in extra.items():
            if v is not None:
                line[k] = v if isinstance(v, int) and \
                    not isinstance(v, bool) else float(v)
        if self._held is not None:
            # What only the held call said (a rare field) goes along.
            for k, v in self._held.items():
                line.setdefault(k, v)
        if not force and time.monotonic() - self._last < self.every:
            self._held = line
            return False
        return self._send_metrics(line)

    def _send_metrics(self, line):
        now = time.monotonic()
        self._held = None
        self._last = now
        samples = line.get("samples")
        if samples is not None:
            # Over the span since the last line, which the agent cannot
            # time as well from its side of the socket.
            if "samples_per_s" not in line and self._prev is not None and \
                    now > self._prev[0] and samples >= self._prev[1]:
                line["samples_per_s"] = (samples - self._prev[1]) / \
                    (now - self._prev[0])
            self._prev = (now, samples)
        return self.send(line)

    def flush(self):
        """Send the metrics line held back by the rate, if there is one;
        whether a line went out."""
        if self._held is None or self._sock is None:
            return False
        return self._send_metrics(self._held)

    def epoch(self, epoch, **fields):
        """An epoch's end: epoch, and test_acc, test_loss, loss, step,
        epochs, samples_per_s or any other number."""
        self.flush()
        line = {"t": "epoch", "epoch": int(epoch)}
        line.update({k: float(v) for k, v in fields.items() if v is not None})
        for k in ("epochs", "step"):
            if k in line:
                line[k] = int(line[k])
        return self.send(line)

    def beat(self):
        """I am alive (a long evaluation, a slow load): a heartbeat
        without a step."""
        return self.send({"t": "beat"})

    def idle(self):
        """No metrics for a while (training is over, or a long evaluation
        or wait for the peers): hunter beats for this rank while it lives,
        up to program.startup, or until its next metrics line."""
        self.flush()
        return self.send({"t": "idle"})

    def checkpoint_path(self, step, suffix=".pt"):
        """Where the checkpoint of step goes: HUNTER_CHECKPOINT_DIR (made
        if needed) /step-N.pt, or ./checkpoints outside hunter."""
        d = self.env.checkpoint_dir or "checkpoints"
        os.makedirs(d, exist_ok=True)
        return os.path.join(d, "step-%d%s" % (step, suffix))

    def checkpoint_done(self, step, path, prune=True):
        """Declare that the checkpoint of step is complete in path: the
        next generation resumes from the newest one declared
        (HUNTER_RESUME_FROM).  With prune, only HUNTER_CHECKPOINT_KEEP of
        those this process declared are kept."""
        self.flush()
        ok = self.send({"t": "checkpoint", "step": int(step),
                        "path": os.path.abspath(path)})
        self._declared.append(path)
        keep = max(1, self.env.checkpoint_keep or 1)
        while prune and len(self._declared) > keep:
            old = self._declared.pop(0)
            if old != path:
                try:
                    os.unlink(old)
                except OSError:
                    pass
        return ok

    def paused(self, step):
        """Say that the program holds at step (after a pause command)."""
        self.flush()
        return self.send({"t": "paused", "step": int(step)})

    def resumed(self, step):
        return self.send({"t": "resumed", "step": int(step)})

    def summary(self, **fields):
        """Numbers for the job's summary (test_acc, samples_per_s,
        bytes_sent, ...); hunter adds the state when the rank exits."""
        self.flush()
        return self.send(dict({"t": "summary"}, **{
            k: v if isinstance(v, int) and not isinstance(v, bool) else
            float(v) for k, v in fields.items() if v is not None}))

    # -- hunter -> program ------------------------------------------------

    def _read(self, timeout):
        if self._sock is None:
            return
        try:
            r, _, _ = select.select([self._sock], [], [], timeout)
            if not r:
                return
            data = self._sock.recv(65536)
        except (OSError, ValueError):
            data = b""
        if not data:
            self._sock = None
            return
        self._buf += data
        while b"\n" in self._buf:
            line, self._buf = self._buf.split(b"\n", 1)
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if not isinstance(obj, dict) or obj.get("t") != "cmd":
                continue
            cmd = obj.get("cmd")
            if cmd not in self._seq:
                continue
            seq = obj.get("seq")
            seq = seq if isinstance(seq, int) and seq > 0 else \
                self._seq[cmd] + 1
            if seq > self._seq[cmd]:
                self._seq[cmd] = seq
                self._queue.append(cmd)

    def poll(self, timeout=0.0):
        """The commands that came since the last poll, oldest first
        ("checkpoint", "pause", "resume", "stop"); with callbacks set by
        on(), those are called instead of returned."""
        self._read(timeout)
        out, self._queue = self._queue, []
        rest = []
        for cmd in out:
            fn = self._callbacks.get(cmd)
            if fn is not None:
                fn()
            else:
                rest.append(cmd)
        return rest

    def wait(self, timeout=None):
        """Block until a command comes (or timeout seconds pass, or the
        link closes); returns the commands as poll() does."""
        end = None if timeout is None else time.monotonic() + timeout
        while self._sock is not None:
            left = 1.0 if end is None else max(0.0, end - time.monotonic())
            self._read(min(left, 1.0))
            if self._queue or (end is not None and time.monotonic() >= end):
                break
        return self.poll()

    def on(self, cmd, fn):
        """Call fn() when cmd comes (during poll or wait)."""
        if cmd not in COMMANDS:
            raise ValueError("unknown command %r (known: %s)" %
                             (cmd, ", ".join(COMMANDS)))
        self._callbacks[cmd] = fn

    def requested(self, cmd):
        """The sequence number of the newest cmd received (0: none); for
        ranks that agree on when to act (hunter_client.torch)."""
        self._read(0.0)
        return self._seq[cmd]

    def close(self):
        self.flush()
        if self._sock is not None:
            self._sock.close()
            self._sock = None
