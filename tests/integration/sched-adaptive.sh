#!/bin/sh
# An adaptive batch, live (issue 25 item 1): an elastic mlp (ranks: {min:
# 1, max: 4}) with train.batch.global: {min: 32, max: 128} and a fixed
# micro-batch of 16 starts at its min on one rank and is grown by the
# scheduler.  Its noise scale is never measured (lr.schedule cosine), so
# the batch follows the rule (docs/scheduling.md, "The batch of an
# adaptive job"): each rank keeps the 32 it had, clipped to 128, a
# multiple of ranks x 16.  The placed event says 32 at lr.base; the
# resized event says the rule's batch for its new count, not the spec's,
# and the learning rate goodput_lr gives it (SGD with the noise unknown:
# base x sqrt(batch / 32)); every rank of the new generation reports that
# global_batch; the resumed group starts at the sample the old one
# stopped at, its step recomputed for the new batch.  The backend is then
# killed and another attaches: it learns the batch from rank 0's metric
# (hunter jobs says it), and the job ends with the accuracy of a fixed run
# at the min batch, within a point.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/integration/sched-lib.sh"
sched_config 2s 0.5s
mkdata "$T/data" 2400 200
small_job "$T/a.yaml" adapt "$T/data"
sed -i "s/ranks: 1/ranks: {min: 1, max: 4}/; s/global: 32, micro: 32/global: {min: 32, max: 128}, micro: 16/; s/epochs: 2/epochs: 4/; s/every_steps: 0/every_steps: 10/" "$T/a.yaml"

# 2 ms more a sample, so that more ranks pay and the scheduler grows it.
"$HUNTER" run --json --trace-steps 100000 --inject slow-sample=2000 \
    "$T/a.yaml" > "$T/out" 2>&1 &
run=$!
cleanup_hooks="kill -9 $run 2>/dev/null || true"
# resized_batch OUT: the global batch of adapt's first resize, once
# every rank of the new generation has reported one.
resized_batch() {
	"$PY" - "$1" <<'PYEOF'
import json, sys
r, seen = None, set()
for l in open(sys.argv[1]):
    if not l.startswith("{"):
        continue
    o = json.loads(l)
    if o["t"] == "event" and o.get("kind") == "resized" and r is None:
        r = o
    elif r is not None and o["t"] == "metrics" and o.get("job") == "adapt" and \
            "global_batch" in o:
        seen.add(o["rank"])
if r is None or len(seen) < r["to"]:
    sys.exit(1)
print(r["global_batch"])
PYEOF
}
_resized() { resized_batch "$T/out" > /dev/null; }
wait_until 60 "the resize and a rank at its batch" _resized
# The backend killed after the resize; the one that attaches did not
# choose the batch, and learns it from rank 0's metric.
kill -9 $run
wait $run 2>/dev/null || true
"$HUNTER" run --json --attach adapt > "$T/out2" 2>&1 &
run=$!
cleanup_hooks="kill -9 $run 2>/dev/null || true"
b=$(resized_batch "$T/out")
_learnt() {
	"$HUNTER" jobs --json > "$T/jobs" 2>/dev/null &&
		grep -q "\"global_batch\": *$b\b" "$T/jobs"
}
wait_until 30 "the attached backend to learn the batch (hunter jobs)" _learnt
echo "attached: $(cat "$T/jobs")"
wait $run || { rc=$?; tail -n 5 "$T/out2" | cut -c1-300; fail "the attached run exited $rc"; }
stop_agents
echo "adapt: $(resizes "$T/out" adapt | tr '\n' ' ')"
"$PY" - "$T/out" <<'PYEOF' || fail "see above"
import json, math, re, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
ev = [o for o in objs if o["t"] == "event" and o.get("job") == "adapt"]
placed = [o for o in ev if o["kind"] == "placed"]
rs = [o for o in ev if o["kind"] == "resized"]
assert placed and rs, "no placement or no resize: %s" % [o["kind"] for o in ev]
p, r = placed[0], rs[0]
print("placed: global_batch %s lr %s; resized %d -> %d: global_batch %s lr %s"
      % (p.get("global_batch"), p.get("lr"), r["from"], r["to"],
         r["global_batch"], r["lr"]))
