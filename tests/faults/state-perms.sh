#!/bin/sh
# Security: the files of the state directory, of a node's state_dir and
# of a job's own checkpoint.dir are private, whatever the umask and even
# when the directories already existed with looser modes (socket-perms.sh
# covers the sockets).  Run under umask 000 with the state dir and a
# node's state_dir created 0755 beforehand: afterwards every directory
# hunter owns is 0700, no file is readable or writable by group or
# others, and user nobody can neither read the journal, a checkpoint or
# a log nor list the directories.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/faults/faults-lib.sh"
[ "$(id -u)" = 0 ] || { echo "skip: needs root to switch users"; exit 77; }
command -v setpriv > /dev/null || { echo "skip: no setpriv"; exit 77; }
mkdata "$T/data" 512 32
small_job "$T/j.yaml" perms2 "$T/data"
sed -i 's/ranks: 1/ranks: 2/; s/micro: 32/micro: 16/; s/every_steps: 0/every_steps: 8/' "$T/j.yaml"
ckpt_dir_job "$T/j.yaml" "$T/ck/perms2"
mkdir -m 755 "$HUNTER_STATE_DIR" "$T/n0"
cat > "$T/cluster.yaml" <<YEOF
cluster: perms
nodes:
  - {name: n0, host: local, rack: r1, devices: {cpu: 2}, state_dir: $T/n0}
  - {name: n1, host: local, rack: r1, devices: {cpu: 2}}
  - {name: n2, host: local, rack: r2, devices: {cpu: 2}, spare: true}
YEOF
stop_n0() { [ -f "$T/n0/agent.pid" ] && kill "$(cat "$T/n0/agent.pid")" 2>/dev/null || true; }
cleanup_hooks="stop_n0"
(umask 000; "$HUNTER" run --json --cluster "$T/cluster.yaml" "$T/j.yaml") > "$T/out" 2>&1 ||
	{ rc=$?; tail -n 5 "$T/out"; fail "hunter run exited $rc"; }
[ "$(jget "$T/out" summary state)" = finished ] || fail "not finished"
chmod 755 "$T" "$T/ck"	# let nobody reach them, to test what is inside
bad=""
for d in "$HUNTER_STATE_DIR" "$T/n0" "$HUNTER_STATE_DIR"/nodes/* "$T/ck/perms2"; do
	m=$(stat -c %a "$d")
	[ "$m" = 700 ] || bad="$bad $d:$m"
done
# regular files with any group or other bit
loose=$(find "$HUNTER_STATE_DIR" "$T/n0" "$T/ck/perms2" -type f -perm /077 -printf '%m %p\n')
[ -z "$loose" ] || bad="$bad $(echo "$loose" | tr '\n' ' ')"
for f in "$HUNTER_STATE_DIR/journal.jsonl" "$(ls "$T"/ck/perms2/step-*.safetensors | head -n 1)" \
    "$T/n0/agent.log" "$T/n0/agent.pid"; do
	[ -f "$f" ] || fail "$f missing"
	if setpriv --reuid=65534 --regid=65534 --clear-groups cat "$f" > /dev/null 2>&1; then
		bad="$bad nobody-read:$f"
	fi
done
for d in "$HUNTER_STATE_DIR" "$T/n0" "$T/ck/perms2"; do
	if setpriv --reuid=65534 --regid=65534 --clear-groups ls "$d" > /dev/null 2>&1; then
		bad="$bad nobody-list:$d"
	fi
done
[ -z "$bad" ] || fail "not private:$bad"
pass "state, node and checkpoint directories 0700, their files private under umask 000"
