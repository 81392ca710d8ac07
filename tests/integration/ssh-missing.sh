#!/bin/sh
# SSH nodes on which hunter is not installed (issue 21): the login PATH
# has no hunter.  `hunter run` says so in words that name the fix
# (`hunter check --push`), and every reconnect keeps that reason (they
# said "hello: Broken pipe" after the first); the job waits in the queue
# with the reason and is never placed on them (it was placed, both ranks
# failed with "cannot reach the agent", and hunter run waited for ever,
# SIGTERM only printing "stopping ... at the next step"); SIGTERM ends it
# at once with exit status 130 and the reason in the summary.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/integration/sshd.sh"
sshd_start /usr/bin:/bin
known_hosts_trust
ssh_cluster "$T/cluster.yaml" n0 n1
[ ! -x /usr/bin/hunter ] && [ ! -x /bin/hunter ] || fail "hunter is installed in /usr/bin: cannot test a node without it"
mkdata "$T/data" 200 64
small_job "$T/j.yaml" missing "$T/data"
sed -i 's/ranks: 1}/ranks: 2, placement: spread}/; s/micro: 32/micro: 16/' "$T/j.yaml"
"$HUNTER" run --json --cluster "$T/cluster.yaml" "$T/j.yaml" > "$T/out" 2> "$T/err" &
run=$!
cleanup_hooks="${cleanup_hooks:+$cleanup_hooks; }kill -9 $run 2>/dev/null || true"
# The first connect, then reconnects after 1 and 2 s of backoff.
_ready2() { [ "$(grep -c '"node":"n0".*hunter check --push' "$T/out")" -ge 3 ]; }
poll_until 15 _ready2 || true
grep '"node":"n0"' "$T/out" | cut -c1-400
[ "$(grep -c '"node":"n0".*hunter check --push' "$T/out")" -ge 3 ] ||
	fail "n0's reconnects do not keep the reason naming hunter check --push"
grep -q '"node":"n0".*hunter is not installed on node n0.*exit status 127' "$T/out" ||
	fail "the reason does not say hunter is missing on n0"
grep -q 'Broken pipe' "$T/out" && fail "a reconnect said Broken pipe"
grep -q '"kind":"queued".*unreachable: node n0 (hunter is not installed' "$T/out" ||
	{ grep queued "$T/out"; fail "the job does not wait naming the missing hunter"; }
grep -q '"kind":"placed"' "$T/out" && fail "the job was placed on nodes without hunter"
kill -TERM $run
_ready1() { ! { kill -0 $run 2>/dev/null; }; }
poll_until 5 _ready1 || true
kill -0 $run 2>/dev/null && fail "hunter run did not end within 5 s of SIGTERM"
rc=0
wait $run || rc=$?
[ $rc -eq 130 ] || { tail -n 3 "$T/out" "$T/err"; fail "exit status $rc, not 130"; }
jget "$T/out" summary reason | grep -q "hunter check --push" ||
	{ tail -n 2 "$T/out"; fail "the summary lacks the reason"; }
pass "nodes without hunter: the reason names hunter check --push on every reconnect, the job waits, SIGTERM ends it"
