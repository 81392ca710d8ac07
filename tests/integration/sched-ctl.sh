#!/bin/sh
# Scheduler check 5: pause, resume, checkpoint, migrate and stop through
# `hunter ctl`.  After a migration the final weights are bit-identical to
# those of a run without it (same seed, same world size).  A migrate of a
# rank or to a node that is not there is refused, naming which, with the
# nodes the rank could move to.
. "$SRCDIR/tests/integration/lib.sh"
mkdata "$T/data" 4000 64
small_job "$T/j.yaml" ctljob "$T/data"
sed -i 's/ranks: 1/ranks: 2/; s/epochs: 2/epochs: 12/; s/micro: 32/micro: 16/' "$T/j.yaml"

crc() { "$PY" -c '
import json, sys
c = {o["rank"]: o["params_crc32"] for o in map(json.loads, open(sys.argv[1]))
     if o.get("t") == "event" and o.get("kind") == "finished" and "params_crc32" in o}
assert len(c) == 2 and len(set(c.values())) == 1, c
print(c[0])' "$1"; }

"$HUNTER" run --json "$T/j.yaml" > "$T/plain" || fail "plain run"
plain=$(crc "$T/plain")
stop_agents
rm -rf "$HUNTER_STATE_DIR"

"$HUNTER" run --json --inject slow-data=4 "$T/j.yaml" > "$T/out" 2>&1 &
run=$!
cleanup_hooks="kill -9 $run 2>/dev/null || true"
wait_for "$T/out" '"t":"metrics"'
"$HUNTER" ctl ctljob pause || fail "ctl pause"
wait_for "$T/out" '"kind":"paused"'
# Heartbeats ("beat") go on while paused; training metrics must not.
n1=$(grep '"t":"metrics"' "$T/out" | grep -vc '"beat":true')
sleep 2
n2=$(grep '"t":"metrics"' "$T/out" | grep -vc '"beat":true')
[ "$n1" = "$n2" ] || fail "steps advanced while paused ($n1 -> $n2 metrics with steps)"
grep '"t":"metrics"' "$T/out" | tail -n 1 | grep -q '"paused":true' || fail "no paused heartbeat"
"$HUNTER" ctl ctljob resume || fail "ctl resume"
wait_for "$T/out" '"kind":"resumed"'
"$HUNTER" ctl ctljob checkpoint || fail "ctl checkpoint"
wait_for "$T/out" '"kind":"checkpoint","rank":0.*"reason":"step'
"$HUNTER" ctl ctljob migrate 1 local3 || fail "ctl migrate"
wait_for "$T/out" '"kind":"migrated".*generation 1'
set +e
"$HUNTER" ctl ctljob migrate 7 local3 > "$T/bad" 2>&1
rc=$?
set -e
[ "$rc" = 1 ] && grep -q "migrate: ctljob has no rank 7 (its ranks are 0..1)" "$T/bad" ||
	{ cat "$T/bad"; fail "bad migrate accepted"; }
set +e
"$HUNTER" ctl ctljob migrate 1 local9 > "$T/bad" 2>&1
rc=$?
set -e
cat "$T/bad"
[ "$rc" = 1 ] && grep -q "migrate: no node 'local9' in the cluster; rank 1 of ctljob could move to: local[0-2]" "$T/bad" ||
	fail "a migrate to no node: it should name the node and where the rank could go"
wait $run || fail "the controlled run exited $?"
[ "$(jget "$T/out" summary state)" = finished ] || fail "not finished"
grep '"kind":"migrated"' "$T/out" | grep -q 'rank 1: local[0-2] -> local3 (operator)' || fail "migration reason"
grep -q '"t":"decision".*"kind":"migrated"' "$HUNTER_STATE_DIR/journal.jsonl" || fail "decision not journalled"
moved=$(crc "$T/out")
[ "$moved" = "$plain" ] || fail "weights differ after pause/checkpoint/migrate: $moved vs $plain"

"$HUNTER" run --json --inject slow-data=4 "$T/j.yaml" > "$T/stopped" 2>&1 &
run=$!
cleanup_hooks="kill -9 $run 2>/dev/null || true"
wait_for "$T/stopped" '"t":"metrics"'
"$HUNTER" ctl ctljob stop || fail "ctl stop"
wait $run || true
[ "$(jget "$T/stopped" summary state)" = stopped ] || fail "stop did not stop"
pass "pause, resume, checkpoint, migrate, stop; weights $moved = $plain"
