# reason-lib.sh: shared by error-reason.sh and tests/tui/console-reason.sh,
# after lib.sh.  long_reason_setup: a fake agent (fakeagent.py) for the
# one node "bad" whose error frame holds a reason of 4,000 bytes of
# three-byte characters (then it finishes the job), the cluster file of
# that node in $T/cluster.yaml, and a small job "longreason" in $T/j.yaml.
long_reason_setup() {
	"$PY" "$SRCDIR/tests/integration/fakeagent.py" --error-reason "$T/nodes" \
		finish bad > "$T/fake.log" 2>&1 &
	fake=$!
	cleanup_hooks="kill $fake 2>/dev/null || true; $cleanup_hooks"
	_fake_ready() { [ -f "$T/nodes/ready" ]; }
	poll_until 10 _fake_ready || { cat "$T/fake.log"; fail "the fake agent did not start"; }
	cat > "$T/cluster.yaml" <<EOC
cluster: onebad
nodes:
  - {name: bad, host: local, rack: a, devices: {cpu: 1}, state_dir: $T/nodes/bad}
EOC
	mkdata "$T/data" 200 64
	small_job "$T/j.yaml" longreason "$T/data"
}
