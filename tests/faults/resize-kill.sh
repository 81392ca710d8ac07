#!/bin/sh
# A resize interrupted (issue 25, check 5).  An elastic job alone is grown
# by the scheduler; (1) as it resizes, kill -9 of one of its old ranks:
# the group it was leaving is gone anyway, the resize goes on, the job
# finishes; (2) as it resizes, kill -9 of the backend (hunter run), then
# hunter run --attach: the journal has the resize's decision with its
# placement, the attached backend carries it out, and the job finishes,
# its summary's wall time from the first launch (the journal's), 3 s
# without a backend included.
# The job's batch is adaptive ({min: 96, max: 288}: 48 a rank, the rule's
# while its noise is unknown): the attached backend knows the batch the
# group runs at, which it learns from rank 0's global_batch when the
# group was launched before the kill (hunter jobs says it).  (3) The
# backend dies (HUNTER_CRASH_AT=relaunch) once it has journalled the new
# generation's launch and before it sent it: the attached backend finds
# no agent that has those ranks (their hellos do not list them), starts
# the generation again at once, spending no failover, and the job
# finishes.  (4) As (3), with the journal cut to what a rotation in the
# resize writes (the job's launch record, then the decision): the
# attached backend carries the resize out.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/faults/faults-lib.sh"
. "$SRCDIR/tests/integration/sched-lib.sh"
sched_config 2s 0.5s
mkdata "$T/data" 4800 200
small_job "$T/j.yaml" rkill "$T/data"
sed -i "s/ranks: 1/ranks: {min: 2, max: 6}/; s/epochs: 2/epochs: 12/; s/global: 32, micro: 32/global: {min: 96, max: 288}, micro: auto/; s/every_steps: 0/every_steps: 10/" "$T/j.yaml"
_resizing() { grep -q '"kind":"phase".*"from":"running","to":"resizing"' "$1"; }

# (1) a rank of the old generation killed in the resize
"$HUNTER" run --json --inject slow-sample=400 "$T/j.yaml" > "$T/out1" 2>&1 &
run=$!
cleanup_hooks="kill -9 $run 2>/dev/null || true"
wait_until 60 "the resize" _resizing "$T/out1"
pid=$(rank_pid "$T/out1" 1 0 0 | cut -d' ' -f1)
[ -n "$pid" ] || fail "no pid of rank 1"
kill -9 "$pid" 2>/dev/null && echo "killed rank 1 (pid $pid) in the resize" ||
	echo "rank 1 (pid $pid) had exited already"
wait $run || { rc=$?; grep -v '"metrics"' "$T/out1" | tail -n 8 | cut -c1-300; fail "(1) the run exited $rc"; }
[ "$(jget "$T/out1" summary state)" = finished ] || fail "(1) not finished"
resizes "$T/out1" rkill | head -n 1 | grep -q '^2->[3-6]$' || fail "(1) no resize up"
echo "(1) resizes: $(resizes "$T/out1" rkill | tr '\n' ' ')"
stop_agents
rm -rf "$HUNTER_STATE_DIR"

# (2) the backend killed in the resize, then --attach
t0=$(date +%s.%N)
"$HUNTER" run --json --inject slow-sample=400 "$T/j.yaml" > "$T/out2" 2>&1 &
run=$!
cleanup_hooks="kill -9 $run 2>/dev/null || true"
wait_until 60 "the resize" _resizing "$T/out2"
seen=$(date +%s.%N)
kill -9 $run
wait $run 2>/dev/null || true
echo "killed the backend in the resize"
# 3 s without a backend: the job's wall time, from its first launch,
# counts them; before, it started at the attached backend's relaunch.
sleep 3
timeout 120 "$HUNTER" run --json --attach rkill > "$T/out3" 2>&1 &
run=$!
cleanup_hooks="kill -9 $run 2>/dev/null || true"
# What the attached backend says of the batch, against rank 0's metric.
_batch() {
	"$HUNTER" jobs --json > "$T/jobs" 2>/dev/null || return 1
	"$PY" - "$T/jobs" "$T/out3" <<'PYEOF'
import json, sys
j = [json.loads(l) for l in open(sys.argv[1])]
j = [o for o in j if o["job"] == "rkill" and o["phase"] == "running" and o["ranks"] > 2]
m = [json.loads(l) for l in open(sys.argv[2]) if l.startswith('{"t":"metrics"')]
m = [o["global_batch"] for o in m if o.get("job") == "rkill" and o.get("rank") == 0
     and "global_batch" in o]
if not j or not m or m[-1] == 96:
    sys.exit(1)
print("(2) the attached backend: %d ranks at global batch %d; rank 0 reports %d"
      % (j[0]["ranks"], j[0]["global_batch"], m[-1]))
sys.exit(j[0]["global_batch"] != m[-1] or j[0]["global_batch"] != 48 * j[0]["ranks"])
PYEOF
}
wait_until 60 "the attached backend to say the batch its group runs at" _batch
set +e
wait $run
rc=$?
set -e
[ "$rc" = 0 ] || { grep -v '"metrics"' "$T/out3" | tail -n 8 | cut -c1-300; fail "(2) the attached run exited $rc"; }
[ "$(jget "$T/out3" summary state)" = finished ] || { grep -v "\"metrics\"" "$T/out3" | cut -c1-250; fail "(2) not finished"; }
ended=$(date +%s.%N)
wall=$(jget "$T/out3" summary wall_s)
"$PY" -c "import sys; w, t0, a, b = map(float, sys.argv[1:]); sys.exit(not b - a - 1 <= w <= b - t0 + 1)" \
	"$wall" "$t0" "$seen" "$ended" ||
	fail "(2) the job's wall time is $wall s; it ran from between $t0 and $seen to $ended"
