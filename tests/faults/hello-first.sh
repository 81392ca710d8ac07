#!/bin/sh
# Security: an agent takes orders only from a backend that said hello.
# On raw sockets to a real agent, a launch, a kill, a shutdown and a
# store frame sent before any hello, and a hello of another role, each
# end that link with an error frame that says why; nothing is launched
# and the agent lives.  Then a backend's hello is answered, and the node
# metrics that follow carry the sample's time under "time" ("t" is the
# frame's type; the time once went there and was overwritten), while a
# malformed frame from that backend is refused with a word in the log.
. "$SRCDIR/tests/integration/lib.sh"
dir="$HUNTER_STATE_DIR/nodes/solo"
"$HUNTER" agent --node solo --dir "$dir" --idle-exit 60
agent_up() { [ -S "$dir/agent.sock" ] && [ -s "$dir/agent.pid" ]; }
wait_until 5 "the agent's socket" agent_up
"$PY" - "$dir/agent.sock" <<'PYEOF' || { cat "$dir/agent.log"; fail "see above"; }
import os, sys, time
sys.path.insert(0, os.environ["SRCDIR"] + "/tests/integration")
from frames import frame, conn, read_frame, launch
path = sys.argv[1]
yaml = "name: early\nresources: {ranks: 1}\nmodel: {type: mlp}\ndata: {path: /x}\n"
cases = {
    "launch": launch("early", 0, 1, spec_yaml=yaml),
    "kill": {"t": "cmd", "cmd": "kill", "job": "early"},
    "shutdown": {"t": "cmd", "cmd": "shutdown"},
    "store": {"t": "store", "op": "value", "value": "QQ==", "req": 1},
    "ctl hello": {"t": "hello", "proto": 1, "role": "ctl"},
}
for name, msg in cases.items():
    s = conn(path, 5)
    s.sendall(frame(msg))
    err = read_frame(s)
    assert err is not None and err["t"] == "error", "%s: %r" % (name, err)
    assert read_frame(s) is None, "%s: the link stayed open" % name
    print("%-9s refused: %s" % (name, err["reason"]))
    s.close()
s = conn(path, 5)
s.sendall(frame({"t": "hello", "role": "backend", "proto": 1}))
hello = read_frame(s)
assert hello["t"] == "hello" and hello["node"] == "solo", hello
for sample in hello["samples"]:
    assert isinstance(sample.get("time"), float) and "t" not in sample, sample
# a malformed frame from the backend is refused, and the link stays
s.sendall(frame({"t": "store", "req": 9}))
deadline = time.time() + 5
while True:
    m = read_frame(s)
    assert m is not None and time.time() < deadline, "no node metrics"
    if m["t"] == "metrics" and m.get("scope") == "node":
        break
assert isinstance(m.get("time"), float), m
assert abs(m["time"] - time.time()) < 60, m["time"]
print("hello answered; node metrics at time %.1f" % m["time"])
PYEOF
log="$dir/agent.log"
for what in "'cmd' frame before the backend's hello" \
    "'store' frame before the backend's hello" "only a backend attaches here"; do
	grep -q "refusing a peer: .*$what" "$log" || { cat "$log"; fail "no '$what' in the log"; }
done
grep -q "refusing 'store' frame: no \"op\"" "$log" || { cat "$log"; fail "a store frame without op was not refused"; }
! grep -q "started early" "$log" || fail "a launch before hello started a worker"
[ ! -e "$dir/early.rank0.log" ] || fail "a launch before hello made a rank log"
kill -0 "$(cat "$dir/agent.pid")" || fail "the agent died (or obeyed the shutdown)"
pass "frames before a backend's hello end the link; nothing launched"
