# faults-lib.sh: helpers for the fault-matrix tests, sourced after
# tests/integration/lib.sh (which gives $T, $HUNTER_STATE_DIR, fail/pass,
# the waits, mkdata, small_job, jget and the agent cleanup).

# final_crc OUT WORLD: the params_crc32 that every rank reported in its
# "finished" event (all equal, one per rank), printed once.
final_crc() {
	"$PY" - "$1" "$2" <<'PYEOF'
import json, sys
c = {}
for line in open(sys.argv[1]):
    if not line.startswith("{"):
        continue
    o = json.loads(line)
    if o.get("t") == "event" and o.get("kind") == "finished" and "params_crc32" in o:
        c[o["rank"]] = o["params_crc32"]
w = int(sys.argv[2])
if sorted(c) != list(range(w)) or len(set(c.values())) != 1:
    sys.exit("finished events with params_crc32: %r (expected one per rank, all equal)" % c)
print(c[0])
PYEOF
}

# rank_pid OUT RANK [MINSTEP [GENERATION]]: the pid and step of RANK from
# its newest metrics frame of GENERATION (0), once that frame's step is
# >= MINSTEP; empty if there is none yet.
rank_pid() {
	"$PY" - "$1" "$2" "${3:-0}" "${4:-0}" <<'PYEOF'
import json, sys
pid = ""
for line in open(sys.argv[1]):
    if '"t":"metrics"' not in line or not line.startswith("{"):
        continue
    try:
        o = json.loads(line)
    except ValueError:
        continue        # a line still being written
    if (o.get("scope") == "rank" and o.get("rank") == int(sys.argv[2]) and
            o.get("generation", 0) == int(sys.argv[4]) and "pid" in o and
            o.get("step", -1) >= int(sys.argv[3])):
        pid = "%d %d" % (o["pid"], o["step"])
print(pid)
PYEOF
}

# ckpt_dir_job FILE DIR: point the job file's checkpoint.dir at DIR.
ckpt_dir_job() {
	sed -i "s|^checkpoint: {\(.*\)}|checkpoint: {\1, dir: $2}|" "$1"
	grep -q "dir: $2" "$1" || fail "could not set checkpoint.dir in $1"
}

# On failure, show the end of each agent's log, and keep the whole
# temporary directory in $FAULTS_KEEP/NAME when that is set.
fail() {
	echo "FAIL: $*" >&2
	show_agent_logs
	echo "FAIL: $*" >&2
	if [ -n "${FAULTS_KEEP:-}" ]; then
		mkdir -p "$FAULTS_KEEP"
		cp -a "$T" "$FAULTS_KEEP/$(basename "$0" .sh).$$" 2>/dev/null || true
		echo "kept $T in $FAULTS_KEEP/$(basename "$0" .sh).$$" >&2
	fi
	exit 1
}

# plain_run JOB OUT [ARGS...]: the undisturbed reference run of JOB, in
# a state directory of its own (its journal, checkpoints and agents do
# not meet the disturbed run's), its agents stopped afterwards.
plain_run() {
	_job=$1 _out=$2
	shift 2
	_rc=0
	HUNTER_STATE_DIR="$T/plain-state" "$HUNTER" run --json "$@" "$_job" > "$_out" 2>&1 || _rc=$?
	for _p in "$T"/plain-state/nodes/*/agent.pid; do
		[ -f "$_p" ] && kill "$(cat "$_p")" 2>/dev/null || true
	done
	for _i in $(seq 50); do
		ls "$T"/plain-state/nodes/*/agent.pid > /dev/null 2>&1 || break
		sleep 0.1
	done
	[ $_rc = 0 ] || { tail -n 5 "$_out" | cut -c1-300; fail "the undisturbed run exited $_rc"; }
}

# needs_nobody: the tests that play another user run as root and switch
# to nobody (uid 65534) with setpriv; elsewhere they skip (77), saying
# why.  $T is opened to nobody (what is inside keeps its own modes).
# nobody CMD...: CMD as that user.
needs_nobody() {
	[ "$(id -u)" = 0 ] || { echo "skip: needs root to switch users"; exit 77; }
	command -v setpriv > /dev/null || { echo "skip: no setpriv"; exit 77; }
	chmod 755 "$T"
}
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
