#!/bin/sh
# Scheduler check 2: rank 1 of fmnist-mlp on 4 ranks crashes at step 1234.
# The backend fails over to the spare node with no operator action, the job
# finishes at >= 0.88, at most one checkpoint interval (500 steps) is lost,
# and the journal gives the reason.  The rank's last words (its stderr)
# reach the stream as a log frame, and stay in its log file on the node.
. "$SRCDIR/tests/integration/lib.sh"
[ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] ||
	fail "dataset-fashion-mnist is not installed"
"$HUNTER" run --json --inject crash-at=1234@1 \
	"$SRCDIR/examples/jobs/fmnist-mlp-dp.yaml" > "$T/out" 2>&1 ||
	{ rc=$?; tail -n 20 "$T/out"; fail "hunter run exited $rc"; }
"$PY" - "$T/out" "$HUNTER_STATE_DIR/journal.jsonl" <<'PYEOF' || fail "see above"
import json, re, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
ev = [o for o in objs if o["t"] == "event"]
fo = [o for o in ev if o["kind"] == "failover" and "generation 1" in o["reason"]]
res = [o for o in ev if o["kind"] == "restarted" and "resumed from" in o["reason"]
       and o.get("generation") == 1]
summary = [o for o in objs if o["t"] == "summary"][-1]
journal = [json.loads(l) for l in open(sys.argv[2])]
dec = [r for r in journal if r["t"] == "decision" and r["kind"] == "failover"]
print("failover: %s" % (fo[0]["reason"] if fo else None))
print("resume:   %s" % (res[0]["reason"] if res else None))
print("journal:  %s" % (dec[0]["reason"] if dec else None))
print("summary:  %s, test_acc %.4f" % (summary["state"], summary["test_acc"]))
assert fo and "rank 1 moves to local3" in fo[0]["reason"]
assert dec and "rank 1" in dec[0]["reason"] and "signal 6" in dec[0]["reason"]
step = int(re.search(r"at step (\d+)", res[0]["reason"]).group(1))
print("steps lost: %d (crash at 1234, checkpoint every 500)" % (1234 - step))
assert 0 <= 1234 - step <= 500
assert summary["state"] == "finished" and summary["test_acc"] >= 0.88
logs = [o for o in objs if o["t"] == "log" and o["rank"] == 1
        and o.get("generation", 0) == 0]
print("rank 1 said: %s" % [o["line"] for o in logs])
assert any(o["line"] == "injected crash at step 1234" for o in logs), logs
PYEOF
f=$(find "$HUNTER_STATE_DIR" -name 'fmnist-mlp-dp.rank1.log' | head -n 1)
grep -q "injected crash at step 1234" "$f" ||
	fail "the crash is not in rank 1's log file ($f)"

pass "crash failed over to the spare and the job finished"
