#!/bin/sh
# Issue 27, item 1: config.json through a planted symlink.  A gpt job
# writes config.json beside its checkpoints; it used to go through the
# guessable DIR/.config.json.<pid>.tmp with json_dump_file, which follows
# links and truncates.  User nobody (setpriv) plants such links, pointing
# at a 0600 file of ours, for every pid up to 1000 in a shared sticky
# checkpoint.dir; the run is in a pid namespace of its own (unshare), so
# its worker's pid is among them.  The file must stay as it was, and
# config.json must be the job's, a regular file of ours.
# Skips (77) unless root, which it needs to switch users.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/faults/faults-lib.sh"
. "$SRCDIR/tests/integration/gpt-lib.sh"
needs_nobody
command -v unshare > /dev/null || { echo "skip: no unshare"; exit 77; }
unshare --pid --fork true 2> /dev/null || { echo "skip: no pid namespaces here"; exit 77; }
CK="$T/ck"
mkdir "$CK"
chmod 1777 "$CK"
echo precious > "$T/victim"
chmod 600 "$T/victim"
nobody "$PY" -c '
import os, sys
for pid in range(1, 1001):
    os.symlink(sys.argv[2], "%s/.config.json.%d.tmp" % (sys.argv[1], pid))' \
	"$CK" "$T/victim"
[ -L "$CK/.config.json.100.tmp" ] || fail "could not plant the links"
gpt_text "$T/text" 3000
gpt_job "$T/j.yaml" planted "$T/text" 1 ""
ckpt_dir_job "$T/j.yaml" "$CK"
rc=0
unshare --pid --fork sh -c '"$1" run --json "$2"' sh "$HUNTER" "$T/j.yaml" > "$T/out" 2>&1 || rc=$?
# The namespace's end killed its agents; their pid files hold its pids,
# which name other processes out here: not for stop_agents.
rm -f "$HUNTER_STATE_DIR"/nodes/*/agent.pid
[ $rc = 0 ] || { tail -n 3 "$T/out" | cut -c1-300; fail "hunter run exited $rc"; }
pids=$(grep -o '"pid":[0-9]*' "$T/out" | sort -u | tr '\n' ' ')
echo "the worker's pids in its namespace: $pids"
[ "$(cat "$T/victim")" = precious ] ||
	fail "the planted link was followed: the victim now holds $(head -c 80 "$T/victim")"
[ -f "$CK/config.json" ] && [ ! -L "$CK/config.json" ] || fail "no config.json of its own"
[ "$(stat -c %u "$CK/config.json")" = 0 ] || fail "config.json is not ours"
"$PY" -c 'import json, sys; c = json.load(open(sys.argv[1])); assert c["n_layer"] == 2 and c["n_embd"] == 32, c' \
	"$CK/config.json" || fail "config.json is not the job's"
pass "1000 planted links at the old temporary names, none followed; config.json is the job's"
