#!/bin/sh
# The collective mesh (Gloo's TCP) has no authentication: hunter check
# warns of a node whose addr, where the ranks bind it, is a public
# address, and fails a node whose addr is every interface (the ranks would
# refuse it; tests/unit/test-comm.c's t_no_wildcard_bind checks that).
# Private, link-local and loopback addresses pass without a word.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/faults/faults-lib.sh"
cluster() {	# cluster FILE ADDR...: one local node per address
	echo "cluster: addrs" > "$1"
	echo "nodes:" >> "$1"
	f=$1 k=0
	shift
	for a in "$@"; do
		echo "  - {name: n$k, host: local, addr: '$a', devices: {cpu: 1}}" >> "$f"
		k=$((k + 1))
	done
}
cluster "$T/ok.yaml" 203.0.113.7 10.1.2.3 127.0.0.1 fd00::5 169.254.9.9
rc=0
"$HUNTER" check --cluster "$T/ok.yaml" > "$T/ok" 2>&1 || rc=$?
cat "$T/ok"
[ $rc = 0 ] || fail "hunter check exited $rc on nodes that are all up"
grep -q "^warning: node n0: addr 203.0.113.7 is a public address; the collective mesh (Gloo TCP) has no authentication or encryption: keep the training fabric on a private network or VLAN" "$T/ok" ||
	fail "no warning for the public address"
# Only the addresses' warnings count: five nodes on one machine that
# another test loads may name one of them as a sgemm straggler.
[ "$(grep -c '^warning: node [^ ]*: addr' "$T/ok")" = 1 ] ||
	fail "warnings for private addresses"
stop_agents
cluster "$T/wild.yaml" 0.0.0.0 10.1.2.3
rc=0
"$HUNTER" check --cluster "$T/wild.yaml" > "$T/wild" 2>&1 || rc=$?
cat "$T/wild"
[ $rc = 1 ] || fail "hunter check exited $rc with a node on every interface"
grep -q "^node n0: addr 0.0.0.0 is every interface" "$T/wild" ||
	fail "the wildcard address is not named"
pass "a public addr is warned of, a wildcard one refused"
