#!/bin/sh
# A node whose host accepts the TCP connection and then says nothing (a
# silent listener on 127.0.0.1 standing in for a hung sshd) holds up no
# one: each connect to it runs on a thread of its own, so the backend's
# loop keeps reading heartbeats while the SSH handshake waits out its
# 10 s timeout, again and again with backoff.  A job on the two local
# nodes, with a 3 s heartbeat timeout, runs through several of those
# connects: the stream never falls silent for long (it did, for the
# whole 10 s, when the connect ran on the loop), no rank is taken for
# dead, the job finishes, and the silent node is reported with its error.
. "$SRCDIR/tests/integration/lib.sh"
"$PY" - "$T/port" <<'PYEOF' &
import socket, sys, threading, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
held = []
deadline = time.time() + 120
s.settimeout(1)
while time.time() < deadline:
    try:
        c, _ = s.accept()
        held.append(c)          # open, and never a byte
    except socket.timeout:
        pass
PYEOF
listener=$!
cleanup_hooks="kill $listener 2>/dev/null || true"
wait_until 5 "the silent listener did not start" test -s "$T/port"
touch "$T/known_hosts"
cat > "$T/cluster.yaml" <<EOC
cluster: silent
ssh: {known_hosts: $T/known_hosts}
nodes:
  - {name: l0, host: local, rack: r1, devices: {cpu: 2}}
  - {name: l1, host: local, rack: r1, devices: {cpu: 2}}
  - {name: mute, host: 127.0.0.1, port: $(cat "$T/port"), rack: r2, devices: {cpu: 2}, spare: true}
EOC
mkdata "$T/data" 2000 64
small_job "$T/j.yaml" quiet "$T/data" 'policy: {failover: {heartbeat_timeout: 3s}}'
sed -i 's/ranks: 1}/ranks: 2, placement: spread}/; s/epochs: 2/epochs: 25/; s/global: 32, micro: 32/global: 64, micro: 32/' "$T/j.yaml"
grep -q 'epochs: 25' "$T/j.yaml" || fail "could not edit the job"
# Each line of the stream is stamped as it arrives: a loop held up by a
# connect would show as a long silence between two frames.
start=$(date +%s)
{ "$HUNTER" run --json --inject slow-data=20 --cluster "$T/cluster.yaml" \
	"$T/j.yaml" 2> "$T/err"; echo $? > "$T/rc"; } |
	"$PY" -c '
import sys, time
out, stamps = open(sys.argv[1], "w"), open(sys.argv[2], "w")
for line in sys.stdin:
    out.write(line)
    stamps.write("%.3f\n" % time.monotonic())
' "$T/out" "$T/stamps"
rc=$(cat "$T/rc")
took=$(( $(date +%s) - start ))
grep -E '"kind":"(failover|failed|restarted)"' "$T/out" | cut -c1-300 || true
grep '"node":"mute"' "$T/out" | head -n 2 | cut -c1-300 || true
[ $rc -eq 0 ] || { tail -n 5 "$T/out"; fail "hunter run exited $rc"; }
echo "the run took $took s"
[ "$took" -ge 22 ] || fail "the run took $took s: too short to span a retry of the silent node"
! grep -qE '"kind":"(failover|failed|restarted)"' "$T/out" ||
	fail "a rank was taken for dead while the silent node was retried"
[ "$(jget "$T/out" summary state)" = finished ] || fail "the job did not finish"
"$PY" - "$T/out" "$T/stamps" <<'PYEOF' || fail "the stream stalled"
import sys
lines = open(sys.argv[1]).read().splitlines()
stamps = [float(x) for x in open(sys.argv[2]).read().split()]
# From the launch (the first rank's "started") to the summary: metrics
# come every second.
first = next(i for i, l in enumerate(lines) if '"kind":"started"' in l)
run = stamps[first:]
gap = max(b - a for a, b in zip(run, run[1:]))
print("longest silence in the stream while the job ran: %.1f s" % gap)
assert gap < 6, gap        # the stall it guards against was 10 s
PYEOF
grep -q '"kind":"refused".*"node":"mute"' "$T/out" ||
	fail "the silent node's error was not reported"
pass "a silent node stalled nothing; the job finished in $took s"
