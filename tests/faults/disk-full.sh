#!/bin/sh
# Fault matrix 4: the disk fills up during a checkpoint.  The job's
# checkpoint.dir is a 4 MiB tmpfs and each checkpoint of an mlp
# 784-256-256-10 with momentum takes about 2.2 MB, so the first fits and
# the second does not.  The failed write is reported as an event naming
# the error, leaves no partial file behind, the previous checkpoint stays
# intact (an independent safetensors reader loads it, and --resume from
# it works), and training goes on to the last step on 2 ranks; the job
# finishes, but since its final checkpoint could not be written either,
# the summary says so and hunter run exits 4.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/faults/faults-lib.sh"
[ "$(id -u)" = 0 ] || { echo "skip: mounting a tmpfs needs root"; exit 77; }
mkdir -p "$T/ck"
mount -t tmpfs -o size=4m,mode=0700 tmpfs "$T/ck" 2>"$T/mnt" ||
	{ cat "$T/mnt"; echo "skip: cannot mount a tmpfs here"; exit 77; }
cleanup_hooks="umount -l '$T/ck' 2>/dev/null || true"
mkdata "$T/data" 1000 100
small_job "$T/j.yaml" dfull "$T/data" 'policy: {failover: {heartbeat_timeout: 5s}}'
sed -i 's/ranks: 1/ranks: 2/; s/hidden: \[32\]/hidden: [256, 256]/; s/micro: 32/micro: 16/; s/every_steps: 0/every_steps: 10/' "$T/j.yaml"
ckpt_dir_job "$T/j.yaml" "$T/ck"
rc=0
"$HUNTER" run --json "$T/j.yaml" > "$T/out" 2>&1 || rc=$?
df -k "$T/ck" | tail -n 1
ls -la "$T/ck"
"$PY" - "$T/out" <<'PYEOF' || fail "see above"
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
ck = [o for o in objs if o["t"] == "event" and o["kind"] == "checkpoint"]
ok = [o for o in ck if o["reason"].startswith("step ")]
bad = [o for o in ck if not o["reason"].startswith("step ")]
summ = [o for o in objs if o["t"] == "summary"]
fail = [o for o in objs if o["t"] == "event" and o["kind"] == "failed"]
print("written: %s" % [o["reason"].split(":")[0] for o in ok])
print("refused: %d, first: %s" % (len(bad), bad[0]["reason"] if bad else None))
print("failed events: %s" % [o["reason"] for o in fail][:3])
print("summary: %s" % ({k: summ[-1].get(k) for k in ("state", "steps", "epochs", "checkpoint")} if summ else None))
assert ok and ok[0]["reason"].startswith("step 10:"), "the first checkpoint was not written"
assert bad, "no event for the checkpoint that did not fit"
assert "No space left on device" in bad[0]["reason"], "unclear error: %s" % bad[0]["reason"]
assert summ and summ[-1]["steps"] == 62 and summ[-1]["epochs"] == 2, "training stopped early"
assert summ[-1]["state"] == "finished", "the job ended %s: %s" % (summ[-1]["state"], [o["reason"] for o in fail][-1:])
assert "No space left on device" in summ[-1].get("checkpoint_error", ""), summ[-1]
assert summ[-1].get("reason", "").startswith("the final checkpoint could not be written"), summ[-1]
PYEOF
[ "$rc" = 4 ] || fail "hunter run exited $rc, expected 4 (finished, not saved)"
n=$(ls "$T/ck" | grep -c '^step-[0-9]*\.safetensors$' || true)
[ "$n" -ge 1 ] || fail "no checkpoint left"
junk=$(ls -A "$T/ck" | grep -v '^step-[0-9]*\.safetensors$' || true)
[ -z "$junk" ] || fail "partial files left on the full disk: $junk"
first="$T/ck/step-000000010.safetensors"
[ -f "$first" ] || fail "the checkpoint of step 10 is gone"
"$PY" "$SRCDIR/tests/integration/safetensors_read.py" "$first" > "$T/read" ||
	{ cat "$T/read"; fail "the previous checkpoint is not readable"; }
grep -q 'fc1.weight F32 256x784' "$T/read" || { cat "$T/read"; fail "fc1.weight missing"; }
pass "checkpoint at step 10 intact, the full disk reported, training finished"
