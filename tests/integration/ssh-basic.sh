#!/bin/sh
# SSH nodes, check 1 (fast): a cluster of two nodes reached over SSH (a
# private sshd on 127.0.0.1, each node with its own state_dir) runs a
# 2-rank job placed with spread, so one rank runs on each node.  Each
# node's agent is started by `hunter agent --stdio` through the SSH
# channel, each rank's log is in its node's state_dir, and `hunter check`
# reports both nodes reachable, logged in and on this build.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/integration/sshd.sh"
sshd_start
known_hosts_trust
ssh_cluster "$T/cluster.yaml" n0 n1
mkdata "$T/data" 1200 200
small_job "$T/j.yaml" sshjob "$T/data"
sed -i 's/ranks: 1}/ranks: 2, placement: spread}/; s/micro: 32/micro: 16/' "$T/j.yaml"
grep -q 'placement: spread' "$T/j.yaml" || fail "could not edit the job"

rc=0
"$HUNTER" check --cluster "$T/cluster.yaml" > "$T/check" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/check"; fail "hunter check exited $rc"; }
cat "$T/check"
build=$("$HUNTER" --version | sed -n 's/^build: //p')
for n in n0 n1; do
	grep -E "^$n +root@127.0.0.1:$SSHD_PORT +yes +yes +0\.1\.0 +$(printf '%s' "$build" | sed 's/[().]/\\&/g')" "$T/check" > /dev/null ||
		fail "hunter check: no good row for $n"
	[ -f "$T/$n/agent.pid" ] || fail "no agent started in $T/$n"
done
grep -q "^ok: 2 nodes run hunter" "$T/check" || fail "hunter check did not say ok"

"$HUNTER" run --json --cluster "$T/cluster.yaml" "$T/j.yaml" > "$T/out" 2>&1 || rc=$?
[ $rc -eq 0 ] || { tail -n 20 "$T/out"; fail "hunter run exited $rc"; }
"$PY" - "$T/out" <<'PYEOF' || fail "the job over SSH: see above"
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
summary = [o for o in objs if o["t"] == "summary"][-1]
nodes = {o.get("node") for o in objs if o["t"] == "metrics" and o.get("job") == "sshjob"}
print("state %s, test_acc %s, ranks ran on %s" % (summary["state"],
      summary.get("test_acc"), sorted(n for n in nodes if n)))
assert summary["state"] == "finished", summary
assert {"n0", "n1"} <= nodes, nodes
PYEOF
for n in n0 n1; do
	ls "$T/$n"/sshjob.rank*.log > /dev/null 2>&1 ||
		fail "no rank log in $n's state_dir $T/$n"
done
pass "a 2-rank job ran over SSH on both nodes"
