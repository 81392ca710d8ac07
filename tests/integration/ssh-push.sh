#!/bin/sh
# SSH nodes, check 6: --push.  The node's login PATH has no hunter, so a
# plain `hunter check` fails naming the node and the missing command.
# `hunter check --push` copies this binary over SFTP to
# ~/.local/lib/hunter/BUILD-ID/hunter on the node (mode 0755, the same
# bytes), runs the agent from there, and passes; a later `hunter run`
# without --push finds the pushed copy and runs a 2-rank job on it.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/integration/sshd.sh"
sshd_start /usr/bin:/bin
known_hosts_trust
ssh_cluster "$T/cluster.yaml" n0 n1
[ ! -x /usr/bin/hunter ] && [ ! -x /bin/hunter ] || fail "hunter is installed in /usr/bin: cannot test a node without it"

rc=0
"$HUNTER" check --cluster "$T/cluster.yaml" > "$T/nopush" 2>&1 || rc=$?
cat "$T/nopush"
[ $rc -ne 0 ] || fail "hunter check passed on nodes without hunter"
grep -q "^node n0: .*exit status 127.*hunter.*not found" "$T/nopush" ||
	fail "the failure does not name n0 and the missing hunter"

rc=0
"$HUNTER" check --push --cluster "$T/cluster.yaml" > "$T/push" 2>&1 || rc=$?
cat "$T/push"
[ $rc -eq 0 ] || fail "hunter check --push exited $rc"
build=$("$HUNTER" --version | sed -n 's/^build: //p')
id=$(printf '%s' "$build" | tr -c 'A-Za-z0-9._-' '_' | sed 's/^[.-]/_/')
copy="$T/rhome/.local/lib/hunter/$id/hunter"
ls "$T/rhome/.local/lib/hunter/" > /dev/null 2>&1 || fail "nothing was pushed"
[ -f "$copy" ] || { ls -R "$T/rhome/.local/lib/hunter"; fail "no copy at $copy"; }
[ "$(stat -c %a "$copy")" = 755 ] || fail "the copy is mode $(stat -c %a "$copy"), not 755"
cmp -s "$copy" "$HUNTER" || fail "the copy differs from $HUNTER"
ls "$T/rhome/.local/lib/hunter/$id/" | grep -q tmp && fail "a temporary file was left behind"
[ "$(readlink "/proc/$(cat "$T/n0/agent.pid")/exe")" = "$copy" ] ||
	fail "n0's agent does not run the pushed copy"

mkdata "$T/data" 1200 200
small_job "$T/j.yaml" pushjob "$T/data"
sed -i 's/ranks: 1}/ranks: 2, placement: spread}/; s/micro: 32/micro: 16/' "$T/j.yaml"
rc=0
"$HUNTER" run --json --cluster "$T/cluster.yaml" "$T/j.yaml" > "$T/out" 2>&1 || rc=$?
[ $rc -eq 0 ] || { tail -n 20 "$T/out"; fail "hunter run exited $rc"; }
[ "$(jget "$T/out" summary state)" = finished ] ||
	{ tail -n 5 "$T/out"; fail "the job did not finish"; }
for n in n0 n1; do
	ls "$T/$n"/pushjob.rank*.log > /dev/null 2>&1 || fail "no rank ran on $n"
	[ "$(readlink "/proc/$(cat "$T/$n/agent.pid")/exe")" = "$copy" ] ||
		fail "$n's agent does not run the pushed copy"
done
pass "--push installed hunter on nodes without it and the job ran there"
