# lib.sh: shared by the shell tests.  Each test gets a private temporary
# directory (removed on exit) and its own state directory.
set -eu
: "${HUNTER:?HUNTER must point at the binary (make check sets it)}"
: "${SRCDIR:?SRCDIR must point at the source tree}"
PY=${PYTHON:-/usr/bin/python3}
T=$(mktemp -d /tmp/hunter-test.XXXXXX)
export HUNTER_STATE_DIR="$T/state"
# No user config.yaml: its metrics.listen would open a port in every test.
export XDG_CONFIG_HOME="$T/config"
cleanup_hooks=""
# Agents outlive the commands that start them: stop them by their pid
# files, so no daemon holds the test runner's output open.
stop_agents() {
	for p in "$HUNTER_STATE_DIR"/nodes/*/agent.pid; do
		[ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null || true
	done
	# An agent stops its workers first (they checkpoint), 5 s at most.
	for i in $(seq 100); do
		ls "$HUNTER_STATE_DIR"/nodes/*/agent.pid >/dev/null 2>&1 || break
		sleep 0.1
	done
}
# Under set -e a failing command would end the trap with its status, so
# the cleanup must not fail: a straggling writer gets a second chance.
# KEEP_T=DIR keeps a copy of the test's directory there, to debug it.
on_exit() {
	eval "$cleanup_hooks" || true
	stop_agents || true
	[ -z "${KEEP_T:-}" ] || cp -r "$T" "$KEEP_T" 2>/dev/null || true
	rm -rf "$T" 2>/dev/null || { sleep 1; rm -rf "$T" 2>/dev/null; } || true
}
trap on_exit EXIT

# On failure, show the end of each agent's log (the workers' exits, the
# frames refused, a sanitizer's report are there): CI keeps no $T.
show_agent_logs() {
	for l in "$HUNTER_STATE_DIR"/nodes/*/agent.log; do
		[ -f "$l" ] || continue
		echo "--- $l (last lines)" >&2
		tail -n 8 "$l" | cut -c1-300 >&2
	done
}
# The message once more after the agents' logs: what CI shows of a
# failure is its log's end.
fail() { echo "FAIL: $*" >&2; show_agent_logs; echo "FAIL: $*" >&2; exit 1; }
# test_workers: the pids of the built-in workers that this test's agents
# run, one a line.  The suite runs tests side by side (make check -j2),
# so a test never signals or counts workers by name machine-wide: a
# `pkill -f "hunter worker"` stops the other test's job too.
test_workers() {
	for _a in "$HUNTER_STATE_DIR"/nodes/*/agent.pid; do
		[ -f "$_a" ] && pgrep -P "$(cat "$_a")" -f "hunter worker" || true
	done
}
pass() { echo "ok: $*"; }

# The waits.  A test that waits for something goes through these, never
# a loop of its own (tests/faults/waits.sh checks both): a deadline that
# passes must fail the test, or it passes on what it never saw.
ms_now() { echo $(( $(date +%s%N) / 1000000 )); }
# poll_until SECONDS CMD...: run CMD every 0.1 s until it succeeds (0),
# or until SECONDS have passed (1).
poll_until() {
	_pu_end=$(( $(ms_now) + $1 * 1000 ))
	shift
	until "$@"; do
		[ "$(ms_now)" -lt "$_pu_end" ] || return 1
		sleep 0.1
	done
}
# wait_until SECONDS WHAT CMD...: poll_until, or fail the test saying
# what it waited for.
wait_until() {
	_wu_s=$1 _wu_what=$2
	shift 2
	poll_until "$_wu_s" "$@" || fail "$_wu_what (waited $_wu_s s)"
}
# wait_for FILE PATTERN [SECONDS]: until grep finds PATTERN in FILE (20 s
# at most); fails the test with the file's tail otherwise.
wait_for() {
	poll_until "${3:-20}" grep -q -- "$2" "$1" 2>/dev/null && return 0
	tail -n 5 "$1" 2>/dev/null | cut -c1-300
	fail "no '$2' in $1 after ${3:-20} s"
}

# netns_veth NS HERE THERE NET: a network namespace NS and a veth pair,
# HERE in this one as NET.1/24 and THERE in NS as NET.2/24, both up, and
# NS's loopback; the exit trap removes them.  Needs root.
netns_veth() {
	cleanup_hooks="ip netns del $1 2>/dev/null; ip link del $2 2>/dev/null${cleanup_hooks:+; $cleanup_hooks}"
	ip netns add "$1"
	ip link add "$2" type veth peer name "$3"
	ip link set "$3" netns "$1"
	ip addr add "$4.1/24" dev "$2"
	ip link set "$2" up
	ip netns exec "$1" ip addr add "$4.2/24" dev "$3"
	ip netns exec "$1" ip link set "$3" up
	ip netns exec "$1" ip link set lo up
}

# mkdata DIR NTRAIN NTEST: a small synthetic idx data set.
mkdata() { "$PY" "$SRCDIR/tests/integration/mkidx.py" "$@"; }

# jget FILE TYPE FIELD: FIELD of the last JSON line of type TYPE.
jget() {
	"$PY" - "$1" "$2" "$3" <<'PYEOF'
import json, sys
val = None
for line in open(sys.argv[1]):
    line = line.strip()
    if line.startswith("{"):
        o = json.loads(line)
        if o.get("t") == sys.argv[2]:
            val = o.get(sys.argv[3])
print(val)
PYEOF
}

# small_job FILE NAME DATADIR [EXTRA-YAML]: a fast mlp job on DATADIR.
small_job() {
	cat > "$1" <<YEOF
name: $2
resources: {ranks: 1}
model: {type: mlp, hidden: [32]}
data: {path: $3, prefetch: 4}
train:
  epochs: 2
  seed: 7
  optimizer: {type: sgd, momentum: 0.9, weight_decay: 5e-4}
  lr: {base: 0.05, schedule: cosine, warmup_steps: 5}
  batch: {global: 32, micro: 32}
compression: {method: none}
checkpoint: {every_steps: 0, keep: 3}
${4:-}
YEOF
}
