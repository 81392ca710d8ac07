#!/bin/sh
# Commands and their sequence numbers.  A rank acts on a command whose
# number is above the count of it that it carried out.  Two ways this
# went wrong: a new generation's ranks count from 0 while the backend
# counted on, so after a migration one checkpoint asked was one for each
# command the job had been sent; and a re-attached backend counted from
# 0, so a command the first backend had sent as many times was dropped
# in silence.  Here: checkpoint; a migration, then one checkpoint (one
# made); kill -9 of the backend, --attach, checkpoint (a new one, at a
# later step), pause and resume, stop (the run ends stopped).
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/faults/faults-lib.sh"
. "$SRCDIR/tests/integration/program-lib.sh"
mkdata "$T/data" 4800 200
small_job "$T/j.yaml" acmd "$T/data"
sed -i 's/ranks: 1/ranks: 2/; s/epochs: 2/epochs: 40/; s/micro: 32/micro: 16/' "$T/j.yaml"
# 16 ms a step (1 ms a sample) in each generation this backend starts:
# the job outlasts the test, which stops it.
"$HUNTER" run --json --inject slow-sample=1000 "$T/j.yaml" > "$T/out1" 2>&1 &
run=$!
cleanup_hooks="kill -9 $run 2>/dev/null || true"
# The steps of the checkpoints of generation G (any: -1) in the events.
_ck() { echo "[int(x['reason'].split()[1].rstrip(':')) for x in ev if x['kind'] == 'checkpoint' and x['reason'].startswith('step ') and $1 in (-1, x.get('generation'))]"; }
jwait "$T/out1" 60 'any(x["t"] == "metrics" and x.get("step", 0) > 5 for x in o)'
"$HUNTER" ctl acmd checkpoint || fail "ctl checkpoint"
jwait "$T/out1" 20 "len($(_ck 0)) == 1"
"$HUNTER" ctl acmd migrate 1 local3 || fail "ctl migrate"
jwait "$T/out1" 60 'any(x["t"] == "metrics" and x.get("generation") == 1 and x.get("step", 0) > 0 for x in o)'
"$HUNTER" ctl acmd checkpoint || fail "ctl checkpoint (generation 1)"
jwait "$T/out1" 20 "len($(_ck 1)) >= 1"
jwait "$T/out1" 20 "any(x['t'] == 'metrics' and x.get('generation') == 1 and x.get('step', 0) >= $(_ck 1)[0] + 5 for x in o)"
jwait "$T/out1" 1 "len($(_ck 1)) == 1"
first=$("$PY" - "$T/out1" <<PYEOF
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{"t":"event"')]
print($(_ck 1)[0])
PYEOF
)
echo "after the migration, one checkpoint for one command: step $first"
kill -9 $run
wait $run 2>/dev/null || true
timeout 120 "$HUNTER" run --json --attach acmd > "$T/out2" 2>&1 &
run=$!
cleanup_hooks="kill -9 $run 2>/dev/null || true"
jwait "$T/out2" 20 'any(x["kind"] == "restarted" and "re-attached" in x["reason"] for x in ev)'
"$HUNTER" ctl acmd checkpoint || fail "ctl checkpoint (attached backend)"
jwait "$T/out2" 20 "any(s > $first for s in $(_ck 1))"
"$HUNTER" ctl acmd pause || fail "ctl pause"
jwait "$T/out2" 20 'len([x for x in ev if x["kind"] == "paused"]) == 2'
"$HUNTER" ctl acmd resume || fail "ctl resume"
jwait "$T/out2" 20 'len([x for x in ev if x["kind"] == "resumed"]) == 2'
"$HUNTER" ctl acmd stop || fail "ctl stop"
set +e
wait $run
rc=$?
set -e
[ "$(jget "$T/out2" summary state)" = stopped ] ||
	{ grep -v '"metrics"' "$T/out2" | tail -n 8 | cut -c1-300; fail "the attached run ended $(jget "$T/out2" summary state) (exit $rc)"; }
echo "the attached backend's checkpoints: steps $("$PY" - "$T/out2" <<PYEOF
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{"t":"event"')]
print(" ".join(str(s) for s in $(_ck 1) if s > $first))
PYEOF
)"
pass "commands after a migration and after a re-attach were carried out once each"
