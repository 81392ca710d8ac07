#!/bin/sh
# An unmodified PyTorch DDP script (examples/programs/torch_plain.py:
# nothing of hunter in it, no SIGUSR1 handler) survives `hunter ctl JOB
# checkpoint`: each rank's agent refuses it with the reason (a refused
# event naming SIGUSR1) instead of sending the signal whose default
# action would end it, and the job goes on to finish, with no failure
# and no failover.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/integration/program-lib.sh"
need_torch
cat > "$T/plain.yaml" <<YEOF
name: plain
resources: {ranks: 2}
program:
  argv: [$PY, $SRCDIR/examples/programs/torch_plain.py, --epochs, "3", --steps, "60", --step-sleep, "0.03"]
  env: {OMP_NUM_THREADS: "1", OPENBLAS_NUM_THREADS: "1"}
  stop_grace: 10s
YEOF
( cd "$T" && timeout 90 "$HUNTER" run --json plain.yaml > out 2>&1 ) &
run=$!
cleanup_hooks="kill $run 2>/dev/null || true"
jwait "$T/out" 40 'any(x["t"] == "log" and x["line"].startswith("epoch 1/3") for x in o)'
"$HUNTER" ctl plain checkpoint || fail "ctl checkpoint"
jwait "$T/out" 10 'len([x for x in ev if x["kind"] == "refused"]) >= 2'
wait $run || { rc=$?; tail -n 20 "$T/out"; fail "hunter run exited $rc"; }
"$PY" - "$T/out" <<'PYEOF' || { tail -n 20 "$T/out"; fail "see above"; }
import json, sys
o = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
ev = [x for x in o if x["t"] == "event"]
refused = [x for x in ev if x["kind"] == "refused"]
s = [x for x in o if x["t"] == "summary"][-1]
print("refused: %s" % refused[0]["reason"])
assert sorted(x["rank"] for x in refused) == [0, 1], refused
for x in refused:
    assert "SIGUSR1" in x["reason"] and "no signal sent" in x["reason"], x
assert not any(x["kind"] in ("signal", "failed", "failover") for x in ev), \
    [x for x in ev if x["kind"] in ("signal", "failed", "failover")]
assert any(x["t"] == "log" and x["line"].startswith("epoch 3/3") for x in o)
assert s["state"] == "finished", s
PYEOF
pass "an unmodified DDP script: checkpoint refused with the reason, the job finished"
