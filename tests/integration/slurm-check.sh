#!/bin/sh
# Slurm, check 5: `hunter check` inside the allocation says the cluster
# came from Slurm job N and lists both nodes with their versions, read
# from the agents' hellos over the srun links.  When n2's agent runs
# another hunter (a daemon started there first, with HUNTER_FAKE_VERSION,
# that the srun step's `hunter agent --stdio` attaches to), hunter check
# fails naming it, and hunter run refuses the launch: nothing runs.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/slurm/slurm-lib.sh"
# The data set is made while the cluster comes up.
mkdata "$T/data" 256 64 &
mk=$!
slurm_up 5 2
wait $mk || fail "mkdata failed"
slurm_job "$T/job.yaml" vcheck "$T/data"

rc=0
salloc -N2 "$HUNTER" check < /dev/null > "$T/check" 2> "$T/err" || rc=$?
cat "$T/check"
[ $rc -eq 0 ] || { cat "$T/err"; fail "hunter check in the allocation exited $rc"; }
J=$(sed -n 's/^cluster: from Slurm job \([0-9]*\), 2 nodes .*/\1/p' "$T/check")
[ -n "$J" ] || fail "hunter check does not say the cluster came from a Slurm job"
grep -q "salloc: Granted job allocation $J" "$T/err" || fail "job $J is not the allocation"
for n in n1 n2; do
	grep -E -q "^$n +$n +yes +yes +0\.1\.0 " "$T/check" || fail "no row for $n with its version"
done
grep -q "^ok: 2 nodes run hunter 0.1.0" "$T/check" || fail "no ok line"

# n2's agent on another version; the relay of its step attaches to it.
dir="$HUNTER_STATE_DIR/nodes/n2"
ip netns exec "${SX_PFX}n2" env HUNTER_FAKE_VERSION=9.9.9-other \
	"$HUNTER" agent --node n2 --dir "$dir" --idle-exit 60 ||
	fail "could not start n2's agent"
wait_until 10 "n2's agent to listen" test -S "$dir/agent.sock"
rc=0
salloc -N2 "$HUNTER" check < /dev/null > "$T/check2" 2>&1 || rc=$?
cat "$T/check2"
[ $rc -eq 1 ] || fail "hunter check exited $rc with n2 on another version"
grep -q "^version mismatch: n2 runs hunter 9.9.9-other (build .*), n1 and this console run 0.1.0" "$T/check2" ||
	fail "the mismatch does not name n2, n1 and the versions"
grep -E -q "^n2 +n2 +yes +yes +9\.9\.9-other " "$T/check2" || fail "the table does not show n2's version"
rc=0
salloc -N2 "$HUNTER" run --json "$T/job.yaml" < /dev/null > "$T/out" 2> "$T/err" || rc=$?
[ $rc -eq 1 ] || { cat "$T/err"; fail "the launch exited $rc, expected 1"; }
grep -q "version mismatch: n2 runs hunter 9.9.9-other" "$T/err" || { cat "$T/err"; fail "no refusal naming n2"; }
echo "run: $(grep -m1 "version mismatch" "$T/err")"
! grep -q '"scope":"rank"' "$T/out" || fail "a rank ran"
kill "$(cat "$dir/agent.pid")" 2>/dev/null || true
pass "hunter check lists n1 and n2 of Slurm job $J with their versions; n2 on 9.9.9-other is refused"
