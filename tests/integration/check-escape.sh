#!/bin/sh
# hunter check prints what nodes say, and they may be hostile: a version
# string from an agent's hello and the last line a remote command wrote on
# stderr reach the terminal only through the sanitizer.  An agent of
# local0 reports a hunter version holding an OSC that retitles the window,
# a clear-screen CSI, a UTF-8 C1 CSI and a bidi override
# (HUNTER_FAKE_VERSION); then an SSH node whose `hunter` is a script that
# writes the same on stderr and exits 127.  Both failures are reported,
# naming the node, and none of those bytes is in the output.
. "$SRCDIR/tests/integration/lib.sh"
evil=$(printf '\033]0;pwned\007\033[2J0.9\302\23331m\342\200\256gnp.exe')
noraw() {	# noraw FILE: none of the bytes a terminal acts on
	"$PY" - "$1" <<'PYEOF' || { cat -v "$1"; fail "control bytes reached hunter check's output"; }
import sys
b = open(sys.argv[1], "rb").read()
bad = {"ESC": b"\x1b", "BEL": b"\x07", "UTF-8 C1 CSI": "\u009b".encode(),
       "RLO": "\u202e".encode()}
found = [k for k, v in bad.items() if v in b]
print("control bytes in the output: %s" % (found or "none"))
assert not found
PYEOF
}

HUNTER_FAKE_VERSION=$evil "$HUNTER" agent --node local0 \
	--dir "$HUNTER_STATE_DIR/nodes/local0" --idle-exit 60
wait_until 5 "local0's agent did not start" test -S "$HUNTER_STATE_DIR/nodes/local0/agent.sock"
rc=0
"$HUNTER" check > "$T/local" 2>&1 || rc=$?
cat -v "$T/local"
[ $rc -ne 0 ] || fail "hunter check passed with a node on another version"
grep -q "^version mismatch: local0 runs hunter 0\.9gnp\.exe " "$T/local" ||
	fail "the mismatch does not name local0 and its (cleaned) version"
noraw "$T/local"

. "$SRCDIR/tests/integration/sshd.sh"
mkdir -p "$T/bin"
cat > "$T/bin/hunter" <<SH
#!/bin/sh
printf '%s\n' '$evil' >&2
exit 127
SH
chmod 755 "$T/bin/hunter"
sshd_start "$T/bin:/usr/bin:/bin"
known_hosts_trust
ssh_cluster "$T/cluster.yaml" n0
rc=0
"$HUNTER" check --cluster "$T/cluster.yaml" > "$T/viassh" 2>&1 || rc=$?
cat -v "$T/viassh"
[ $rc -ne 0 ] || fail "hunter check passed on a node whose hunter fails"
grep -q "^node n0: .*exit status 127.*0\.9gnp\.exe" "$T/viassh" ||
	fail "the failure does not name n0 and quote its stderr"
noraw "$T/viassh"
pass "hunter check shows what the nodes said, without their escapes"
