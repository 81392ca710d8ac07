#!/bin/sh
# Issue 27, item 10: console.sock's commands trusted their fields.  The
# rank was cut to 32 bits (2^62 moved rank 0, 2^32 + 5 was "rank 5"); a
# command with no "job", or a job that is a number, was taken (a pause
# with no job paused the only job); a client sending a byte a second was
# still connected at 27 s, past the 10 s idle limit.  Against a backend
# whose job a fake agent holds (two nodes, so a migrate has somewhere to
# go), each bad command gets an error frame naming the field, none is
# acted on (no pause, no re-formation: the job stays as it was), a good
# one is still accepted, and a client that trickles its request is closed
# within 10 s of its first byte (13 s allowed on a loaded machine).
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/faults/faults-lib.sh"
"$PY" "$SRCDIR/tests/integration/fakeagent.py" "$T/nodes" hold k0 k1 > "$T/fake.log" 2>&1 &
fake=$!
cleanup_hooks="kill $fake 2>/dev/null || true"
wait_until 10 "the fake agents" test -f "$T/nodes/ready"
cat > "$T/cluster.yaml" <<EOC
cluster: fields
nodes:
  - {name: k0, host: local, rack: a, devices: {cpu: 1}, state_dir: $T/nodes/k0}
  - {name: k1, host: local, rack: a, devices: {cpu: 1}, state_dir: $T/nodes/k1}
EOC
mkdata "$T/data" 200 64
small_job "$T/j.yaml" held "$T/data"
timeout 120 "$HUNTER" run --json --cluster "$T/cluster.yaml" "$T/j.yaml" \
	> "$T/out" 2> "$T/err" &
run=$!
cleanup_hooks="$cleanup_hooks; kill $run 2>/dev/null || true"
wait_for "$T/out" '"kind":"placed"' 10
"$PY" - "$HUNTER_STATE_DIR/console.sock" <<'PYEOF' || fail "see above"
import os, socket, sys, time
sys.path.insert(0, os.environ["SRCDIR"] + "/tests/integration")
from frames import frame, conn, read_frame
path = sys.argv[1]

def ask(msg):
    s = conn(path, 5)
    s.sendall(frame(msg))
    a = read_frame(s)
    s.close()
    return a

bad = [
    ({"t": "cmd", "cmd": "migrate", "job": "held", "rank": 4611686018427387904,
      "node": "k1"}, '"rank" is not a rank'),
    ({"t": "cmd", "cmd": "migrate", "job": "held", "rank": 4294967296,
      "node": "k1"}, '"rank" is not a rank'),
    ({"t": "cmd", "cmd": "migrate", "job": "held", "rank": -5, "node": "k1"},
     '"rank" is not a rank'),
    ({"t": "cmd", "cmd": "pause"}, 'pause: no "job"'),
    ({"t": "cmd", "cmd": "pause", "job": 12}, 'pause: "job" is not a string'),
    ({"t": "cmd", "cmd": "stop", "job": None}, 'stop: "job" is not a string'),
    ({"t": "cmd", "cmd": "checkpoint", "job": ["held"]},
     'checkpoint: "job" is not a string'),
    ({"t": "cmd", "cmd": "migrate", "job": "held", "rank": "0", "node": "k1"},
     '"rank" is not a rank'),
]
for msg, want in bad:
    a = ask(msg)
    print("%-70s -> %s" % (str(msg)[:70], a))
    assert a is not None and a["t"] == "error", "accepted: %r" % msg
    assert want in a["reason"], "%r: %r does not say %r" % (msg, a["reason"], want)
# A good one still goes through (the fake agent holds the job: it does
# not pause, but the command is accepted).
a = ask({"t": "cmd", "cmd": "checkpoint", "job": "held"})
assert a is not None and a["t"] == "ok", "a good command: %r" % a

# A request one byte a second: closed within 10 s of its first byte.
s = conn(path, 1)
body = frame({"t": "cmd", "cmd": "checkpoint", "job": "held"})
t0, closed_at = time.monotonic(), None
for b in body:
    try:
        s.send(bytes([b]))
    except (BrokenPipeError, ConnectionResetError):
        closed_at = time.monotonic() - t0
        break
    try:
        if s.recv(1) == b"":
            closed_at = time.monotonic() - t0
            break
    except socket.timeout:
        pass
    if time.monotonic() - t0 > 13:
        break
print("a trickling client: %s" % ("closed after %.1f s" % closed_at
      if closed_at is not None else "still open after 13 s"))
assert closed_at is not None, "a client sending a byte a second was not closed"
PYEOF
grep -q '"kind":"migrated"\|"kind":"paused"\|generation 1' "$T/out" &&
	{ grep '"kind":"migrated"\|"kind":"paused"' "$T/out"; fail "a refused command was acted on"; }
"$HUNTER" ctl held stop > /dev/null || fail "hunter ctl stop was refused"
wait $run || true
[ "$(jget "$T/out" summary state)" = stopped ] || { tail -n 3 "$T/out"; fail "the job did not stop"; }
pass "bad fields refused by name, nothing acted on, a trickling client closed"
