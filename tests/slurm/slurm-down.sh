#!/bin/bash
# tests/slurm/slurm-down.sh: stop the cluster of slurm-up.sh (same SX_DIR,
# SX_PFX, SX_NODES), by pid: slurmctld (and its slurmscriptd) and munged
# from $SX_DIR/pids, SIGTERM then SIGKILL after 0.5 s (the state is
# thrown away, and slurmctld takes 2-3 s over SIGTERM); then every process
# left in each node's namespace (slurmd, slurmstepd, the steps' tasks),
# SIGKILL until none is left but zombies; then the namespaces and the link, and
# $SX_DIR unless SX_KEEP=1.  It never fails: it is a cleanup.
set -u
D=${SX_DIR:?SX_DIR must name a directory}
P=${SX_PFX:-hs}
N=${SX_NODES:-2}
. "$(cd "$(dirname "$0")" && pwd)/poll-lib.sh"

# Gone or a zombie: PID 1 may reap orphans late, and kill -0 works on
# zombies.
running() {
	[ -r "/proc/$1/stat" ] && ! awk '{ exit ($3 == "Z") ? 0 : 1 }' "/proc/$1/stat" 2>/dev/null
}
# "/proc/PID/cmdline names it": a pid that was reused is not ours.
ours() {
	[ -r "/proc/$1/cmdline" ] && tr '\0' ' ' < "/proc/$1/cmdline" | grep -q "$2"
}
pid_of() {
	[ -f "$D/pids" ] && awk -v n="$1" '$1 == n { print $2 }' "$D/pids"
}

daemons=
p=$(pid_of slurmctld)
if [ -n "$p" ] && ours "$p" slurmctld; then
	daemons=$p
	for k in $(pgrep -P "$p" 2>/dev/null); do
		ours "$k" slurmscriptd && daemons="$daemons $k"
	done
fi
p=$(pid_of munged)
[ -n "$p" ] && ours "$p" munged && daemons="$daemons $p"
if [ -n "$daemons" ]; then
	kill -TERM $daemons 2>/dev/null
	none_alive() {
		alive=
		for p in $daemons; do running "$p" && alive="$alive $p"; done
		[ -z "$alive" ]
	}
	poll_ms 500 none_alive || kill -KILL $alive 2>/dev/null
fi
# Whether netns $1 holds nothing but zombies; SIGKILL to what it holds.
ns_empty() {
	pids=
	for p in $(ip netns pids "$1" 2>/dev/null); do
		running "$p" && pids="$pids $p"
	done
	[ -z "$pids" ] && return 0
	kill -KILL $pids 2>/dev/null
	return 1
}
for i in $(seq 1 "$N"); do
	[ -e "/run/netns/${P}n$i" ] || continue
	poll_ms 2500 ns_empty "${P}n$i" || true
done
for i in $(seq 1 "$N"); do ip netns del "${P}n$i" 2>/dev/null; done
ip netns del "${P}sw" 2>/dev/null
ip link del "${P}v0" 2>/dev/null
rm -f "$D/pids"
[ "${SX_KEEP:-0}" = 1 ] || rm -rf "$D"
exit 0
