#!/bin/bash
# tests/slurm/slurm-up.sh: a real Slurm cluster of SX_NODES nodes on this
# one machine, for the tests (tests/slurm/slurm-lib.sh drives it).
#
# munged and slurmctld run in the root network namespace; each node is
# a network namespace and a UTS namespace of its own (its own address,
# its own host name), with its own slurmd.  The nodes' veths and the
# controller's meet on a bridge inside a "switch" namespace, so that no
# firewall of the host (a FORWARD policy of DROP) sits between them.
# The file system is shared, as on a cluster.  Nothing is written to
# /etc; the daemons' pids go to $SX_DIR/pids, one "name pid" a line, and
# slurm-down.sh stops them by those pids.
#
#   SX_DIR   state, logs and slurm.conf (required)
#   SX_NET   the /24 prefix, e.g. 10.199.7: .1 the controller, .11.. nodes
#   SX_PFX   the prefix of the namespaces' and links' names
#   SX_PORT  SlurmctldPort (it binds in the root namespace)
#   SX_NODES how many nodes (n1 ... nN), SX_CPUS the CPUs of each
#   SX_TOPOLOGY  topology.conf lines ("SwitchName=s1 Nodes=n[1-2]"; one
#            per line), for topology/tree; none when empty
#   SX_GPUS  a Gres=gpu:N count declared for every node (0: none)
# Prints "cluster up in S s" and exits 0, or tears down what it made and
# exits 1 with the daemons' last words.
set -eu

D=${SX_DIR:?SX_DIR must name a directory}
NET=${SX_NET:-10.199.0}
P=${SX_PFX:-hs}
N=${SX_NODES:-2}
CPUS=${SX_CPUS:-2}
PORT=${SX_PORT:-6817}
TOPO=${SX_TOPOLOGY:-}
GPUS=${SX_GPUS:-0}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/poll-lib.sh"
t0=$(date +%s.%N)

for b in munged mungekey munge unmunge slurmctld slurmd sinfo ip unshare; do
	command -v "$b" >/dev/null || { echo "slurm-up: $b is missing" >&2; exit 1; }
done
if [ -e "$D/pids" ] || [ -e "/run/netns/${P}sw" ]; then
	echo "slurm-up: $D/pids or netns ${P}sw exists: is a cluster up?" >&2
	exit 1
fi
if ip -4 route show | grep -q "^$NET\.0/24"; then
	echo "slurm-up: the route $NET.0/24 exists already" >&2
	exit 1
fi

mkdir -p "$D"
: > "$D/pids"
down() {
	echo "slurm-up: failed; tearing down" >&2
	SX_DIR=$D SX_PFX=$P SX_NODES=$N SX_KEEP=1 "$here/slurm-down.sh" || true
}
trap down ERR

# The network: the bridge in its own namespace, one veth pair per node.
ip netns add "${P}sw"
ip -n "${P}sw" link add br0 type bridge
ip -n "${P}sw" link set br0 up
ip link add "${P}v0" type veth peer name p0 netns "${P}sw"
ip addr add "$NET.1/24" dev "${P}v0"
ip link set "${P}v0" up
ip -n "${P}sw" link set p0 master br0 up
for i in $(seq 1 "$N"); do
	ip netns add "${P}n$i"
	ip -n "${P}sw" link add "p$i" type veth peer name eth0 netns "${P}n$i"
	ip -n "${P}sw" link set "p$i" master br0 up
	ip -n "${P}n$i" addr add "$NET.$((10 + i))/24" dev eth0
	ip -n "${P}n$i" link set eth0 up
	ip -n "${P}n$i" link set lo up
done

# munge: one daemon; its socket, a path, is reachable from every netns.
# munged wants its socket directory a+x and the key 0600.
mkdir -p "$D/munge"
chmod 755 "$D" "$D/munge"
mungekey -c -k "$D/munge/munge.key"
chmod 600 "$D/munge/munge.key"
munged -F --key-file="$D/munge/munge.key" --socket="$D/munge/munge.socket" \
	--pid-file="$D/munge/munged.pid" --log-file="$D/munge/munged.log" \
	--seed-file="$D/munge/munged.seed" > "$D/munge/stderr" 2>&1 &
