#!/bin/sh
# Issue 21: nodes with index 1024 and above were silently dead: the
# cluster file allows 4096 nodes, but the backend polled only the first
# 1024 links and backend_send_cmd skipped the rest, while placement still
# put ranks there.  2000 local nodes, played by one fakeagent.py, of which
# only the last four have a CPU slot: a 4-rank job is placed on them,
# their hellos and exits are read, and a stop reaches them
# (`hunter ctl JOB stop`), so the job ends.  The soft open-file limit
# starts at 1024, as it does on most systems; the backend raises its own.
. "$SRCDIR/tests/integration/lib.sh"
N=2000
"$PY" "$SRCDIR/tests/integration/fakeagent.py" "$T/nodes" hold \
	"n%04d:0-$((N - 1))" > "$T/fake.log" 2>&1 &
fake=$!
cleanup_hooks="kill $fake 2>/dev/null || true"
_ready1() { [ -f "$T/nodes/ready" ]; }
poll_until 30 _ready1 || true
[ -f "$T/nodes/ready" ] || { cat "$T/fake.log"; fail "the fake agents did not start"; }
"$PY" - "$T/cluster.yaml" "$T/nodes" $N <<'PYEOF'
import sys
path, root, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(path, "w") as f:
    f.write("cluster: big\nnodes:\n")
    for i in range(n):
        f.write("  - {name: n%04d, host: local, rack: r%d, devices: {cpu: %d}, "
                "state_dir: %s/n%04d}\n" % (i, i // 500, 1 if i >= n - 4 else 0,
                                           root, i))
PYEOF
mkdata "$T/data" 200 64
small_job "$T/j.yaml" far "$T/data"
sed -i 's/ranks: 1}/ranks: 4, placement: pack}/; s/micro: 32/micro: 8/' "$T/j.yaml"
[ "$(ulimit -Hn)" = unlimited ] || [ "$(ulimit -Hn)" -ge 2200 ] ||
	fail "the hard open-file limit ($(ulimit -Hn)) is under 2200: cannot test 2000 nodes"
(ulimit -Sn 1024; exec timeout 120 "$HUNTER" run --json --cluster "$T/cluster.yaml" "$T/j.yaml") \
	> "$T/out" 2> "$T/err" &
run=$!
cleanup_hooks="$cleanup_hooks; kill $run 2>/dev/null || true"
_ready2() { grep -q '"kind":"placed"' "$T/out" 2>/dev/null; }
poll_until 60 _ready2 || true
grep '"kind":"placed"' "$T/out" | cut -c1-200
grep -q '"kind":"placed".*on n1996, n1997, n1998, n1999' "$T/out" ||
	{ tail -n 5 "$T/out" "$T/err"; fail "the job was not placed on n1996..n1999"; }
sleep 1
"$HUNTER" ctl far stop > /dev/null || fail "hunter ctl far stop"
rc=0
wait $run || rc=$?
[ $rc -eq 0 ] || { tail -n 5 "$T/out" "$T/err"; fail "hunter run exited $rc (124: the stop never reached nodes past 1024)"; }
[ "$(jget "$T/out" summary state)" = stopped ] || { tail -n 5 "$T/out"; fail "the job did not stop"; }
grep -q 'Too many open files' "$T/out" && fail "a node failed for want of file descriptors"
pass "$N nodes: ranks on the last four are read, commanded and stopped"
