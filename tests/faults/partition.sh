#!/bin/sh
# Issue 27, item 4: a partition longer than the heartbeat timeout does
# not fail the job.  Two network namespaces over a veth: this one, with
# the backend and the local node na (its Gloo bound to the veth's
# address), and one of its own with an sshd at the far end, through
# which node nb runs its agent.  A 2-rank job (rank 0 on na, rank 1 on
# nb; heartbeat timeout 3 s, one re-formation allowed) is cut in two for
# PARTITION_S (15 s): every packet on the veth is dropped, then let
# through again.  Twice, with the spare nc on either side:
#
#   far:  nc behind the cut too.  No node can take rank 1, so the job
#         waits (reforming) until nb answers again, then goes on there;
#   near: nc on this side.  Rank 1 moves to it and the job trains on
#         through the partition; rank 0, whose exchange failed with rank
#         1's silence, stays on na.
#
# Each time the job ends finished (exit 0) at the final step and with
# the weights of an undisturbed run, after one re-formation (before the
# fix: a re-formation for each try into the partition, rank 0 moved to
# the spare as if it were the cause, then the job failed), and no rank
# the agents started for it still runs.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/faults/faults-lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root for the network namespace"; exit 77; }
command -v tc > /dev/null && command -v ip > /dev/null ||
	{ echo "SKIP: iproute2 (ip, tc) is not installed"; exit 77; }
PARTITION_S=${PARTITION_S:-15}
# The undisturbed run's ranks are local and the partitioned run's rank 1
# is behind sshd, whose agents do not inherit this environment: with an
# OPENBLAS_CORETYPE exported here (an operator's, or CI's), the two runs'
# ranks would run different kernels, whose sums differ in the last bits,
# and no final weights would match.  Every agent chooses its kernel
# itself (cpuid, the same on both ends of the veth).
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
ns="hunter-pt-$$"
va="pt$$a"
vb="pt$$b"
net="10.81.$(( $$ % 250 ))"
netns_veth "$ns" "$va" "$vb" "$net"
# cut / heal: every packet either end sends over the veth is dropped
# (the blackhole qdisc: this kernel has neither netem nor a classifier
# for a drop action), or not.
net_cut() {
	tc qdisc add dev "$va" root blackhole
	ip netns exec "$ns" tc qdisc add dev "$vb" root blackhole
}
net_heal() {
	tc qdisc del dev "$va" root
	ip netns exec "$ns" tc qdisc del dev "$vb" root
}
net_cut 2>/dev/null && net_heal ||
	{ echo "SKIP: the kernel has no blackhole qdisc"; exit 77; }

SSHD_ADDR="$net.2" SSHD_NETNS="$ns"
. "$SRCDIR/tests/integration/sshd.sh"
sshd_start
known_hosts_trust

mkdata "$T/data" 2000 100
small_job "$T/j.yaml" split "$T/data" 'policy: {failover: {heartbeat_timeout: 3s, max_restarts: 1}}'
sed -i 's/ranks: 1}/ranks: 2, placement: spread}/; s/epochs: 2/epochs: 6/; s/global: 32, micro: 32/global: 64, micro: 32/; s/every_steps: 0/every_steps: 10/' "$T/j.yaml"
grep -q 'every_steps: 10' "$T/j.yaml" || fail "could not edit the job"

# The undisturbed run, on the embedded cluster (2 ranks: the same sums).
plain_run "$T/j.yaml" "$T/plain"
want=$(final_crc "$T/plain" 2) || fail "undisturbed run: $want"
steps=$(jget "$T/plain" summary steps)
echo "undisturbed: $steps steps, weights $want"

