#!/bin/sh
# Issue 21: `hunter run` ends when its job does, and never waits on a dead
# node.  (1) A job whose data directory is empty, on a cluster of this
# machine's nodes: hunter run exits 1 before placing it, and says why.  (2) A 2-rank job on a cluster of a local node
# and an SSH node nothing answers for: it fits the cluster but not its
# reachable nodes, so it waits in the queue, the queued event naming the
# unreachable node and why, and is never placed (it was placed on the
# dead node, its rank there failed with "cannot reach the agent", and
# hunter run waited for ever); SIGTERM ends it at once (exit 130), the
# summary saying it was stopped in the queue and why it waited.
. "$SRCDIR/tests/integration/lib.sh"
mkdir "$T/empty"
cat > "$T/one.yaml" <<EOC
cluster: one
nodes:
  - {name: l0, host: local, rack: a, devices: {cpu: 1}}
EOC
small_job "$T/bad.yaml" nodata "$T/empty"
rc=0
timeout 60 "$HUNTER" run --json --cluster "$T/one.yaml" "$T/bad.yaml" > "$T/out1" 2>&1 || rc=$?
[ $rc -eq 1 ] || { tail -n 5 "$T/out1"; fail "a failed job: hunter run exited $rc, not 1"; }
# On a cluster of this machine's nodes the data is checked before
# placing, as hunter validate checks it: the run ends at once, saying why.
reason=$(grep 'hunter run: ' "$T/out1" || true)
echo "failed: $reason"
echo "$reason" | grep -q "bad.yaml: data: .*empty/train-images-idx3-ubyte: No such file" ||
	fail "hunter run does not say why the job cannot start"
! grep -q '"kind":"placed"' "$T/out1" || fail "a job without data was placed"

touch "$T/known_hosts"
cat > "$T/two.yaml" <<EOC
cluster: halfdead
ssh: {known_hosts: $T/known_hosts}
nodes:
  - {name: l0, host: local, rack: a, devices: {cpu: 1}}
  - {name: dead, host: 127.0.0.1, port: 1, rack: b, devices: {cpu: 1}}
EOC
mkdata "$T/data" 200 64
small_job "$T/j.yaml" waits "$T/data"
sed -i 's/ranks: 1}/ranks: 2}/; s/micro: 32/micro: 16/' "$T/j.yaml"
"$HUNTER" run --json --cluster "$T/two.yaml" "$T/j.yaml" > "$T/out2" 2>&1 &
run=$!
cleanup_hooks="kill -9 $run 2>/dev/null || true"
_ready1() { grep -q '"kind":"queued"' "$T/out2"; }
poll_until 10 _ready1 || true
grep '"kind":"queued"' "$T/out2" | cut -c1-300
grep -q '"kind":"queued".*unreachable: node dead (cannot reach' "$T/out2" ||
	{ cat "$T/out2"; fail "the job did not wait in the queue naming the dead node"; }
sleep 3			# reconnects to the dead node come and go
grep -q '"kind":"placed"' "$T/out2" && { cat "$T/out2"; fail "the job was placed with a dead node"; }
kill -TERM $run
start=$(date +%s)
_ready2() { ! { kill -0 $run 2>/dev/null; }; }
poll_until 5 _ready2 || true
kill -0 $run 2>/dev/null && fail "hunter run did not end within 5 s of SIGTERM"
rc=0
wait $run || rc=$?
echo "ended $(( $(date +%s) - start )) s after SIGTERM with status $rc"
[ $rc -eq 130 ] || { tail -n 3 "$T/out2"; fail "exit status $rc, not 130"; }
[ "$(jget "$T/out2" summary state)" = stopped ] || { tail -n 3 "$T/out2"; fail "the summary is not stopped"; }
jget "$T/out2" summary reason | grep -q "unreachable: node dead" ||
	fail "the summary does not say why the job waited"
pass "a failed job ends hunter run with its reason; a job that cannot reach its nodes waits, named, and SIGTERM ends it at once"
