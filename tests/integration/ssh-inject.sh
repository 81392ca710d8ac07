#!/bin/sh
# SSH nodes, check 5: names, hosts, users and state_dirs with shell
# metacharacters cannot run a command on a node.  The spec refuses them
# (hunter validate gives file:line:col for each, hunter check will not
# load the file); a state_dir that the spec allows but a shell would
# still read specially (~ + , @ = :) reaches the node's agent verbatim;
# and a "~/" state_dir is expanded by the agent, not by a shell.  No
# marker file is ever created.  (The quoting itself is unit-tested with
# a real /bin/sh in tests/unit/test-ssh-quote.c.)
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/integration/sshd.sh"
sshd_start
known_hosts_trust
M="$T/MARKER"
ssh_cluster "$T/base.yaml" n0

bad() {	# bad LABEL SED-EXPRESSION: the spec must refuse the edited node
	sed "$2" "$T/base.yaml" > "$T/bad.yaml"
	! cmp -s "$T/bad.yaml" "$T/base.yaml" || fail "$1: the edit did nothing"
	rc=0
	"$HUNTER" validate "$T/bad.yaml" > "$T/validate" 2>&1 || rc=$?
	[ $rc -ne 0 ] || { cat "$T/bad.yaml"; fail "$1: hunter validate accepted it"; }
	grep -q "^$T/bad.yaml:[0-9]*:[0-9]*: " "$T/validate" ||
		{ cat "$T/validate"; fail "$1: no file:line:col error"; }
	rc=0
	"$HUNTER" check --cluster "$T/bad.yaml" > "$T/check" 2>&1 || rc=$?
	[ $rc -ne 0 ] || fail "$1: hunter check accepted it"
	[ ! -e "$M" ] || fail "$1: the marker was created"
	echo "refused $1: $(head -n 1 "$T/validate")"
}
bad "name with ;"        "s|name: n0|name: \"n0;touch $M\"|"
bad "name with \$()"     "s|name: n0|name: \"\$(touch $M)\"|"
bad "host with ;"        "s|host: 127.0.0.1|host: \"127.0.0.1;touch $M\"|"
bad "host with backticks" "s|host: 127.0.0.1|host: \"\`touch $M\`\"|"
bad "user with ;"        "s|user: [a-z]*|user: \"root;touch $M\"|"
bad "state_dir with '"   "s|state_dir: \([^}]*\)|state_dir: \"\1'; touch $M; '\"|"
bad "state_dir with ;"   "s|state_dir: \([^}]*\)|state_dir: \"\1;touch $M\"|"
bad "state_dir with \$()" "s|state_dir: \([^}]*\)|state_dir: \"\1\$(touch $M)\"|"
bad "state_dir with space" "s|state_dir: \([^}]*\)|state_dir: \"\1 x\"|"

# Allowed, shell-special characters arrive verbatim; "~/" is the agent's.
odd="$T/odd~dir+a,b@c=d:e"
cat > "$T/ok.yaml" <<YEOF
$(sed '/^nodes:/q' "$T/base.yaml")
  - {name: n0, host: 127.0.0.1, port: $SSHD_PORT, user: $(id -un), devices: {cpu: 2}, state_dir: "$odd"}
  - {name: n1, host: 127.0.0.1, port: $SSHD_PORT, user: $(id -un), devices: {cpu: 2}, state_dir: "~/n1~"}
YEOF
"$HUNTER" validate "$T/ok.yaml" || fail "the odd but legal cluster was refused"
rc=0
"$HUNTER" check --cluster "$T/ok.yaml" > "$T/check" 2>&1 || rc=$?
cat "$T/check"
[ $rc -eq 0 ] || fail "hunter check on the odd state_dirs exited $rc"
[ -S "$odd/agent.sock" ] || { ls -la "$T"; fail "n0's agent is not in $odd"; }
[ -S "$T/rhome/n1~/agent.sock" ] || { ls -la "$T/rhome"; fail "n1's ~/ was not expanded to the remote HOME"; }
[ ! -e "$M" ] || fail "the marker was created"
pass "metacharacters are refused by the spec, odd paths arrive verbatim, nothing ran"
