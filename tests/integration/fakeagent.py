# fakeagent.py: the agents of many local nodes, played by one process,
# for the tests that need more nodes than processes (node-limits.sh: 2000
# of them) or an agent that does what a real one would not
# (error-reason.sh, store-runs.sh).  Each node listens on
# ROOT/NAME/agent.sock, its state_dir in the cluster file, so the local
# launcher finds it there and starts no agent.  It answers the backend's
# hello with one of its own (the backend's versions, so they agree) and
# plays each launched rank at once, as the mode says:
#
#   finish   a summary (finished), the rank's finished event (as a
#            worker that trained to the end sends it) and an exit with
#            status 0
#   hold     a heartbeat a second, as a live worker sends it, until a
#            stop for its job: then a summary (stopped) and the exit
#   store    the rendezvous of a rank whose peer has not published yet:
#            a get of JOB/g0/peer (1 s), a set of it to this run's id, a
#            get again; each answer is a line in ROOT/store.log; then as
#            finish
#
# and with --error-reason, every node first sends an error frame whose
# reason is 4,000 bytes of multi-byte text.
#
# usage: fakeagent.py [--error-reason] ROOT MODE NAME...  (NAME may be
# PREFIX%04d:FIRST-LAST for a range).  ROOT/ready appears once every
# socket listens; SIGTERM ends it.
import base64, json, os, resource, selectors, signal, socket, struct, sys, time

args = sys.argv[1:]
error_reason = args and args[0] == "--error-reason"
if error_reason:
    args = args[1:]
root, mode, names = args[0], args[1], []
for a in args[2:]:
    if ":" in a:
        fmt, rng = a.split(":")
        lo, hi = map(int, rng.split("-"))
        names += [fmt % i for i in range(lo, hi + 1)]
    else:
        names.append(a)

soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
sel = selectors.DefaultSelector()
REASON = "\u20ac" * 1334            # 4,002 bytes of three-byte characters


def frame(obj):
    b = json.dumps(obj).encode()
    return struct.pack(">I", len(b)) + b


class Peer:
    def __init__(self, sock, node):
        self.sock, self.node, self.buf = sock, node, b""
        self.held = []              # launches waiting for a stop
        self.open = True

    def send(self, obj):
        self.sock.setblocking(True)
        self.sock.sendall(frame(obj))
        self.sock.setblocking(False)

    def tags(self, launch):
        return {"job": launch["job"], "rank": launch["rank"],
                "node": self.node, "run": launch.get("run", 0),
                "generation": launch.get("generation", 0)}

    def beat(self):
        for launch in self.held:
            self.send(dict(self.tags(launch), t="metrics", beat=True,
                           paused=False, step=0))

    def finish(self, launch, state="finished"):
        t = self.tags(launch)
        self.send(dict(t, t="summary", state=state, epochs=0, steps=0))
        if state == "finished":
            self.send(dict(t, t="event", kind="finished", reason=state,
                           params_crc32="00000000"))
        self.send(dict(t, t="exit", pid=os.getpid(), code=0))

    def store(self, launch, op, key, value=None, timeout_ms=1000):
        """One store request as the agent relays a worker's, and its answer."""
        m = dict(self.tags(launch), t="store", op=op, key=key, req=1,
                 timeout_ms=timeout_ms)
        if value is not None:
            m["value"] = value
        self.send(m)
        if op == "set":
            return None
        self.sock.setblocking(True)
        self.sock.settimeout(10)
        while True:
            ans = self.read_one()
            if ans is None or ans.get("t") == "store":
                break
        self.sock.setblocking(False)
        return ans

    def read_one(self):
        while True:
            if len(self.buf) >= 4:
                n = struct.unpack(">I", self.buf[:4])[0]
                if len(self.buf) >= 4 + n:
                    obj = json.loads(self.buf[4:4 + n])
                    self.buf = self.buf[4 + n:]
                    return obj
            got = self.sock.recv(1 << 16)
            if not got:
                return None
            self.buf += got

    def on_frame(self, m):
        t, cmd = m.get("t"), m.get("cmd")
        if t == "hello":
            self.send({"t": "hello", "proto": m.get("proto", 1),
                       "role": "agent", "node": self.node,
                       "versions": m.get("versions", {}), "workers": [],
                       "gpus": 0})
            if error_reason:
                self.send({"t": "error", "node": self.node,
                           "reason": REASON})
        elif t == "cmd" and cmd == "launch":
            if mode == "hold":
                self.held.append(m)
            elif mode == "store":
                run = str(m.get("run"))
                key = m["job"] + "/g0/peer"
                log = open(os.path.join(root, "store.log"), "a")
                for step in ("get", "set", "get"):
                    if step == "set":
                        self.store(m, "set", key,
                                   base64.b64encode(run.encode()).decode())
                        continue
                    a = self.store(m, "get", key)
                    if a is not None and a.get("op") == "value":
                        got = base64.b64decode(a["value"]).decode()
                        log.write("run %s get: value %s\n" % (run, got))
                    else:
                        log.write("run %s get: %s\n" % (run, (a or {}).get(
                            "reason", "no answer")))
                log.close()
                self.finish(m)
            else:
                self.finish(m)
        elif t == "cmd" and cmd == "stop":
            for launch in [h for h in self.held if h["job"] == m.get("job")]:
                self.held.remove(launch)
                self.finish(launch, "stopped")

    def readable(self):
        try:
            got = self.sock.recv(1 << 16)
        except BlockingIOError:
            return
        except OSError:
            got = b""
        if not got:
            sel.unregister(self.sock)
            self.sock.close()
            self.open = False
            return
        self.buf += got
        while len(self.buf) >= 4:
            n = struct.unpack(">I", self.buf[:4])[0]
            if len(self.buf) < 4 + n:
                break
            m = json.loads(self.buf[4:4 + n])
            self.buf = self.buf[4 + n:]
            self.on_frame(m)


def accept(lsock, node):
    c, _ = lsock.accept()
    c.setblocking(False)
    p = Peer(c, node)
    peers.append(p)
    sel.register(c, selectors.EVENT_READ, p.readable)


for name in names:
    d = os.path.join(root, name)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "agent.sock")
    if os.path.exists(path):
        os.unlink(path)
    s = socket.socket(socket.AF_UNIX)
    s.bind(path)
    s.listen(8)
    s.setblocking(False)
    sel.register(s, selectors.EVENT_READ,
                 (lambda s, n: lambda: accept(s, n))(s, name))
peers = []
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
open(os.path.join(root, "ready"), "w").close()
beat_at = time.monotonic()
while True:
    for key, _ in sel.select(1):
        key.data()
    if time.monotonic() - beat_at >= 1:
        beat_at = time.monotonic()
        peers = [p for p in peers if p.open]
        for p in peers:
            try:
                p.beat()
            except OSError:
                p.open = False
