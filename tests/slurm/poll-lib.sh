# tests/slurm/poll-lib.sh: the one wait of slurm-up.sh and slurm-down.sh,
# which run on their own, without tests/integration/lib.sh.  poll_ms MS
# CMD... runs CMD every 50 ms until it succeeds (0) or MS milliseconds
# have passed (1), as lib.sh's poll_until does; the caller acts on 1
# (slurm-up.sh fails, slurm-down.sh falls back to SIGKILL).
poll_ms() {
	_pm_end=$(( $(date +%s%N) / 1000000 + $1 ))
	shift
	until "$@"; do
		[ $(( $(date +%s%N) / 1000000 )) -lt "$_pm_end" ] || return 1
		sleep 0.05
	done
}
