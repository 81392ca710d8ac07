#!/bin/sh
# SSH nodes, check 2: host keys.  An unknown host key is refused, and the
# refusal shows its SHA256 fingerprint and how to accept it; a changed key
# (known_hosts holds another key for [127.0.0.1]:PORT) is refused with
# "HOST KEY CHANGED" naming the node, even with --accept-new-hostkeys,
# and known_hosts is left alone; --accept-new-hostkeys on an unknown key
# adds it to the cluster's known_hosts file, after which a plain check
# passes.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/integration/sshd.sh"
sshd_start
ssh_cluster "$T/cluster.yaml" n0
fp=$(ssh-keygen -lf "$T/ssh/host_ed25519.pub" | awk '{print $2}')
case $fp in SHA256:*) ;; *) fail "no fingerprint from ssh-keygen: $fp" ;; esac

# Unknown: refused, fingerprint shown, nothing written.
rc=0
"$HUNTER" check --cluster "$T/cluster.yaml" > "$T/unknown" 2>&1 || rc=$?
cat "$T/unknown"
[ $rc -ne 0 ] || fail "an unknown host key was accepted"
grep -q "unknown host key for node n0" "$T/unknown" || fail "no 'unknown host key' message"
grep -qF "$fp" "$T/unknown" || fail "the refusal does not show the fingerprint $fp"
grep -q -- "--accept-new-hostkeys" "$T/unknown" || fail "the refusal does not say how to accept"
[ ! -s "$T/ssh/known_hosts" ] || fail "known_hosts was written without --accept-new-hostkeys"
[ ! -e "$T/n0/agent.pid" ] || fail "an agent was started on a refused host"

# Changed: another key recorded for [127.0.0.1]:PORT.
ssh-keygen -q -t ed25519 -N '' -f "$T/ssh/other"
echo "[127.0.0.1]:$SSHD_PORT $(cut -d' ' -f1,2 "$T/ssh/other.pub")" > "$T/ssh/known_hosts"
cp "$T/ssh/known_hosts" "$T/known_hosts.before"
rc=0
"$HUNTER" check --accept-new-hostkeys --cluster "$T/cluster.yaml" > "$T/changed" 2>&1 || rc=$?
cat "$T/changed"
[ $rc -ne 0 ] || fail "a changed host key was accepted with --accept-new-hostkeys"
grep -q "HOST KEY CHANGED for node n0" "$T/changed" || fail "no 'HOST KEY CHANGED' naming n0"
grep -qF "$fp" "$T/changed" || fail "the refusal does not show the new fingerprint"
cmp -s "$T/ssh/known_hosts" "$T/known_hosts.before" || fail "known_hosts changed"
[ ! -e "$T/n0/agent.pid" ] || fail "an agent was started on a host with a changed key"

# Accept new: the key is added in the [host]:port form, then trusted.
: > "$T/ssh/known_hosts"
rc=0
"$HUNTER" check --accept-new-hostkeys --cluster "$T/cluster.yaml" > "$T/accept" 2>&1 || rc=$?
cat "$T/accept"
[ $rc -eq 0 ] || fail "check --accept-new-hostkeys exited $rc"
key=$(cut -d' ' -f3 "$T/ssh/host.keyscan")
grep -qF "[127.0.0.1]:$SSHD_PORT ssh-ed25519 $key" "$T/ssh/known_hosts" ||
	{ cat "$T/ssh/known_hosts"; fail "the host key was not added to known_hosts"; }
rc=0
"$HUNTER" check --cluster "$T/cluster.yaml" > "$T/again" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/again"; fail "check after accepting exited $rc"; }
pass "unknown keys refused with their fingerprint, changed keys always refused, new keys added on request"
