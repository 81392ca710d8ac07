#!/bin/sh
# Issue 27, item 11: a program launch the agent refused (argv not a list)
# left a worker slot behind with pid 0; at shutdown the agent signalled
# kill(-0, ...), its own process group, and died of its own SIGKILL,
# leaving agent.sock and agent.pid behind.  Here a real agent gets a
# backend's hello, three refused launches (argv not a list, an empty
# argv, an argv entry that is not a string), each answered with a failed
# event that says why, and then a shutdown: it must exit by itself,
# saying so in its log, and remove its socket and pid file.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/faults/faults-lib.sh"
dir="$HUNTER_STATE_DIR/nodes/solo"
"$HUNTER" agent --node solo --dir "$dir" --idle-exit 60
agent_up() { [ -S "$dir/agent.sock" ] && [ -s "$dir/agent.pid" ]; }
wait_until 5 "the agent's socket" agent_up
pid=$(cat "$dir/agent.pid")
"$PY" - "$dir/agent.sock" <<'PYEOF' || { cat "$dir/agent.log"; fail "see above"; }
import os, sys, time
sys.path.insert(0, os.environ["SRCDIR"] + "/tests/integration")
from frames import frame, conn, read_frame, launch
s = conn(sys.argv[1], 5)
s.sendall(frame({"t": "hello", "role": "backend", "proto": 1}))
assert read_frame(s)["t"] == "hello"
yaml = "name: phantom\nresources: {ranks: 1}\nprogram: {argv: [x]}\n"
for argv in ("not-a-list", [], ["ok", 7]):
    s.sendall(frame(launch("phantom", 0, 1, node="solo", spec_file="p.yaml",
                           spec_yaml=yaml, timeout_ms=1000,
                           program={"argv": argv, "env": {}})))
    deadline = time.time() + 5
    while True:
        m = read_frame(s)
        assert m is not None and time.time() < deadline, "no answer to %r" % argv
        if m["t"] == "event" and m.get("kind") == "failed":
            break
    print("argv %r: %s" % (argv, m["reason"]))
s.sendall(frame({"t": "cmd", "cmd": "shutdown"}))
s.settimeout(10)
while read_frame(s) is not None:
    pass
PYEOF
gone() { ! kill -0 "$pid" 2>/dev/null; }
wait_until 10 "the agent to exit after the shutdown" gone
log="$dir/agent.log"
tail -n 4 "$log"
grep -q "shutdown requested" "$log" || fail "the agent did not take the shutdown"
grep -q "agent solo: exited" "$log" || fail "the agent did not exit by itself (killed by its own signal?)"
[ ! -e "$dir/agent.sock" ] || fail "agent.sock left behind"
[ ! -e "$dir/agent.pid" ] || fail "agent.pid left behind"
pass "refused launches left no slot; the agent shut down cleanly"
