#!/bin/sh
# hunter agents lists the agents of the state directory's nodes, and
# --stop stops them: after a run, the embedded cluster's four agents are
# listed as running, --stop refuses while a backend holds the state
# directory, and once it is gone --stop leaves no agent of the state
# directory running (their pids gone, their pid files removed).
. "$SRCDIR/tests/integration/lib.sh"
cat > "$T/j.yaml" <<'YEOF'
name: napper
resources: {ranks: 1}
program: {argv: [sleep, "4"]}
YEOF
( cd "$T" && timeout 60 "$HUNTER" run --json j.yaml > run.out 2>&1 ) &
run=$!
cleanup_hooks="kill $run 2>/dev/null || true"
wait_for "$T/run.out" '"kind":"placed"' 30
set +e
"$HUNTER" agents --stop > "$T/refused" 2>&1
rc=$?
set -e
[ "$rc" = 1 ] && grep -q "a backend (pid [0-9]*) runs .* its jobs need these agents" "$T/refused" ||
	{ cat "$T/refused"; fail "--stop under a running backend: exit $rc"; }
wait $run || fail "the run exited $?"
"$HUNTER" agents > "$T/list" || fail "hunter agents exited $?"
cat "$T/list"
grep -q "agents of $HUNTER_STATE_DIR: 4 running" "$T/list" || fail "not the four agents"
pids=$(awk '$3 == "running" { print $2 }' "$T/list")
[ "$(echo $pids | wc -w)" = 4 ] || fail "pids: $pids"
"$HUNTER" agents --stop > "$T/stop" || { rc=$?; cat "$T/stop"; fail "--stop exited $rc"; }
cat "$T/stop"
grep -q "stopped 4 agents" "$T/stop" || fail "--stop did not say it stopped four"
for p in $pids; do
	! kill -0 "$p" 2>/dev/null || fail "agent pid $p still runs"
done
! ls "$HUNTER_STATE_DIR"/nodes/*/agent.pid 2>/dev/null || fail "pid files left"
"$HUNTER" agents > "$T/list2"
grep -q ": 0 running" "$T/list2" || { cat "$T/list2"; fail "agents left"; }
"$HUNTER" agents --stop | grep -q "no agent of" || fail "a second --stop"
pass "hunter agents lists 4, --stop refuses under a backend, then stops all"
