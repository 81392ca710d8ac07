# sshd.sh: a private sshd on 127.0.0.1 for the SSH tests.  Source it
# after lib.sh.  Nothing here reads or
# writes ~/.ssh: the client key, the host key, known_hosts and an empty
# ssh config all live in $T/ssh, and the cluster files name them.
#
#   sshd_start [PATH]  start sshd; the sessions get PATH (default: the
#                      build directory first, so `hunter` is found there).
#                      Sets SSHD_PORT and SSHD_PID; the exit trap stops it.
#                      It listens on $SSHD_ADDR (127.0.0.1), inside the
#                      network namespace $SSHD_NETNS where that is set.
#   ssh_cluster FILE NODE...  write a cluster file with one node per NAME
#                      (127.0.0.1:$SSHD_PORT, state_dir $T/NAME, racks
#                      alternating r1, r2, 2 CPU slots each).
#
# Sessions get HOME=$T/rhome and the SFTP server starts there, so `--push`
# copies and "~/" paths land in $T, not in the real home directory.  Remote agents keep their state in
# $T/NAME; the trap stops them by their pid files, as lib.sh does for
# local ones.
: "${BUILDDIR:?BUILDDIR must point at the build directory}"
SSHD=${SSHD:-/usr/sbin/sshd}
[ -x "$SSHD" ] || fail "no $SSHD (apt-get install openssh-server)"
unset SSH_AUTH_SOCK	# the tests log in with their own key only

remote_agent_pids="$T/*/agent.pid $T/rhome/*/agent.pid $T/rhome/.local/state/hunter/nodes/*/agent.pid"
stop_remote_agents() {
	for p in $remote_agent_pids; do
		[ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null || true
	done
	for i in $(seq 50); do
		ls $remote_agent_pids >/dev/null 2>&1 || break
		sleep 0.1
	done
}

sshd_start() {
	sshd_path=${1:-$BUILDDIR:/usr/local/bin:/usr/bin:/bin}
	mkdir -p /run/sshd "$T/ssh" "$T/rhome"	# sshd needs /run/sshd
	chmod 700 "$T/ssh"
	[ -f "$T/ssh/id_ed25519" ] ||
		ssh-keygen -q -t ed25519 -N '' -f "$T/ssh/id_ed25519"
	[ -f "$T/ssh/host_ed25519" ] ||
		ssh-keygen -q -t ed25519 -N '' -f "$T/ssh/host_ed25519"
	cp "$T/ssh/id_ed25519.pub" "$T/ssh/authorized_keys"
	: > "$T/ssh/ssh_config"
	: > "$T/ssh/known_hosts"
	for try in 1 2 3 4 5; do
		SSHD_PORT=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
		cat > "$T/ssh/sshd_config" <<EOF
Port $SSHD_PORT
ListenAddress ${SSHD_ADDR:-127.0.0.1}
HostKey $T/ssh/host_ed25519
AuthorizedKeysFile $T/ssh/authorized_keys
PidFile $T/ssh/sshd.pid
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
SetEnv PATH=$sshd_path HOME=$T/rhome
Subsystem sftp /usr/lib/openssh/sftp-server -d $T/rhome
EOF
		: > "$T/ssh/sshd.log"
		${SSHD_NETNS:+ip netns exec "$SSHD_NETNS"} "$SSHD" \
		    -f "$T/ssh/sshd_config" -D -e 2>"$T/ssh/sshd.log" &
		SSHD_PID=$!
		cleanup_hooks="${cleanup_hooks:+$cleanup_hooks; }stop_remote_agents; kill $SSHD_PID 2>/dev/null || true"
		for i in $(seq 100); do
			grep -q "Server listening" "$T/ssh/sshd.log" && break
			kill -0 $SSHD_PID 2>/dev/null || break
			sleep 0.05
		done
		if grep -q "Server listening" "$T/ssh/sshd.log"; then
			ssh-keyscan -p "$SSHD_PORT" -t ed25519 "${SSHD_ADDR:-127.0.0.1}" \
				> "$T/ssh/host.keyscan" 2>/dev/null
			return 0
		fi
		kill $SSHD_PID 2>/dev/null || true
		wait $SSHD_PID 2>/dev/null || true
	done
	cat "$T/ssh/sshd.log" >&2
	fail "sshd did not start"
}

# known_hosts_trust: put the real host key in known_hosts.
known_hosts_trust() { cp "$T/ssh/host.keyscan" "$T/ssh/known_hosts"; }

ssh_cluster() {
	f=$1
	shift
	cat > "$f" <<EOF
cluster: sshtest
ssh: {config: $T/ssh/ssh_config, identity: $T/ssh/id_ed25519, known_hosts: $T/ssh/known_hosts}
nodes:
EOF
	k=0
	for n in "$@"; do
		echo "  - {name: $n, host: 127.0.0.1, port: $SSHD_PORT, user: $(id -un), rack: r$((k % 2 + 1)), devices: {cpu: 2}, state_dir: $T/$n}" >> "$f"
		k=$((k + 1))
	done
}

# sshd_session_of NODE: the pid of the sshd child (a direct child of the
# master) whose session runs that node's `hunter agent --stdio`.
sshd_session_of() {
	for c in $(pgrep -P "$SSHD_PID"); do
		for d in $(pgrep -P "$c") $(for g in $(pgrep -P "$c"); do pgrep -P "$g"; done); do
			tr '\0' ' ' < /proc/"$d"/cmdline 2>/dev/null |
				grep -q -- "--stdio --node $1 " && { echo "$c"; return 0; }
		done
	done
	return 1
}
