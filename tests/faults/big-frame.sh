#!/bin/sh
# Security: a frame that declares 1 GiB is refused from its 4-byte header,
# before anything is allocated for it, end to end: against a running
# backend's console.sock (hunter ctl's socket) while a job trains, and
# against an agent's socket.  Each process runs under an address-space
# limit of what it has plus 256 MiB (prlimit on the live backend,
# ulimit -v for the agent), so an allocation of the declared size would
# abort it.  The link is closed, the process lives, the job finishes, and
# a frame just over the 1 MiB limit is refused the same way.
# (tests/unit/test-proto.c checks the reader itself: its buffer stays
# under 4 KiB after the 1 GiB header.)
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/faults/faults-lib.sh"
command -v prlimit > /dev/null || { echo "skip: no prlimit"; exit 77; }
mkdata "$T/data" 2000 100
small_job "$T/j.yaml" bigf "$T/data"
sed -i 's/epochs: 2/epochs: 3/' "$T/j.yaml"
"$HUNTER" run --json --inject slow-data=20 "$T/j.yaml" > "$T/out" 2>&1 &
run=$!
cleanup_hooks="kill -9 \$run 2>/dev/null || true"
wait_for "$T/out" '"t":"metrics"'
sock="$HUNTER_STATE_DIR/console.sock"
[ -S "$sock" ] || fail "no console.sock"
vm=$(sed -n 's/^VmSize:[[:space:]]*\([0-9]*\) kB/\1/p' /proc/$run/status)
[ -n "$vm" ] || fail "no VmSize for pid $run"
lim=$(( (vm + 262144) * 1024 ))
prlimit --pid $run --as=$lim:$lim || fail "prlimit"
echo "backend pid $run: VmSize $vm kB, limit now $((lim / 1048576)) MiB"

send() {	# send SOCKET LABEL BYTES-AS-PYTHON: the link must be closed
	"$PY" - "$1" "$2" "$3" <<'PYEOF' || fail "$2 on $1: see above"
import socket, struct, sys, time
path, label, data = sys.argv[1], sys.argv[2], eval(sys.argv[3])
s = socket.socket(socket.AF_UNIX)
s.connect(path)
s.settimeout(5)
try:
    s.sendall(data)
    got = s.recv(1 << 16)
    while got and b"\n" not in got and len(got) < 4:
        got += s.recv(1 << 16)
    # the reply to a refused frame, if any, is an error frame; then EOF
    while got:
        got = s.recv(1 << 16)
except socket.timeout:
    sys.exit("%s: the link was not closed within 5 s" % label)
except ConnectionResetError:
    pass
print("%s: link closed" % label)
PYEOF
}
send "$sock" "1 GiB frame to console.sock" 'struct.pack(">I", 1 << 30) + b"{"'
send "$sock" "1 MiB + 1 frame to console.sock" 'struct.pack(">I", (1 << 20) + 1) + b"{" * 64'
kill -0 $run 2>/dev/null || fail "the backend died"
"$HUNTER" ctl bigf checkpoint > "$T/ctl" 2>&1 || { cat "$T/ctl"; fail "console.sock no longer serves hunter ctl"; }
rc=0
wait $run || rc=$?
cleanup_hooks=""
[ $rc = 0 ] || { tail -n 5 "$T/out" | cut -c1-300; fail "hunter run exited $rc"; }
[ "$(jget "$T/out" summary state)" = finished ] || fail "the job did not finish"

# An agent of its own, started under the same kind of limit -- except in
# a sanitizer build, whose shadow memory needs terabytes of address space
# before main(); there the test of the frame itself still holds.
dir="$T/solo"
if "$HUNTER" --version | grep -q asan; then
	"$HUNTER" agent --node solo --dir "$dir" --idle-exit 60
else
	(ulimit -v $(( 256 * 1024 + 262144 )); "$HUNTER" agent --node solo --dir "$dir" --idle-exit 60)
fi
cleanup_hooks="kill \$(cat '$dir/agent.pid') 2>/dev/null || true"
agent_up() { [ -S "$dir/agent.sock" ] && [ -s "$dir/agent.pid" ]; }
poll_until 5 agent_up || { ls -la "$dir"; cat "$dir/agent.log"; fail "the agent did not start under the limit"; }
apid=$(cat "$dir/agent.pid")
echo "agent pid $apid: VmSize $(sed -n 's/^VmSize:[[:space:]]*//p' /proc/$apid/status), limit 512 MiB"
send "$dir/agent.sock" "1 GiB frame to an agent" 'struct.pack(">I", 1 << 30) + b"{"'
send "$dir/agent.sock" "4 GiB - 1 frame to an agent" 'struct.pack(">I", (1 << 32) - 1) + b"{"'
sleep 0.2
kill -0 "$apid" 2>/dev/null || { cat "$dir/agent.log"; fail "the agent died"; }
grep -q "exceeds the 1048576-byte limit" "$dir/agent.log" || { cat "$dir/agent.log"; fail "no message in the agent's log"; }
pass "1 GiB frames refused by the backend and an agent under a memory limit"
