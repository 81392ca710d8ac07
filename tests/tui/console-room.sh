#!/bin/sh
# Issue 29, check 4: the state directory on a nearly full file system.
# It is an 8 MiB tmpfs; one node runs a job that checkpoints every 3000
# steps (about 200 kB each, three kept).  While there is room, the node's
# panel shows the free space in its usual colour; a file that leaves 9%
# of it free turns it red (bar_high) and brings one warning event naming
# the node; it stays one while the room stays short; then a file that
# leaves less than a checkpoint makes the next checkpoint fail, after the
# warning.  Needs root (mount).
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/tui/tui-lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: mounting a tmpfs needs root"; exit 77; }
mkdir -p "$HUNTER_STATE_DIR"
mount -t tmpfs -o size=8m,mode=0700 tmpfs "$HUNTER_STATE_DIR" 2>"$T/mnt" ||
	{ cat "$T/mnt"; echo "SKIP: cannot mount a tmpfs here"; exit 77; }
# The console and the agent go first (the hooks run in order), then the
# file system.
cleanup_hooks="$cleanup_hooks stop_agents; umount -l '$HUNTER_STATE_DIR' 2>/dev/null || true;"
cat > "$T/cluster.yaml" <<YEOF
cluster: room
nodes:
  - {name: n1, host: local, rack: r1, devices: {cpu: 2}}
YEOF
# About a checkpoint every second or two, an epoch a few times a second:
# what the job itself writes grows the state directory slowly.
mkdata "$T/data" 20000 64
small_job "$T/j.yaml" roomjob "$T/data"
sed -i 's/epochs: 2/epochs: 100000/; s/global: 32, micro: 32/global: 256, micro: 256/; s/every_steps: 0/every_steps: 3000/' "$T/j.yaml"
tui_start "\"$HUNTER\" --cluster \"$T/cluster.yaml\" \"$T/j.yaml\""
need 'roomjob +running' 30 "the job is not running"
keys 2
need 'state [0-9.]+ [KM]iB free' 15 "no free space on the node's panel"
# The panel's state line with its colours: red is bar_high's 167.
esc=$(printf '\033')
state_line() { tm capture-pane -e -p -t t | grep 'state .*free' | head -n 1; }
red() { state_line | grep -qE "38;5;167m($esc\[[0-9;]*m)*[0-9.]+ ([KMG]i)?B free"; }
# jcount KIND TEXT: the journal's events of KIND whose reason holds TEXT.
jcount() {
	"$PY" - "$HUNTER_STATE_DIR/journal.jsonl" "$1" "$2" <<'PYEOF'
import json, sys
n = 0
for l in open(sys.argv[1]):
    try:
        e = json.loads(l)
    except ValueError:
        continue
    n += e.get("t") == "event" and e.get("kind") == sys.argv[2] and \
        sys.argv[3] in e.get("reason", "")
print(n)
PYEOF
}
at_least() { [ "$(jcount "$2" "$3")" -ge "$1" ]; }
wait_until 60 "a first checkpoint" at_least 1 checkpoint "step "
red && { state_line | cat -v; fail "red with room to spare"; }
[ "$(jcount warning 'file system')" = 0 ] || fail "a warning with room to spare"
df -k "$HUNTER_STATE_DIR" | tail -n 1
# Leave 9% of the 8 MiB free.
avail=$(df -k --output=avail "$HUNTER_STATE_DIR" | tail -n 1)
dd if=/dev/zero of="$HUNTER_STATE_DIR/fill" bs=1k count=$(( avail - 737 )) 2>/dev/null
df -k "$HUNTER_STATE_DIR" | tail -n 1
poll_until 10 red || { state_line | cat -v; fail "the free space is not red at 9% free"; }
keys Enter
need 'state fs' 10 "no detail view"
tm capture-pane -e -p -t t | grep 'state fs' |
    grep -qE "38;5;167m($esc\[[0-9;]*m)*[0-9.]+[BKMG] free" ||
	{ tm capture-pane -e -p -t t | grep 'state fs' | cat -v; fail "the detail view's state fs is not red"; }
keys Escape
wait_until 10 "a warning event" at_least 1 warning "file system of its state directory"
sleep 4		# four more samples, all short of room
n=$(jcount warning "file system")
[ "$n" = 1 ] || fail "warned $n times, not once"
keys 1
need 'warning .*n1: node n1: the file system of its state directory' 10 "the warning is not in the event pane"
# Now less than a checkpoint: the next one fails.
avail=$(df -k --output=avail "$HUNTER_STATE_DIR" | tail -n 1)
dd if=/dev/zero of="$HUNTER_STATE_DIR/fill2" bs=1k count=$(( avail - 60 )) 2>/dev/null
wait_until 60 "a checkpoint that fails" at_least 1 checkpoint "No space left on device"
"$PY" - "$HUNTER_STATE_DIR/journal.jsonl" <<'PYEOF' || fail "see above"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
ev = [e for e in ev if e.get("t") == "event"]
warn = [e for e in ev if e["kind"] == "warning" and "file system" in e["reason"]]
bad = [e for e in ev if e["kind"] == "checkpoint" and "No space left" in e["reason"]]
ok = [e for e in ev if e["kind"] == "checkpoint" and e["reason"].startswith("step ")]
print("warning: %s" % warn[0]["reason"])
print("failed: %s" % bad[0]["reason"])
assert len(warn) == 1 and warn[0]["node"] == "n1", warn
assert warn[0]["ts"] < bad[0]["ts"], "the warning came after the failure"
print("%d checkpoints written before it; %.1f s from the warning to the failure"
      % (len(ok), bad[0]["ts"] - warn[0]["ts"]))
PYEOF
# The job's saved series has its node's samples, for the report.
grep -q '^{"t":"node","node":"n1",' "$HUNTER_STATE_DIR/series/roomjob.jsonl" ||
	fail "no node samples in the job's saved series"
pass "the free space went red and one warning came before a checkpoint failed"
