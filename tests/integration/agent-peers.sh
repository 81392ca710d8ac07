#!/bin/sh
# Issue 24, check 4: an agent with 200 connected peers serves every one
# of them.  One real agent; a backend says hello on agent.sock and
# launches 16 fake workers (program ranks: a script that says hello on
# HUNTER_FD, waits for the agent's answer, then sends its metrics); then
# 199 more clients connect and hold their connections, 200 at once:
# console-style clients (a backend's hello, answered with the agent's
# hello and its status: the 16 workers), and one-shot ctl-style clients
# (a command before any hello, or a hello of role ctl: refused with an
# error frame that says why, then closed).  The 100 that connected last
# speak first, all at once, while the others wait their turn connected;
# then the other 99.  Every one must get its answer within 15 s.  The
# agent's loop polled only its first 64 peers (the rest were accepted and
# never read), so the first wave got no answer at all.  Last, a fresh
# backend is answered and kills the workers, whose 16 exits it reads.
. "$SRCDIR/tests/integration/lib.sh"
dir="$HUNTER_STATE_DIR/nodes/solo"
"$HUNTER" agent --node solo --dir "$dir" --idle-exit 120
agent_up() { [ -S "$dir/agent.sock" ] && [ -s "$dir/agent.pid" ]; }
wait_until 5 "the agent's socket" agent_up
cat > "$T/fakeworker.py" <<'PYEOF'
# A fake worker: a program rank that speaks the line protocol.
import json, os, socket, sys
s = socket.socket(fileno=int(os.environ["HUNTER_FD"]))
s.sendall(b'{"t":"hello","proto":1,"client":"agent-peers"}\n')
f = s.makefile("r")
hello = json.loads(f.readline())
if hello.get("t") != "hello":
    sys.exit(3)
s.sendall(b'{"t":"metrics","step":1,"loss":0.25,"samples":8}\n')
print("rank %s: the agent answered my hello" % os.environ["RANK"], flush=True)
for line in f:          # until the agent closes (or kills us)
    pass
PYEOF
"$PY" - "$dir" "$(cat "$dir/agent.pid")" "$T/fakeworker.py" <<'PYEOF' || { tail -n 20 "$dir/agent.log"; fail "see above"; }
import json, os, selectors, socket, struct, sys, time
sys.path.insert(0, os.environ["SRCDIR"] + "/tests/integration")
from frames import frame, conn, read_frame, launch
dir, agent_pid, script = sys.argv[1], int(sys.argv[2]), sys.argv[3]
path = dir + "/agent.sock"
PEERS, WORKERS, WAIT_S = 200, 16, 15

def first_frames(socks, seconds):
    """The first frame each socket gets (None at EOF), in seconds at most."""
    sel, bufs, got = selectors.DefaultSelector(), {}, {}
    for i, s in socks.items():
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, i)
        bufs[i] = b""
    deadline = time.monotonic() + seconds
    while len(got) < len(socks) and time.monotonic() < deadline:
        for key, _ in sel.select(max(0, deadline - time.monotonic())):
            i = key.data
            try:
                data = key.fileobj.recv(1 << 20)
            except BlockingIOError:
                continue
            bufs[i] += data
            n = struct.unpack(">I", bufs[i][:4])[0] if len(bufs[i]) >= 4 else -1
            if not data or 0 <= n <= len(bufs[i]) - 4:
                got[i] = json.loads(bufs[i][4:4 + n]) if data else None
                sel.unregister(key.fileobj)
    sel.close()
    for s in socks.values():
        s.setblocking(True)
    return got

def agent_sockets():
    fds = os.listdir("/proc/%d/fd" % agent_pid)
    return sum(os.readlink("/proc/%d/fd/%s" % (agent_pid, f)).startswith("socket:")
               for f in fds if os.path.exists("/proc/%d/fd/%s" % (agent_pid, f)))

def frames_until(s, want, seconds):
    """Frames from s until want(frames) holds, in seconds at most."""
    seen, deadline = [], time.monotonic() + seconds
    while not want(seen):
        s.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            m = read_frame(s)
        except socket.timeout:
            break
        if m is None:
            break
        seen.append(m)
    return seen

def ranks_of(frames, t):
    return {m["rank"] for m in frames if m["t"] == t and m.get("job") == "fake"}

