#!/bin/sh
# Program check 3: `hunter ctl` pause, resume, checkpoint, stop and
# migrate on the PyTorch example (2 ranks, Gloo).  A pause holds the step
# still for 5 s; a checkpoint is declared within 5 s of the command;
# migrate ends with rank 1 on the spare (local3) and the job finished;
# a stop ends a second run as stopped, with a checkpoint declared.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/integration/program-lib.sh"
need_torch
mkdata "$T/data" 4000 300
# 900 steps, 15 ms at least each (--pace): the job must outlast the
# pause, the checkpoint and the migration, and unpaced how long it lasts
# is only the machine's speed (58 s here under a load of 20 on 2 cores,
# far less on an idle machine with a fast kernel).
torch_job "$T/j.yaml" tctl '--epochs, "60", --pace, "0.015", --data, '"$T/data" \
	'checkpoint: {every_steps: 0, keep: 3}'

timeout 300 "$HUNTER" run --json "$T/j.yaml" > "$T/out" 2>&1 &
run=$!
cleanup_hooks="kill $run 2>/dev/null || true"
jwait "$T/out" 120 'sum(1 for x in o if x["t"] == "metrics" and not x.get("beat") and x.get("step", 0) > 5) >= 2'
"$HUNTER" ctl tctl pause || fail "ctl pause"
jwait "$T/out" 20 'len([x for x in ev if x["kind"] == "paused"]) == 2'
s0="$(steps "$T/out" 0) $(steps "$T/out" 1)"
sleep 5
s1="$(steps "$T/out" 0) $(steps "$T/out" 1)"
[ "$s0" = "$s1" ] || fail "the steps moved while paused: $s0 -> $s1"
jwait "$T/out" 5 'any(x["t"] == "metrics" and x.get("beat") and x.get("paused") for x in o)'
"$HUNTER" ctl tctl resume || fail "ctl resume"
jwait "$T/out" 20 'len([x for x in ev if x["kind"] == "resumed"]) == 2'
t0=$(date +%s.%N)
"$HUNTER" ctl tctl checkpoint || fail "ctl checkpoint"
jwait "$T/out" 5 'any(x["kind"] == "checkpoint" and "path" in x for x in ev)'
t1=$(date +%s.%N)
"$HUNTER" ctl tctl migrate 1 local3 || fail "ctl migrate"
jwait "$T/out" 60 'any(x["kind"] == "migrated" and "generation 1" in x["reason"] for x in ev)'
wait $run || { rc=$?; tail -n 20 "$T/out"; fail "the controlled run exited $rc"; }
"$PY" - "$T/out" "$s1" "$t0" "$t1" <<'PYEOF' || fail "see above"
import json, sys
o = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
ev = [x for x in o if x["t"] == "event"]
s = [x for x in o if x["t"] == "summary"][-1]
mig = [x for x in ev if x["kind"] == "migrated"][0]
print("paused at steps %s for 5 s" % sys.argv[2])
print("checkpoint declared %.1f s after the command" % (float(sys.argv[4]) - float(sys.argv[3])))
print("migrated: %s" % mig["reason"])
late = [x for x in o if x["t"] == "metrics" and x.get("generation") == 1 and x["rank"] == 1]
print("rank 1 now on %s; %s, test_acc %.4f" % (late[-1]["node"], s["state"], s["test_acc"]))
try:
    assert "rank 1: local" in mig["reason"] and "-> local3 (operator)" in mig["reason"]
    assert "resuming from" in mig["reason"]
    assert late[-1]["node"] == "local3" and s["state"] == "finished"
except AssertionError:
    # What happened, for a failure seen once and not reproduced.
    for x in o:
        if x["t"] in ("event", "summary"):
            print("  %s" % json.dumps(x)[:300])
    raise
PYEOF
grep -q '"t":"decision".*"kind":"migrated"' "$HUNTER_STATE_DIR/journal.jsonl" ||
	fail "the migration is not in the journal"

timeout 300 "$HUNTER" run --json "$T/j.yaml" > "$T/stopped" 2>&1 &
run=$!
cleanup_hooks="kill $run 2>/dev/null || true"
jwait "$T/stopped" 120 'any(x["t"] == "metrics" and not x.get("beat") and x.get("step", 0) > 5 for x in o)'
"$HUNTER" ctl tctl stop || fail "ctl stop"
wait $run || true
jwait "$T/stopped" 1 '[x for x in o if x["t"] == "summary"][-1]["state"] == "stopped"'
jwait "$T/stopped" 1 'any(x["kind"] == "checkpoint" and "path" in x for x in ev)'
pass "pause held 5 s, checkpoint, migrate to local3 and finished, stop"
