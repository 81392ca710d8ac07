#!/bin/sh
# Issue 27, item 2: the backend talked to whatever listened on
# DIR/agent.sock.  User nobody (setpriv) plays the other user:
#  1. a 0777 directory of nobody's, with nobody's fake agent listening in
#     it, named as a node's state_dir: `hunter check` refuses the node,
#     naming the directory, its owner and the fix (it used to report the
#     fake as hunter 0.1.0), and `hunter run` sends it nothing (it used to
#     send the launch frame: the job's YAML, paths and run id); the job
#     runs on the other node.  A 0777 directory of our own is refused too;
#  2. our own 0700 directory holding a socket that nobody's process
#     listens on (moved in, as a careless copy or a race would leave it):
#     check refuses it by the peer's uid (SO_PEERCRED);
#  3. with the state and node directories opened up under a live backend
#     (as a mistaken chmod would), nobody connects to console.sock and
#     sends a stop, and to an agent.sock and says a backend's hello: both
#     are refused by uid, the job is not stopped, the agent keeps its
#     backend.
# Skips (77) unless root, which it needs to switch users.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/faults/faults-lib.sh"
needs_nobody
E="$T/evil"
mkdir -m 777 "$E" "$E/x"
chown 65534:65534 "$E" "$E/x"
# The fake agent: answers a hello with the asker's versions (so they
# agree) and writes what it was sent to got.log.
cat > "$T/evil.py" <<'PYEOF'
import json, os, socket, struct, sys, threading
sys.path.insert(0, os.environ["SRCDIR"] + "/tests/integration")
from frames import frame
log = open(sys.argv[1], "a", buffering=1)
def serve(c):
    buf = b""
    while True:
        got = c.recv(1 << 16)
        if not got:
            return
        buf += got
        while len(buf) >= 4 and len(buf) >= 4 + struct.unpack(">I", buf[:4])[0]:
            n = struct.unpack(">I", buf[:4])[0]
            m = json.loads(buf[4:4 + n])
            buf = buf[4 + n:]
            log.write("%s %s\n" % (m.get("t"), m.get("cmd", "")))
            if m.get("t") == "hello":
                c.sendall(frame({"t": "hello", "proto": m.get("proto", 1),
                                 "role": "agent", "node": "n0",
                                 "versions": m.get("versions", {}),
                                 "workers": [], "gpus": 0}))
socks = []
for path in sys.argv[2:]:
    s = socket.socket(socket.AF_UNIX)
    s.bind(path)
    os.chmod(path, 0o777)
    s.listen(8)
    socks.append(s)
open(sys.argv[1] + ".ready", "w").close()
def loop(s):
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()
for s in socks:
    threading.Thread(target=loop, args=(s,), daemon=True).start()
threading.Event().wait()
PYEOF
touch "$E/got.log"; chown 65534 "$E/got.log"
# setpriv itself, not the nobody function: it execs, so $! is the fake
# agent (run through the function, the kill got its subshell and the
# agent outlived the test).
setpriv --reuid=65534 --regid=65534 --clear-groups "$PY" "$T/evil.py" \
    "$E/got.log" "$E/agent.sock" "$E/x/agent.sock" > "$T/evil.out" 2>&1 &
evil=$!
cleanup_hooks="kill $evil 2>/dev/null || true"
wait_until 10 "nobody's fake agent" test -f "$E/got.log.ready"

# 1. A node whose state_dir is nobody's 0777 directory.
mkdata "$T/data" 512 32
small_job "$T/j.yaml" fdir "$T/data"
cat > "$T/c1.yaml" <<YEOF
cluster: foreign
nodes:
  - {name: n0, host: local, rack: r1, devices: {cpu: 2}, state_dir: $E}
  - {name: n1, host: local, rack: r1, devices: {cpu: 2}}
YEOF
rc=0
timeout 30 "$HUNTER" check --cluster "$T/c1.yaml" > "$T/check1" 2>&1 || rc=$?
cat "$T/check1"
[ $rc != 0 ] || fail "hunter check passed a node in nobody's 0777 directory"
grep -q "node n0: $E: owned by uid 65534, not by you" "$T/check1" ||
	fail "check did not name the directory and its owner"