echo "(2) wall time ${wall} s, from the first launch"
# The resize was carried out: by the attached backend (its resized
# event), or it had launched the new generation before the kill (the
# journal's launch record of the new size comes before the re-attach).
"$PY" - "$T/out3" "$HUNTER_STATE_DIR/journal.jsonl" <<'PYEOF' || fail "(2) the resize was lost"
import json, sys
out = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
jr = [json.loads(l) for l in open(sys.argv[2])]
by_attached = [o for o in out if o["t"] == "event" and o["kind"] == "resized"]
att = next(i for i, o in enumerate(jr) if o.get("t") == "event" and
           "re-attached" in o.get("reason", ""))
before = [o["world"] for o in jr[:att] if o.get("t") == "job" and o.get("job") == "rkill"]
print("(2) launch records before the attach: worlds %s; resized by the attached backend: %s"
      % (before, [(o["from"], o["to"]) for o in by_attached]))
assert by_attached or (before and before[-1] > 2), "no resize"
PYEOF
crc=$(final_crc "$T/out3" "$(jget "$T/out3" summary world)") || fail "(2) final weights: $crc"
echo "(2) weights $crc"

# crash_run PART OUT: a fresh run whose backend dies (SIGKILL) at its
# first relaunch, the resize's, once the launch record is journalled.
crash_run() {
	stop_agents
	rm -rf "$HUNTER_STATE_DIR"
	set +e
	HUNTER_CRASH_AT=relaunch "$HUNTER" run --json --inject slow-sample=400 \
	    "$T/j.yaml" > "$2" 2>&1
	rc=$?
	set -e
	[ "$rc" = 137 ] || { tail -n 5 "$2" | cut -c1-300; fail "($1) the run exited $rc, not killed at the relaunch"; }
}

# (3) the backend dies between the journal's launch record and the launch
crash_run 3 "$T/out4"
"$PY" - "$HUNTER_STATE_DIR/journal.jsonl" <<'PYEOF' || fail "(3) the journal lacks the relaunch"
import json, sys
jr = [json.loads(l) for l in open(sys.argv[1])]
w = [o["world"] for o in jr if o.get("t") == "job"]
assert len(w) == 2 and w[1] > 2, w
print("(3) killed after the launch record of generation 1 (worlds %s)" % w)
PYEOF
timeout 120 "$HUNTER" run --json --attach rkill > "$T/out5" 2>&1 ||
	{ rc=$?; grep -v '"metrics"' "$T/out5" | tail -n 8 | cut -c1-300; fail "(3) the attached run exited $rc"; }
[ "$(jget "$T/out5" summary state)" = finished ] || { grep -v '"metrics"' "$T/out5" | cut -c1-250; fail "(3) not finished"; }
grep '"kind":"phase".*"to":"reforming"' "$T/out5" | grep -q 'generation 1 never started: the agent of local[0-9] does not have rank 0 (6 ranks missing' ||
	{ grep -v '"metrics"' "$T/out5" | cut -c1-250; fail "(3) generation 1 not restarted for its absence"; }
[ "$(grep '"kind":"phase".*"to":"left"' "$T/out5" | grep -c 'does not have it (its launch never arrived)')" = 6 ] ||
	{ grep -v '"metrics"' "$T/out5" | cut -c1-250; fail "(3) not every absent rank was left behind"; }
! grep '"kind":"phase".*"to":"reforming"' "$T/out5" | grep -q '"reason":"failover' ||
	fail "(3) a failover was spent on ranks that never started"
echo "(3) the attached backend restarted generation 1, its 6 ranks absent from their agents"
crc3=$(final_crc "$T/out5" "$(jget "$T/out5" summary world)") || fail "(3) final weights: $crc3"

# (4) as (3), but the journal had rotated in the resize: the new file
# holds what a rotation writes, the live job's launch record and the
# decision under way (the launch record of generation 1 never made it).
crash_run 4 "$T/out6"
"$PY" - "$HUNTER_STATE_DIR/journal.jsonl" <<'PYEOF' || fail "(4) no decision to keep"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
jr = [json.loads(l) for l in lines]
dec = max(i for i, o in enumerate(jr) if o.get("t") == "decision")
job = max(i for i, o in enumerate(jr[:dec]) if o.get("t") == "job")
open(sys.argv[1], "w").write(lines[job] + "\n" + lines[dec] + "\n")
print("(4) the journal as a rotation in the resize leaves it: %s, %s" %
      (jr[job]["t"], jr[dec]["t"]))
PYEOF
timeout 120 "$HUNTER" run --json --attach rkill > "$T/out7" 2>&1 ||
	{ rc=$?; grep -v '"metrics"' "$T/out7" | tail -n 8 | cut -c1-300; fail "(4) the attached run exited $rc"; }
[ "$(jget "$T/out7" summary state)" = finished ] || { grep -v '"metrics"' "$T/out7" | cut -c1-250; fail "(4) not finished"; }
[ "$(resizes "$T/out7" rkill | head -n 1)" = "2->6" ] || fail "(4) the attached backend did not carry out the resize"
crc4=$(final_crc "$T/out7" "$(jget "$T/out7" summary world)") || fail "(4) final weights: $crc4"
echo "(4) the attached backend carried out the resize: $(resizes "$T/out7" rkill | tr '\n' ' ')"
pass "a resize survived the kill of a rank and of the backend, three times (weights $crc, $crc3, $crc4)"
