#!/bin/sh
# Issue 3, check 5: bad frames on a real agent's socket -- truncated,
# oversized (1 GiB declared), not JSON, not an object, without a type,
# empty, and of an unknown type.  Each closes that link with a message
# (the unknown type is ignored with a warning); the agent keeps serving.
# console.sock and the worker links use the same decoder, which
# tests/unit/test-proto and the fuzz corpus replay cover.
. "$SRCDIR/tests/integration/lib.sh"
dir="$HUNTER_STATE_DIR/nodes/solo"
"$HUNTER" agent --node solo --dir "$dir" --idle-exit 60
wait_until 5 "the agent's socket" test -S "$dir/agent.sock"
"$PY" - "$dir/agent.sock" <<'PYEOF' || fail "see above"
import os, socket, struct, sys
sys.path.insert(0, os.environ["SRCDIR"] + "/tests/integration")
from frames import frame, conn, closed, read_frame
path = sys.argv[1]
cases = {
    "oversized": struct.pack(">I", 1 << 30) + b"{",
    "not json": struct.pack(">I", 9) + b"not json!",
    "not an object": frame([1, 2, 3]),
    "no type": frame({"x": 1}),
    "zero length": struct.pack(">I", 0),
}
for name, data in cases.items():
    s = conn(path)
    s.sendall(data)
    assert closed(s), "%s: link not closed" % name
    print("%-14s closed" % name)
# truncated: half a frame, then hang up; the agent must not wait forever
s = conn(path)
s.sendall(frame({"t": "hello", "role": "backend"})[:7])
s.close()
# unknown type: ignored, link stays open and hello still works after it
s = conn(path)
s.sendall(frame({"t": "nonsense"}) + frame({"t": "hello", "role": "backend", "proto": 1}))
hello = read_frame(s)
assert hello["t"] == "hello" and hello["node"] == "solo", hello
print("unknown type ignored; hello answered by %s" % hello["node"])
PYEOF
log="$dir/agent.log"
grep -q "exceeds the 1048576-byte limit" "$log" || { cat "$log"; fail "no message for the oversized frame"; }
grep -q "not JSON" "$log" || fail "no message for the non-JSON frame"
grep -q "ignoring a 'nonsense' frame" "$log" || fail "unknown type not logged"
kill -0 "$(cat "$dir/agent.pid")" || fail "the agent died"
pass "bad frames close the link; the agent lives"