assert p["global_batch"] == 32 and abs(p["lr"] - 0.05) < 1e-12, p
assert r["from"] == 1 and r["to"] > 1, r
# The rule: 32 a rank, clipped to 128, a multiple of ranks x 16.
unit = 16 * r["to"]
want = max(-(-32 // unit) * unit, min(32 * r["to"], 128 // unit * unit))
assert r["global_batch"] == want and r["global_batch"] != 32, (r, want)
lr = 0.05 * math.sqrt(r["global_batch"] / 32)
assert abs(r["lr"] - lr) < 1e-9 * lr, (r["lr"], lr)
# The ranks' metric, before and after.
i = objs.index(r)
gen = {}
for o in objs[i:]:
    if o["t"] == "metrics" and o.get("job") == "adapt" and "global_batch" in o:
        gen.setdefault(o["rank"], set()).add(o["global_batch"])
    if o["t"] == "event" and o.get("kind") == "resized" and o is not r:
        break
before = {o["global_batch"] for o in objs[:i] if o["t"] == "metrics" and
          o.get("job") == "adapt" and "global_batch" in o}
print("global_batch reported before the resize %s, after by rank %s" % (before, gen))
assert before == {32}, before
assert sorted(gen) == list(range(r["to"])), gen
assert all(v == {r["global_batch"]} for v in gen.values()), gen
# Resumed by samples: the old group's last step, the samples of its epoch
# seen at 32 (75 steps an epoch of 2400), and the first step of the new
# one, recomputed from the end of the epoch at the new batch.
steps = [o for o in objs if o["t"] == "step" and o.get("job", "adapt") == "adapt"]
g0 = [o["step"] for o in steps if o.get("generation", 0) == 0]
g1 = [o["step"] for o in steps if o.get("generation", 0) == 1]
last, first = max(g0), min(g1)
said = [o["reason"] for o in objs if o["t"] == "event" and
        o.get("kind") == "restarted" and "global batch" in o.get("reason", "")]
assert said, "the worker did not say how it resumed"
m = re.search(r"global batch (\d+) -> (\d+): (\d+) samples of epoch (\d+) seen, "
              r"resuming at its step (\d+) \(skew (\d+)\), step (\d+)", said[0])
assert m, said[0]
b0, b1, seen, epoch, sie, skew, step = map(int, m.groups())
epoch -= 1
print("generation 0's last step %d; %s; generation 1's first step %d"
      % (last, said[0], first))
assert (b0, b1) == (32, r["global_batch"])
assert seen == (last - epoch * 75) * 32, (seen, last, epoch)
spe = 2400 // b1
left = (2400 - skew) // b1 - sie
assert seen == sie * b1 + skew and skew < b1
assert step == (epoch + 1) * spe - left and first == step + 1, (step, first)
PYEOF
[ "$(jget "$T/out2" summary state)" = finished ] || fail "the attached run did not finish"
[ "$(jget "$T/out2" summary epochs)" = 4 ] || fail "not 4 epochs"
acc_a=$(jget "$T/out2" summary test_acc)
# The same job fixed at its min: one rank, batch 32.
sed 's/ranks: {min: 1, max: 4}/ranks: 1/; s/global: {min: 32, max: 128}/global: 32/' \
    "$T/a.yaml" > "$T/fixed.yaml"
HUNTER_STATE_DIR="$T/fixed-state" "$HUNTER" run --json "$T/fixed.yaml" > "$T/fixed" 2>&1 ||
	fail "the fixed run"
for p in "$T"/fixed-state/nodes/*/agent.pid; do kill "$(cat "$p")" 2>/dev/null || true; done
acc_f=$(jget "$T/fixed" summary test_acc)
"$PY" -c "import sys; a, f = map(float, sys.argv[1:]); print('adaptive %.4f, fixed %.4f' % (a, f)); sys.exit(abs(a - f) > 0.01)" \
	"$acc_a" "$acc_f" || fail "the adaptive job's accuracy is not the fixed run's"
pass "an adaptive batch grew with its job: chosen, scaled, reported, resumed by samples"
