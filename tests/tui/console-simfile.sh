#!/bin/sh
# A cluster file of simulate: N (hunter(1), CLUSTER FILES) opens the
# console on N simulated nodes in its racks, as --simulate does; hunter
# run and hunter check refuse it, saying that only the console runs one.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/tui/tui-lib.sh"
printf 'cluster: pretend\nsimulate: 12\nracks: 3\n' > "$T/sim.yaml"
printf 'name: x\nprogram: {argv: [sh, -c, "exit 0"]}\n' > "$T/x.yaml"
for c in "run $T/x.yaml" check; do
	set +e
	"$HUNTER" $c --cluster "$T/sim.yaml" > "$T/out" 2>&1
	rc=$?
	set -e
	[ "$rc" = 2 ] && grep -q "sim.yaml describes a simulated cluster (simulate: 12), which only the console runs" "$T/out" ||
		{ cat "$T/out"; fail "hunter $c on a simulated cluster: exit $rc"; }
done
tui_start "\"$HUNTER\" --cluster \"$T/sim.yaml\""
need 'sim-train +running' 20 "the console did not start on the simulated cluster"
need '^ hunter .*cluster pretend' 10 "the header does not name the cluster"
keys 2
need 'sim0011 r03' 10 "not 12 nodes in 3 racks"
exited && fail "the console died"
pass "simulate: 12 in a cluster file: the console runs it, run and check refuse it"