# partitioned NAME SPARE-NODE-YAML: the job on na, nb and that spare,
# cut in two once rank 1 reached step 10; checked at the end.  Each run
# has a state directory and remote agents of its own.
partitioned() {
	name=$1 out="$T/$1.out"
	HUNTER_STATE_DIR="$T/$name-state"
	cat > "$T/$name.yaml" <<EOF
cluster: split
ssh: {config: $T/ssh/ssh_config, identity: $T/ssh/id_ed25519, known_hosts: $T/ssh/known_hosts}
nodes:
  - {name: na, host: local, addr: $net.1, rack: r1, devices: {cpu: 1}}
  - {name: nb, host: $net.2, port: $SSHD_PORT, user: $(id -un), rack: r2, devices: {cpu: 1}, state_dir: $T/$name-nb}
  - $2
EOF
	"$HUNTER" run --json --inject slow-data=40 --cluster "$T/$name.yaml" \
		"$T/j.yaml" > "$out" 2> "$T/$name.err" &
	run=$!
	hooks=$cleanup_hooks
	cleanup_hooks="kill -9 $run 2>/dev/null || true; stop_agents; $hooks"
	far_busy() { grep '"t":"metrics"' "$out" | grep '"node":"nb"' | grep -q '"step":[1-9][0-9]'; }
	wait_until 60 "$name: rank 1 on nb reaching step 10" far_busy
	net_cut
	echo "$name: cut at $(date +%T) for $PARTITION_S s"
	sleep "$PARTITION_S"
	net_heal
	echo "$name: healed at $(date +%T)"
	run_ended() { ! kill -0 $run 2>/dev/null; }
	poll_until 120 run_ended || { kill -9 $run; echo "$name: hunter run did not end"; }
	rc=0
	wait $run || rc=$?
	grep -E '"kind":"(failover|failed|restarted|down|up)"' "$out" | cut -c1-240 || true
	[ $rc = 0 ] || { tail -n 5 "$T/$name.err"; fail "$name: hunter run exited $rc"; }
	[ "$(jget "$out" summary state)" = finished ] || fail "$name: the job did not finish"
	[ "$(jget "$out" summary steps)" = "$steps" ] ||
		fail "$name: the job ended at step $(jget "$out" summary steps), not $steps"
	got=$(final_crc "$out" 2) || fail "$name: final weights: $got"
	[ "$got" = "$want" ] || fail "$name: final weights $got, the undisturbed run's $want"
	reforms=$(grep -c '"kind":"phase".*"to":"reforming"' "$out" || true)
	[ "$reforms" = 1 ] || fail "$name: $reforms re-formations, not one"
	# Every rank an agent started for the job is gone.
	started() { cat "$HUNTER_STATE_DIR"/nodes/*/agent.log "$T/$name"-n?/agent.log 2>/dev/null |
		sed -n 's/.*started split rank [0-9]* as pid \([0-9]*\).*/\1/p'; }
	alive() {
		for p in $(started); do
			tr "\\0" " " 2>/dev/null < /proc/"$p"/cmdline | grep -q 'worker --fd' && echo "$p"
		done
		true
	}
	none_alive() { [ -z "$(alive)" ]; }
	poll_until 10 none_alive || fail "$name: ranks of the job still run: $(alive)"
	echo "$name: finished, 1 re-formation; the agents started $(started | wc -l) ranks, none left"
	stop_agents
	stop_remote_agents
	cleanup_hooks=$hooks
}

partitioned far "{name: nc, host: $net.2, port: $SSHD_PORT, user: $(id -un), rack: r2, devices: {cpu: 1}, state_dir: $T/far-nc, spare: true}"
grep -q '"kind":"down".*waits for nb' "$T/far.out" || fail "far: the job did not wait for nb"
partitioned near "{name: nc, host: local, addr: $net.1, rack: r1, devices: {cpu: 1}, spare: true}"
grep -q '"kind":"failover".*rank 1 moves to nc' "$T/near.out" || fail "near: rank 1 did not move to nc"
pass "two $PARTITION_S s partitions: the job waited, then moved to the spare; both finished at step $steps with weights $want"
