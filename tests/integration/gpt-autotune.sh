#!/bin/sh
# gpt check 8: the micro-batch search on a gpt, whose step memory grows
# with B * T (activations, the attention's B * H * T * T): it doubles
# until a size's tracked bytes pass resources.memory_per_rank, bisects,
# and the run uses a size whose peak is under the budget; the trace holds
# the doubling past it.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/integration/gpt-lib.sh"
gpt_text "$T/text.txt" 20000
cat > "$T/job.yaml" <<YEOF
name: gpt-tune
resources: {ranks: 1, memory_per_rank: 24MiB}
model: {type: gpt, layers: 2, heads: 2, channels: 64, context: 64}
data: {path: $T/text.txt}
train:
  epochs: 1
  batch: {global: 64, micro: auto}
compression: {method: none}
checkpoint: {every_steps: 0, keep: 1}
YEOF
"$HUNTER" run --json "$T/job.yaml" > "$T/run" || fail "hunter run exited $?"
"$PY" - "$T/run" <<'PYEOF' || fail "see above"
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
tune = [o for o in objs if o["t"] == "autotune"][-1]
summ = [o for o in objs if o["t"] == "summary"][-1]
budget, micro = tune["budget"], tune["micro_batch"]
for tr in tune["trials"]:
    print("size %3d: %s, peak %.1f MiB" % (tr["size"], "fits" if tr["fit"]
          else "over", tr["peak_bytes"] / 1048576))
sizes = [tr["size"] for tr in tune["trials"]]
peak = {tr["size"]: tr["peak_bytes"] for tr in tune["trials"]}
over = [tr for tr in tune["trials"] if not tr["fit"]]
print("budget %.1f MiB, chosen %d (x %d), the run used %d" % (
    budget / 1048576, micro, tune["accum"], summ["micro_batch"]))
assert summ["state"] == "finished"
assert sizes[:2] == [1, 2], sizes                   # it doubles from 1
assert over and all(tr["peak_bytes"] > budget for tr in over)
assert all(tr["peak_bytes"] <= budget for tr in tune["trials"] if tr["fit"])
assert peak[micro] <= budget < min(tr["peak_bytes"] for tr in over)
assert micro < 64 and summ["micro_batch"] == micro
assert micro * tune["accum"] == 64
PYEOF
pass "autotune on gpt stays under memory_per_rank"
