#!/bin/sh
# Program check 7: bad programs.  argv[0] missing (validate says so at
# its line and column, and so does a run, before it places anything), a
# program that exits 1 at once (failed over once, then given up with its
# own last line), one that reports and then crashes every time (the crash loop
# ends at policy.failover.max_restarts with the reason), one that says
# hello and never reports (the startup warning, then the heartbeat), and
# one whose peer outlives its finished rank 0, and one that floods stdout
# while its peer rank reports: each gives an event with the reason, and
# the agent keeps serving the other rank.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/integration/program-lib.sh"
cd "$T"
prog_job() {	# NAME RANKS ARGV [YAML]
	printf 'name: %s\nresources: {ranks: %s}\nprogram:\n  argv: %s\n  stop_grace: 2s\n%s\n' \
	    "$1" "$2" "$3" "${4:-}" > "$1.yaml"
}
run_job() {	# NAME: run it to its end (it fails: rc 1), 120 s at most
	set +e
	timeout 120 "$HUNTER" run --json "$1.yaml" > "$1.out" 2>&1
	rc=$?
	set -e
	[ "$rc" = "${2:-1}" ] || { tail -n 20 "$1.out"; fail "$1: hunter run exited $rc"; }
}
reasons() {	# NAME KIND: the reasons of its events of KIND
	"$PY" -c '
import json, signal, sys
signal.signal(signal.SIGPIPE, signal.SIG_DFL)	# grep -q may stop reading
for l in open(sys.argv[1]):
    if l.startswith("{"):
        o = json.loads(l)
        if o["t"] == "event" and o["kind"] == sys.argv[2]:
            print(o["reason"])' "$1.out" "$2"
}

# argv[0] is not there.
prog_job missing 1 '[no-such-program-7, --x]'
set +e
"$HUNTER" validate missing.yaml > validate.out 2>&1
rc=$?
set -e
[ "$rc" = 1 ] && grep -q "^missing.yaml:4:10: program.argv\[0\]: 'no-such-program-7' is not on PATH" validate.out ||
	{ cat validate.out; fail "validate did not find argv[0] missing"; }
# On this machine's nodes hunter run checks it as validate does, before
# anything is placed.
run_job missing
grep -q "missing.yaml:4:10: program.argv\[0\]: 'no-such-program-7' is not on PATH" missing.out ||
	{ cat missing.out; fail "no reason for the missing program"; }
! grep -q '"kind":"placed"' missing.out || fail "the missing program was placed"
echo "missing: $(grep 'program.argv' missing.out)"

# It exits 1 at once: failed over to the spare, then given up.
prog_job exit1 1 '[sh, -c, "echo bad config >&2; exit 1"]'
run_job exit1
reasons exit1 failed | grep -q "exited with status 1" || fail "no exit reason"
reasons exit1 failed | grep -q "before its first step, as it did on another node before; not restarting: bad config" ||
	{ reasons exit1 failed; fail "exit1 did not end with its own words"; }
echo "exit1: $(reasons exit1 failed | tail -n 1)"

# It reports, then crashes, each generation: a crash loop.
cat > crash.sh <<'EOF2'
echo '{"t":"hello"}' >&3
echo '{"t":"metrics","step":3,"loss":1}' >&3
sleep 0.3
echo "crashing in generation $HUNTER_GENERATION" >&2
exit 1
EOF2
prog_job crash 1 '[sh, crash.sh]' 'policy: {failover: {max_restarts: 2}}'
run_job crash
reasons crash failed | grep -q "rank 0: exited with status 1; 2 re-formations already, giving up" ||
	{ reasons crash failed; fail "the crash loop did not end at max_restarts"; }
echo "crash: $(reasons crash failed | tail -n 1)"

# It says hello and never reports.
cat > mute.sh <<'EOF2'
echo '{"t":"hello"}' >&3
sleep 600
EOF2
prog_job mute 1 '[sh, mute.sh]' "  startup: 1s
policy: {failover: {heartbeat_timeout: 2s, max_restarts: 1}}"
run_job mute
reasons mute warning | grep -q "said hello [0-9]* s ago and has reported no metrics (program.startup 1 s)" ||
	fail "no startup warning"
reasons mute failover | grep -q "rank 0: no heartbeat for [0-9]* s (timeout 2 s); killing it" ||
	fail "the mute rank was not killed"
reasons mute failed | grep -q "1 re-formations already, giving up" || fail "mute did not end"
echo "mute: $(reasons mute warning | head -n 1)"

# Rank 0 ends well; rank 1 never ends (held in a collective, say): once
# heartbeat_timeout and stop_grace have passed it is asked to stop, and
# the job ends as rank 0 said.
cat > linger.sh <<'EOF2'
[ "$RANK" = 0 ] && exit 0
exec sleep 600
EOF2
prog_job linger 2 '[sh, linger.sh]' 'policy: {failover: {heartbeat_timeout: 2s}}'
run_job linger 0
reasons linger stopped | grep -q "rank 0 ended well [0-9]* s ago and rank 1 still runs: asking the rest to stop" ||
	{ reasons linger stopped; fail "the lingering rank was not stopped"; }
grep -q '"t":"summary".*"state":"finished"' linger.out || fail "linger did not finish"
echo "linger: $(reasons linger stopped | head -n 1)"

# Rank 0 floods stdout for 4 s; rank 1 reports every 50 ms meanwhile.
cat > flood.sh <<'EOF2'
if [ "$RANK" = 0 ]; then
	timeout 4 yes "flood line with some words in it" || true
	exit 0
fi
echo '{"t":"hello"}' >&3
i=0
while [ $i -lt 80 ]; do
	i=$((i + 1))
	echo "{\"t\":\"metrics\",\"step\":$i,\"loss\":1}" >&3
	sleep 0.05
done
EOF2
prog_job flood 2 '[sh, flood.sh]'
run_job flood 0
"$PY" - flood.out <<'PYEOF' || fail "see above"
import json, sys
o = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
warn = [x["reason"] for x in o if x["t"] == "event" and x["kind"] == "warning"]
logs = [x for x in o if x["t"] == "log" and x["rank"] == 0]
m1 = [x for x in o if x["t"] == "metrics" and x["rank"] == 1 and not x.get("beat")]
span = m1[-1]["heartbeat"] - m1[0]["heartbeat"]
print("flood: %s" % warn[0])
print("rank 0: %d log lines on the wire; rank 1: %d metrics over %.0f s, "
      "steps %d..%d" % (len(logs), len(m1), span, m1[0]["step"], m1[-1]["step"]))
assert "rank 0 prints more than 20 lines a second" in warn[0]
assert len(logs) <= 20 * 8 and len(m1) >= 10 and m1[-1]["step"] == 80
PYEOF
size=$(wc -c < "$(ls "$HUNTER_STATE_DIR"/nodes/*/flood.rank0.log)")
[ "$size" -le $((65 << 20)) ] || fail "the flood's log file grew to $size bytes"
pass "missing argv[0], exit 1, crash loop, mute, linger, flood: each with its reason"
