#!/bin/sh
# Data pipeline check 5: slow data shows as data wait, in the summary,
# the epochs and the metrics.  Whether an injected delay shows depends
# on the step: a prefetching loader hides a delay shorter than the step,
# as it should.  So the delay is made longer than the step this machine
# took: the first run (no delay) measures the step, c ms; the second
# injects D = max(5, 8c) ms before each batch.  The loader then makes at
# most one batch every D ms, so a step takes about D, and about D - c of
# it is waiting, on a fast CPU or a slow one, in a sanitizer build or
# not.  Only while the loop stands still (before the first step, at an
# epoch's evaluation) can the ring fill, with prefetch + 1 = 3 batches at
# most each time: 9 of the 60 steps.  What is asserted holds for any c:
# the slow steps last at least 0.75 D on average (the delay took), the
# wait is at least half of D - c (it is counted) and never more than the
# step (it is not double-counted).  How small the prefetched share is,
# is a timing, measured by bench/data-wait (target under 3%), not
# asserted here.
. "$SRCDIR/tests/integration/lib.sh"
mkdata "$T/data" 2560 256
cat > "$T/job.yaml" <<EOF
name: data-wait
resources: {ranks: 1}
data: {path: $T/data, prefetch: 2}
model: {type: mlp, hidden: [256, 256]}
train:
  epochs: 3
  seed: 42
  batch: {global: 128, micro: 128}
EOF
"$HUNTER" run --json "$T/job.yaml" > "$T/fast" || fail "the run without delay"
fast=$(jget "$T/fast" summary samples_per_s)
delay=$("$PY" -c 'import math, sys
c = 1000 * 128 / float(sys.argv[1])
print(max(5, math.ceil(8 * c)))' "$fast") || fail "no summary from the run without delay"
"$HUNTER" run --json --inject slow-data="$delay" "$T/job.yaml" > "$T/slow" ||
	fail "the run with slow data"
"$PY" - "$T/fast" "$T/slow" "$delay" <<'PYEOF' || fail "data wait not as expected"
import json, sys

def frames(path, t):
    return [o for o in map(json.loads, open(path)) if o.get("t") == t]

fast, slow = frames(sys.argv[1], "summary")[-1], frames(sys.argv[2], "summary")[-1]
d = float(sys.argv[3])
c = 1000 * 128 / fast["samples_per_s"]          # ms a step, no delay
s = 1000 * 128 / slow["samples_per_s"]          # ms a step, slow data
w = slow["data_wait_pct"] / 100 * s             # ms of it waiting
m = [(o["data_wait_ms"], o["step_ms"]) for o in frames(sys.argv[2], "metrics")
     if o.get("scope") == "rank" and "data_wait_ms" in o]
e = [o["data_wait_pct"] for o in frames(sys.argv[2], "epoch")]
print("data wait: %.2f ms steps, prefetched %.4f%%; with %.0f ms of slow data "
      "%.2f ms steps, %.2f ms of it waiting (%.1f%%; epochs %s; metrics, "
      "wait/step ms: %s)" % (c, fast["data_wait_pct"], d, s, w,
      slow["data_wait_pct"], ", ".join("%.1f%%" % p for p in e),
      ", ".join("%.2f/%.2f" % x for x in m)))
bad = []
if slow["state"] != "finished" or slow["steps"] != 60:
    bad.append("the slow run did not finish its 60 steps")
if s < 0.75 * d:
    bad.append("slow steps of %.2f ms are shorter than the delay" % s)
if w < 0.5 * (d - c):
    bad.append("the summary counts %.2f ms of wait a step, under half of "
               "the %.2f ms the delay leaves" % (w, d - c))
if not 0 <= slow["data_wait_pct"] <= 100 or any(not 0 <= p <= 100 for p in e):
    bad.append("a share of wait outside 0-100%")
if len(e) != 3 or not m:
    bad.append("%d epoch frames, %d metrics frames" % (len(e), len(m)))
if any(wm > sm * 1.001 + 0.01 for wm, sm in m):
    bad.append("a metrics frame waits longer than its step")
if m and max(wm for wm, _ in m) < 0.5 * (d - c):
    bad.append("no metrics frame shows the wait")
for b in bad:
    print("FAIL: " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PYEOF
pass "data wait measured"