# The backend, and its 16 fake workers.
backend = conn(path, 10)
backend.sendall(frame({"t": "hello", "role": "backend", "proto": 1}))
h = read_frame(backend)
assert h["t"] == "hello" and h["node"] == "solo", h
for r in range(WORKERS):
    backend.sendall(frame(launch("fake", r, WORKERS, run=7, node="solo",
        program={"argv": [sys.executable, script], "env": {"RANK": str(r)},
                 "dir": os.path.dirname(script), "stop_grace_s": 2})))
seen = frames_until(backend, lambda f: len(ranks_of(f, "metrics")) == WORKERS, 60)
assert len(ranks_of(seen, "metrics")) == WORKERS, \
    "metrics from ranks %s only" % sorted(ranks_of(seen, "metrics"))
print("%d fake workers said hello, were answered and sent metrics" % WORKERS)

# 199 more clients, connected and silent: 200 at once on agent.sock.
kinds = ["console", "ctl-cmd", "ctl-hello"]
peers = {}
for i in range(1, PEERS):
    peers[i] = conn(path, 10)
deadline = time.monotonic() + 15
while agent_sockets() < 1 + PEERS + WORKERS and time.monotonic() < deadline:
    time.sleep(0.05)
n = agent_sockets()
assert n >= 1 + PEERS + WORKERS, "the agent holds %d sockets" % n
print("the agent holds %d sockets: its listener, %d peers, %d workers" %
      (n, PEERS, WORKERS))

def speak(i):
    kind = kinds[i % 3]
    if kind == "console":
        m = {"t": "hello", "role": "backend", "proto": 1}
    elif kind == "ctl-cmd":
        m = {"t": "cmd", "cmd": "stop", "job": "fake"}
    else:
        m = {"t": "hello", "role": "ctl", "proto": 1}
    peers[i].sendall(frame(m))

def check(i, m):
    kind = kinds[i % 3]
    assert m is not None, "peer %d (%s) was closed without an answer" % (i, kind)
    if kind == "console":
        assert m["t"] == "hello" and m["node"] == "solo", (i, m)
        w = [x for x in m["workers"] if x["job"] == "fake" and x["running"]]
        assert len(w) == WORKERS, "peer %d: the status lists %d workers" % (i, len(w))
    elif kind == "ctl-cmd":
        assert m["t"] == "error" and "before the backend's hello" in m["reason"], (i, m)
    else:
        assert m["t"] == "error" and "only a backend attaches here" in m["reason"], (i, m)
    return kind

for wave, ids in (("first", range(PEERS // 2, PEERS)), ("second", range(1, PEERS // 2))):
    ids = list(ids)
    for i in ids:
        speak(i)
    got = first_frames({i: peers[i] for i in ids}, WAIT_S)
    missing = [i for i in ids if i not in got]
    assert not missing, "%s wave: %d of %d peers got no answer in %d s (peers %d..%d)" % (
        wave, len(missing), len(ids), WAIT_S, min(missing), max(missing))
    count = {}
    for i in ids:
        k = check(i, got[i])
        count[k] = count.get(k, 0) + 1
    print("%s wave: peers %d..%d all answered: %s" % (wave, ids[0], ids[-1],
          ", ".join("%d %s" % (v, k) for k, v in sorted(count.items()))))

# The first backend was taken over, with a word.
seen = frames_until(backend, lambda f: any(m["t"] == "error" for m in f), WAIT_S)
err = [m for m in seen if m["t"] == "error"]
assert err and "another backend attached" in err[0]["reason"], seen[-3:]
for s in [backend] + list(peers.values()):
    s.close()

# The agent still serves: a new backend, answered, kills the workers.
last = conn(path, 10)
last.sendall(frame({"t": "hello", "role": "backend", "proto": 1}))
h = read_frame(last)
assert h["t"] == "hello" and len(h["workers"]) == WORKERS, h
last.sendall(frame({"t": "cmd", "cmd": "kill", "job": "fake"}))
seen = frames_until(last, lambda f: len(ranks_of(f, "exit")) == WORKERS, 30)
assert len(ranks_of(seen, "exit")) == WORKERS, \
    "exits of ranks %s only" % sorted(ranks_of(seen, "exit"))
print("a last backend was answered; the %d workers' exits reached it" % WORKERS)
PYEOF
kill -0 "$(cat "$dir/agent.pid")" || fail "the agent died"
n=$(grep -c "refusing a peer" "$dir/agent.log" || true)
[ "$n" -ge 133 ] || { tail -n 5 "$dir/agent.log"; fail "the agent logged $n refused peers, not 133"; }
pass "an agent with 200 connected peers and 16 workers answered every one"