rc=0
timeout 60 "$HUNTER" run --json --cluster "$T/c1.yaml" "$T/j.yaml" > "$T/run1" 2>&1 || rc=$?
[ "$(jget "$T/run1" summary state)" = finished ] || { tail -n 5 "$T/run1"; fail "the job did not finish on n1 (exit $rc)"; }
echo "the fake agent got: $(tr '\n' ';' < "$E/got.log")"
! grep -q . "$E/got.log" || fail "the backend talked to nobody's agent: $(tr '\n' ' ' < "$E/got.log")"
stop_agents
# ... and a 0777 directory of our own.
mkdir -m 777 "$T/open"
chmod 777 "$T/open"
sed "s|state_dir: $E|state_dir: $T/open|" "$T/c1.yaml" > "$T/c1b.yaml"
rc=0
timeout 30 "$HUNTER" check --cluster "$T/c1b.yaml" > "$T/check1b" 2>&1 || rc=$?
[ $rc != 0 ] || fail "hunter check passed a node in a 0777 directory"
grep -q "node n0: $T/open: writable by others (mode 0777).*chmod 700" "$T/check1b" ||
	{ cat "$T/check1b"; fail "check did not say how to fix the mode"; }
sed -n '/node n0/p' "$T/check1b"

# 2. Our own 0700 directory, a socket of nobody's in it.
mkdir -m 700 "$T/n2"
mv "$E/x/agent.sock" "$T/n2/agent.sock"
sed "s|state_dir: $E|state_dir: $T/n2|" "$T/c1.yaml" > "$T/c2.yaml"
: > "$E/got.log"
rc=0
timeout 30 "$HUNTER" check --cluster "$T/c2.yaml" > "$T/check2" 2>&1 || rc=$?
sed -n '/node n0/p' "$T/check2"
[ $rc != 0 ] || { cat "$T/check2"; fail "hunter check passed an agent.sock served by nobody"; }
grep -q "node n0: .*agent.sock: the process at the other end (pid [0-9]*) is uid 65534's, not yours" "$T/check2" ||
	{ cat "$T/check2"; fail "check did not name the listener's uid"; }
! grep -q hello "$E/got.log" || fail "check said hello to nobody's listener"
stop_agents

# 3. A live backend's sockets opened up: nobody is refused by uid.
sed -i 's/epochs: 2/epochs: 40/' "$T/j.yaml"
"$HUNTER" run --json --inject slow=20 --cluster "$T/c1.yaml" "$T/j.yaml" > "$T/run3" 2>&1 &
run=$!
cleanup_hooks="$cleanup_hooks; kill $run 2>/dev/null || true"
wait_for "$T/run3" '"t":"metrics".*"scope":"rank"' 30
n1="$HUNTER_STATE_DIR/nodes/n1"
chmod 711 "$HUNTER_STATE_DIR" "$HUNTER_STATE_DIR/nodes" "$n1"
chmod 666 "$HUNTER_STATE_DIR/console.sock" "$n1/agent.sock"
before=$(wc -l < "$n1/agent.log")
nobody "$PY" - "$HUNTER_STATE_DIR/console.sock" "$n1/agent.sock" <<'PYEOF' || fail "see above"
import os, socket, sys
sys.path.insert(0, os.environ["SRCDIR"] + "/tests/integration")
from frames import frame, conn, read_frame
for path, msg in ((sys.argv[1], {"t": "cmd", "cmd": "stop", "job": "fdir"}),
                  (sys.argv[2], {"t": "hello", "role": "backend", "proto": 1})):
    s = conn(path, 5)
    try:
        s.sendall(frame(msg))
        a = read_frame(s)
    except OSError as e:
        a = None
    print("nobody on %s: %r" % (os.path.basename(path), a))
    assert a is None, "nobody was answered on %s: %r" % (path, a)
PYEOF
chmod 700 "$HUNTER_STATE_DIR" "$HUNTER_STATE_DIR/nodes" "$n1"
grep -q "console.sock: the process at the other end (pid [0-9]*) is uid 65534's" "$T/run3" ||
	fail "no refused event naming nobody's uid on console.sock"
grep -q "agent.sock: the process at the other end (pid [0-9]*) is uid 65534's" "$n1/agent.log" ||
	{ tail -n 5 "$n1/agent.log"; fail "the agent did not log nobody's refusal"; }
tail -n +"$((before + 1))" "$n1/agent.log" > "$T/agent-after"
! grep -q "backend attached\|backend detached" "$T/agent-after" ||
	{ cat "$T/agent-after"; fail "the agent took nobody as its backend"; }
! grep -q 'stop requested' "$T/run3" || fail "nobody's stop was taken"
"$HUNTER" ctl fdir stop > /dev/null || fail "our own hunter ctl was refused"
wait $run || true
[ "$(jget "$T/run3" summary state)" = stopped ] || fail "the job did not stop on our own ctl"
pass "foreign and open directories refused with the fix, foreign sockets refused by uid at both ends"