echo "munged $!" >> "$D/pids"
poll_ms 5000 test -S "$D/munge/munge.socket" ||
	{ echo "slurm-up: no munge socket after 5 s" >&2; cat "$D/munge/stderr" >&2; false; }
munge -S "$D/munge/munge.socket" -n | unmunge -S "$D/munge/munge.socket" >/dev/null

mkdir -p "$D/ctld/state"
for i in $(seq 1 "$N"); do mkdir -p "$D/n$i/spool"; done
{
	cat <<EOF
ClusterName=$P
SlurmctldHost=ctl($NET.1)
SlurmctldPort=$PORT
SlurmdPort=6818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$D/munge/munge.socket
StateSaveLocation=$D/ctld/state
SlurmctldPidFile=$D/ctld/slurmctld.pid
SlurmctldLogFile=$D/ctld/slurmctld.log
SlurmdSpoolDir=$D/%n/spool
SlurmdPidFile=$D/%n/slurmd.pid
SlurmdLogFile=$D/%n/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MailProg=/bin/true
SlurmdParameters=config_overrides
KillWait=5
MessageTimeout=3
MinJobAge=600
# Batch jobs start at once, not up to 3 s later (batch_sched_delay).
SchedulerParameters=batch_sched_delay=0
EOF
	[ "$GPUS" -gt 0 ] && echo "GresTypes=gpu"
	[ -n "$TOPO" ] && echo "TopologyPlugin=topology/tree"
	for i in $(seq 1 "$N"); do
		g=""
		[ "$GPUS" -gt 0 ] && g=" Gres=gpu:$GPUS"
		echo "NodeName=n$i NodeAddr=$NET.$((10 + i)) NodeHostName=n$i CPUs=$CPUS RealMemory=1000$g State=UNKNOWN"
	done
	echo "PartitionName=debug Nodes=n[1-$N] Default=YES MaxTime=INFINITE State=UP"
} > "$D/slurm.conf"
[ -n "$TOPO" ] && printf '%s\n' "$TOPO" > "$D/topology.conf"
if [ "$GPUS" -gt 0 ]; then
	# Counted, not bound to devices: enough for Slurm to say Gres=gpu:N.
	echo "NodeName=n[1-$N] Name=gpu File=/dev/tty[1-$GPUS]" > "$D/gres.conf"
fi
# Slurm 22.05's slurmd always starts a cgroup plugin, and autodetection
# fails where no cgroup file system is mounted (inside `ip netns exec`);
# cgroup/v1 skips it, and linuxproc with task/none uses no cgroup.
echo "CgroupPlugin=cgroup/v1" > "$D/cgroup.conf"
export SLURM_CONF="$D/slurm.conf"
echo "export SLURM_CONF=$D/slurm.conf" > "$D/env"

# slurmctld must find its own name in SlurmctldHost: a UTS ns named ctl.
# ip netns exec, unshare and sh's exec all exec, so $! is the daemon.
unshare --uts sh -c 'hostname ctl && exec slurmctld -D -f "$SLURM_CONF"' \
	> "$D/ctld/stderr" 2>&1 &
echo "slurmctld $!" >> "$D/pids"
for i in $(seq 1 "$N"); do
	ip netns exec "${P}n$i" unshare --uts sh -c \
		"hostname n$i && exec slurmd -D -N n$i -f \"\$SLURM_CONF\"" \
		> "$D/n$i/stderr" 2>&1 &
	echo "slurmd-n$i $!" >> "$D/pids"
done

# Every node idle within 30 s, or the names of the daemons that died.
ok=
died=
idle_or_died() {
	[ "$(sinfo -h -o '%D %T' -t idle 2>/dev/null)" = "$N idle" ] && { ok=1; return 0; }
	while read -r name pid; do
		kill -0 "$pid" 2>/dev/null || died="$died $name"
	done < "$D/pids"
	[ -n "$died" ]
}
poll_ms 30000 idle_or_died || true
if [ -z "$ok" ]; then
	echo "slurm-up: the nodes are not idle after 30 s (died:${died:- none})" >&2
	sinfo -N >&2 || true
	tail -n 20 "$D"/*/stderr >&2 || true
	false
fi
trap - ERR
echo "cluster up in $(awk "BEGIN { printf \"%.2f\", $(date +%s.%N) - $t0 }") s"
