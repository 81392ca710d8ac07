#!/bin/sh
# SSH nodes, check 4: one node's agent reports another hunter version
# (HUNTER_FAKE_VERSION, set on that node's daemon, which the test starts
# itself before `hunter agent --stdio` attaches to it).  `hunter check`
# exits non-zero and names the node and both versions; with every agent
# on the same version it passes.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/integration/sshd.sh"
sshd_start
known_hosts_trust
ssh_cluster "$T/cluster.yaml" n0 n1
HUNTER_FAKE_VERSION=0.1.0-fake "$HUNTER" agent --node n1 --dir "$T/n1" --idle-exit 120
n1_up() { [ -S "$T/n1/agent.sock" ] && [ -s "$T/n1/agent.pid" ]; }
wait_until 5 "could not start n1's agent" n1_up
rc=0
"$HUNTER" check --cluster "$T/cluster.yaml" > "$T/check" 2>&1 || rc=$?
cat "$T/check"
[ $rc -ne 0 ] || fail "hunter check passed with a node on another version"
grep -q "^version mismatch: n1 runs hunter 0.1.0-fake (build .*), n0 and this console run 0.1.0 (build .*)" "$T/check" ||
	fail "the mismatch message does not name n1, n0 and the versions"
grep -E -q "^n1 +.* 0\.1\.0-fake " "$T/check" || fail "the table does not show n1's version"

# The same cluster with n1's agent on the real version passes.
kill "$(cat "$T/n1/agent.pid")"
wait_until 5 "n1's agent did not stop" test ! -f "$T/n1/agent.pid"
rc=0
"$HUNTER" check --cluster "$T/cluster.yaml" > "$T/check2" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/check2"; fail "hunter check failed with matching versions"; }
pass "hunter check names the node running another version"
