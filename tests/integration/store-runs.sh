#!/bin/sh
# Issue 21: a job name run again in the same backend must not find the
# last run's rendezvous keys.  A backend (hunter run of a job "keeper"
# that holds its node) runs a job "rdv" twice over console.sock; rdv's
# rank (fakeagent.py, store mode) does what a rank does before its peer
# has published: a get of rdv/g0/peer, then a set of it to its run id,
# then a get again.  The second run's first get must wait and time out;
# it was answered at once with the first run's value (keys were
# job/gN/... with no run id, and nothing was ever deleted).
. "$SRCDIR/tests/integration/lib.sh"
"$PY" "$SRCDIR/tests/integration/fakeagent.py" "$T/hold" hold k > "$T/fake1.log" 2>&1 &
f1=$!
"$PY" "$SRCDIR/tests/integration/fakeagent.py" "$T/st" store s0 > "$T/fake2.log" 2>&1 &
f2=$!
cleanup_hooks="kill $f1 $f2 2>/dev/null || true"
_ready1() { [ -f "$T/hold/ready" ] && [ -f "$T/st/ready" ]; }
poll_until 10 _ready1 || true
[ -f "$T/hold/ready" ] && [ -f "$T/st/ready" ] || fail "the fake agents did not start"
cat > "$T/cluster.yaml" <<EOC
cluster: storeruns
nodes:
  - {name: k, host: local, rack: a, devices: {cpu: 1}, state_dir: $T/hold/k}
  - {name: s0, host: local, rack: a, devices: {cpu: 1}, state_dir: $T/st/s0}
EOC
mkdata "$T/data" 200 64
small_job "$T/keeper.yaml" keeper "$T/data"
small_job "$T/rdv.yaml" rdv "$T/data"
timeout 90 "$HUNTER" run --json --cluster "$T/cluster.yaml" "$T/keeper.yaml" \
	> "$T/out" 2> "$T/err" &
run=$!
_ready2() { grep -q '"kind":"placed"' "$T/out" 2>/dev/null; }
poll_until 10 _ready2 || true
grep -q '"kind":"placed"' "$T/out" || { cat "$T/err"; fail "keeper was not placed"; }
submit() {
	"$PY" - "$HUNTER_STATE_DIR/console.sock" "$T/rdv.yaml" <<'PYEOF'
import sys
sys.path.insert(0, __import__("os").environ["SRCDIR"] + "/tests/integration")
from frames import conn, frame, read_frame
s = conn(sys.argv[1], 10)
s.sendall(frame({"t": "cmd", "cmd": "submit", "file": sys.argv[2]}))
a = read_frame(s)
assert a and a["t"] == "ok", a
PYEOF
}
for n in 1 2; do
	submit || fail "submit $n of rdv was refused"
	_ready3() { [ "$(grep -c '"t":"job_end","job":"rdv"' "$HUNTER_STATE_DIR/journal.jsonl" 2>/dev/null)" -ge $n ]; }
	poll_until 10 _ready3 || true
	[ "$(grep -c '"t":"job_end","job":"rdv"' "$HUNTER_STATE_DIR/journal.jsonl")" -ge $n ] ||
		{ cat "$T/st/store.log" 2>/dev/null; fail "run $n of rdv did not end"; }
done
"$HUNTER" ctl keeper stop > /dev/null || fail "hunter ctl keeper stop"
rc=0
wait $run || rc=$?
[ $rc -eq 0 ] || { tail -n 5 "$T/out" "$T/err"; fail "hunter run exited $rc"; }
cat "$T/st/store.log"
"$PY" - "$T/st/store.log" <<'PYEOF' || fail "see above"
import sys
lines = [l.split() for l in open(sys.argv[1])]
runs = []
for l in lines:
    if l[1] not in runs:
        runs.append(l[1])
assert len(runs) == 2 and len(lines) == 4, "two runs of two gets each: %s" % lines
for k, run in enumerate(runs):
    first, second = [l for l in lines if l[1] == run]
    assert first[3:] != ["value", runs[0]] or k == 0, \
        "run %s got the first run's value before publishing its own" % run
    assert first[3] != "value", "run %s's first get found %s" % (run, first)
    assert second[3:] == ["value", run], "run %s's second get: %s" % (run, second)
PYEOF
pass "a job name run twice in one backend never sees the first run's keys"
