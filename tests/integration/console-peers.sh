#!/bin/sh
# Issue 21: console.sock has limits, and the backend's loop does not spin.
# 20 clients connect to a backend (hunter run of a job its fake agent
# holds) and say nothing.  The first 16 are taken; the 17th and later get
# an error frame that says why and are closed (they were left in the
# listen queue, the listening socket stayed readable and the loop spun
# at 100% of a core).  Over 3 s with them all connected, the backend
# uses under 25% of a core (from /proc; loose on purpose: a spin is
# all the core it gets, 56% here on a busy machine).  Idle clients are
# closed after CONSOLE_IDLE_S (10 s).
. "$SRCDIR/tests/integration/lib.sh"
"$PY" "$SRCDIR/tests/integration/fakeagent.py" "$T/nodes" hold k > "$T/fake.log" 2>&1 &
fake=$!
cleanup_hooks="kill $fake 2>/dev/null || true"
_ready1() { [ -f "$T/nodes/ready" ]; }
poll_until 10 _ready1 || true
[ -f "$T/nodes/ready" ] || fail "the fake agent did not start"
cat > "$T/cluster.yaml" <<EOC
cluster: peers
nodes:
  - {name: k, host: local, rack: a, devices: {cpu: 1}, state_dir: $T/nodes/k}
EOC
mkdata "$T/data" 200 64
small_job "$T/j.yaml" held "$T/data"
timeout 120 "$HUNTER" run --json --cluster "$T/cluster.yaml" "$T/j.yaml" \
	> "$T/out" 2> "$T/err" &
run=$!
cleanup_hooks="$cleanup_hooks; kill $run 2>/dev/null || true"
_ready2() { grep -q '"kind":"placed"' "$T/out" 2>/dev/null; }
poll_until 10 _ready2 || true
grep -q '"kind":"placed"' "$T/out" || { cat "$T/err"; fail "the job was not placed"; }
backend=$(pgrep -P $run)	# hunter run itself, under timeout
[ -n "$backend" ] || fail "no backend process under $run"
"$PY" - "$HUNTER_STATE_DIR/console.sock" "$backend" <<'PYEOF' || fail "see above"
import os, socket, sys, time
sys.path.insert(0, os.environ["SRCDIR"] + "/tests/integration")
from frames import read_frame
path, pid = sys.argv[1], int(sys.argv[2])
clients = []
for i in range(20):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    clients.append(s)
    time.sleep(0.05)
refused = []
for s in clients[16:]:
    s.settimeout(3)
    f = read_frame(s)
    assert f and f["t"] == "error", "client %d got %s" % (len(refused) + 17, f)
    refused.append(f["reason"])
    assert s.recv(1) == b"", "a refused client was not closed"
print("refused 4: %s" % refused[0])
assert "too many console.sock clients" in refused[0]

def cpu():
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
c0, t0 = cpu(), time.monotonic()
time.sleep(3)
share = (cpu() - c0) / (time.monotonic() - t0)
print("backend CPU with 16 clients held and 4 refused: %.0f%% of a core" % (100 * share))
assert share < 0.25, "the backend spins"
for s in clients[:16]:
    s.settimeout(15)
    assert s.recv(1) == b"", "an idle client was not closed"
print("the 16 idle clients were closed")
PYEOF
"$HUNTER" ctl held stop > /dev/null || fail "hunter ctl held stop"
rc=0
wait $run || rc=$?
[ $rc -eq 0 ] || { tail -n 5 "$T/out" "$T/err"; fail "hunter run exited $rc"; }
pass "a 17th console.sock client is refused, idle ones time out, and the loop does not spin"
