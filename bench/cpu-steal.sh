# bench/cpu-steal.sh, sourced by the benches that run ranks side by side:
# the share of this machine's CPU time its hypervisor took (steal, the
# 8th field of /proc/stat's cpu line) between two marks.  On a VM a rank
# that blocks in a collective halts its vCPU, and waking it can wait on
# the host: the load average does not show that, the steal does.
cpu_mark() {	# prints: TOTAL STEAL (jiffies, all CPUs)
	awk '/^cpu /{ print $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9, $9 }' /proc/stat
}
cpu_steal_since() {	# TOTAL STEAL from cpu_mark: prints the steal in %
	cpu_mark | awk -v t="$1" -v s="$2" \
		'{ d = $1 - t; printf "%.0f\n", (d > 0 ? 100 * ($2 - s) / d : 0) }'
}
