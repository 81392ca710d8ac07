# tests/slurm/slurm-lib.sh: a real Slurm for a test, sourced after
# tests/integration/lib.sh.  slurm_up starts one (slurm-up.sh) under the
# test's own directory, on a subnet, a slurmctld port and namespace names
# of its own, so that tests can run at once; the EXIT trap of lib.sh
# stops every daemon by pid (slurm-down.sh).  A machine that cannot make
# network namespaces skips the test (77); anything else that goes wrong
# fails it.  Needs root, iproute2, util-linux and the Debian packages
# slurmctld, slurmd, slurm-client and munge (bootstrap installs them).

SLURM_TESTS="$SRCDIR/tests/slurm"

# slurm_skip_unless_namespaces: exit 77 where no netns can be made.
slurm_skip_unless_namespaces() {
	if [ "$(id -u)" != 0 ]; then
		echo "SKIP: the Slurm tests need root, to make network namespaces"
		exit 77
	fi
	if ! ip netns add "hsprobe$$" 2>"$T/netns.err"; then
		echo "SKIP: this machine cannot create network namespaces" \
		    "($(cat "$T/netns.err")); the Slurm tests need them"
		exit 77
	fi
	ip netns del "hsprobe$$"
	if ! unshare --uts true 2>"$T/netns.err"; then
		echo "SKIP: this machine cannot create UTS namespaces ($(cat "$T/netns.err"))"
		exit 77
	fi
}

# The claim on a subnet index, so that two tests never take the same one.
slurm_claim() {
	mkdir "/tmp/hunter-slurm-net.$1" 2>/dev/null || return 1
	if ip -4 route show | grep -q "^10\.199\.$1\.0/24" ||
	    [ -e "/run/netns/hs$1sw" ] ||
	    ss -ltn 2>/dev/null | grep -q ":$((7100 + $1)) "; then
		rmdir "/tmp/hunter-slurm-net.$1"
		return 1
	fi
	return 0
}

slurm_down() {
	[ -n "${SX_DIR:-}" ] || return 0
	"$SLURM_TESTS/slurm-down.sh"
	# The agents died with their steps: their pid files are stale.
	rm -f "$HUNTER_STATE_DIR"/nodes/*/agent.pid
	rmdir "/tmp/hunter-slurm-net.$SX_IDX" 2>/dev/null || true
}

# slurm_up ID NODES: a cluster of NODES nodes (n1 ...), SLURM_CONF set.
# ID (1-24) is the test's own, so its subnet is 10.199.ID0 to ID9.
# SX_TOPOLOGY, SX_GPUS and SX_CPUS pass through to slurm-up.sh.
slurm_up() {
	slurm_skip_unless_namespaces
	for c in slurmctld slurmd srun sbatch salloc scontrol munged; do
		command -v "$c" >/dev/null || fail "$c is missing: install slurmctld, slurmd, slurm-client and munge (./bootstrap does)"
	done
	SX_IDX=
	for k in 0 1 2 3 4 5 6 7 8 9; do
		if slurm_claim $(($1 * 10 + k)); then
			SX_IDX=$(($1 * 10 + k))
			break
		fi
	done
	[ -n "$SX_IDX" ] || fail "no free subnet among 10.199.$(($1 * 10)).0 to 10.199.$(($1 * 10 + 9)).0"
	SX_DIR="$T/slurm"
	SX_NET="10.199.$SX_IDX"
	SX_PFX="hs$SX_IDX"
	SX_PORT=$((7100 + SX_IDX))
	SX_NODES=$2
	export SX_DIR SX_NET SX_PFX SX_PORT SX_NODES SX_IDX
	cleanup_hooks="slurm_down; $cleanup_hooks"
	# munged wants every directory above its socket searchable by all.
	chmod a+x "$T"
	"$SLURM_TESTS/slurm-up.sh" > "$T/slurm-up.out" 2>&1 ||
		{ cat "$T/slurm-up.out"; fail "the Slurm cluster did not come up"; }
	cat "$T/slurm-up.out"
	SLURM_CONF="$SX_DIR/slurm.conf"
	export SLURM_CONF
	# Nothing of an allocation around the test may leak into it.
	unset SLURM_JOB_ID SLURM_JOB_NODELIST SLURM_JOB_CPUS_PER_NODE \
	    SLURM_RESTART_COUNT SLURM_STEP_ID 2>/dev/null || true
}

# slurm_addr N: node nN's address.
slurm_addr() { echo "$SX_NET.$((10 + $1))"; }

# slurm_sample_tcp N FILE: node nN's TCP connections, with their
# processes, into FILE every 0.3 s until killed (run it in the background).
slurm_sample_tcp() {
	while :; do
		ip netns exec "${SX_PFX}n$1" ss -tnp 2>/dev/null
		sleep 0.3
	done > "$2"
}

# job_state J: the State of Slurm job J (RUNNING, COMPLETED ...).
job_state() {
	scontrol -o show job "$1" 2>/dev/null | tr ' ' '\n' |
	    sed -n 's/^JobState=//p'
}

# job_is J STATE: whether Slurm job J is in STATE.
job_is() { [ "$(job_state "$1")" = "$2" ]; }

# agent_step J NODE: the step id of the hunter agent on NODE in job J.
agent_step() {
	squeue -h -s -j "$1" -o '%i %j %N' 2>/dev/null |
	    awk -v n="$2" '$2 == "hunter-agent" && $3 == n { print $1 }'
}

# slurm_job FILE NAME DATADIR: a 2-rank top-k mlp, one rank a node
# (spread), 128 steps on mkdata's 2048 samples.
slurm_job() {
	cat > "$1" <<YEOF
name: $2
resources: {ranks: 2, placement: spread}
model: {type: mlp, hidden: [32]}
data: {path: $3, prefetch: 4}
train:
  epochs: 2
  seed: 7
  optimizer: {type: sgd, momentum: 0.9, weight_decay: 5e-4}
  lr: {base: 0.05, schedule: cosine, warmup_steps: 5}
  batch: {global: 32, micro: 16}
compression: {method: topk, density: 0.05, error_feedback: true, momentum_correction: true, warmup_epochs: 1}
checkpoint: {every_steps: 0, keep: 3}
YEOF
}

# max_step FILE: the highest step a rank reported in FILE's JSON lines.
max_step() {
	grep -o '"scope":"rank","job":"[^"]*","rank":[0-9]*,"step":[0-9]*' "$1" 2>/dev/null |
	    sed 's/.*"step"://' | sort -n | tail -n 1
}

# past_step FILE N: whether a rank in FILE has reported step N or later.
past_step() { [ "$(max_step "$1")" -ge "$2" ] 2>/dev/null; }
