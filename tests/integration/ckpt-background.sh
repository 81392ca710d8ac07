#!/bin/sh
# checkpoint.background (the default): a compressed job's periodic
# checkpoint gathers the ranks' compressor states under the steps, in
# chunks sent point to point over Gloo while the ranks compute, and rank
# 0 writes it once all are in.  2 ranks over Gloo (HUNTER_COMM=gloo, as
# between hosts), top-k, a checkpoint every 20 steps, once in the
# background and once with background: false, the same job into two
# checkpoint directories:
#   - every checkpoint file, periodic and final, is the same bytes both
#     ways (the snapshot is the step's own state) and the training ends
#     with the same parameters on every rank;
#   - the background run's ranks waited on chunks under the steps
#     (HUNTER_PROFILE's row) and gathered at once only for the final
#     checkpoint, the other run gathered at once every time;
#   - each background checkpoint was said as its step's.
# The model is wide enough (two layers of 256) that a rank's state takes
# several chunks.
. "$SRCDIR/tests/integration/lib.sh"
mkdata "$T/data" 2048 64
for n in bg fg; do
	small_job "$T/$n.yaml" ckbg "$T/data" 'compression: {method: topk, density: 0.01}'
	sed -i "s/ranks: 1/ranks: 2/; s/micro: 32/micro: 16/
		s/hidden: \[32\]/hidden: [256, 256]/; /^compression: {method: none}\$/d
		s|^checkpoint: .*|checkpoint: {every_steps: 20, keep: 10, dir: $T/ck-$n}|" "$T/$n.yaml"
done
sed -i 's|^checkpoint: {\(.*\)}|checkpoint: {\1, background: false}|' "$T/fg.yaml"
grep -q 'background: false' "$T/fg.yaml" || fail "the second job keeps its checkpoints in the background"
grep -q 'hidden: \[256, 256\]' "$T/bg.yaml" || fail "the model was not widened"
for n in bg fg; do
	HUNTER_COMM=gloo HUNTER_PROFILE=1 "$HUNTER" run --json "$T/$n.yaml" > "$T/$n.out" 2>&1 ||
		{ rc=$?; tail -n 5 "$T/$n.out"; fail "the $n run exited $rc"; }
done
"$PY" - "$T" <<'PYEOF' || fail "see above"
import json, os, re, sys
T = sys.argv[1]

def load(n):
    return [json.loads(l) for l in open("%s/%s.out" % (T, n)) if l.startswith("{")]

def rows(objs, rank):
    text = [x["line"] for x in objs if x["t"] == "log" and x["rank"] == rank]
    start = [i for i, l in enumerate(text) if l.startswith("profile of rank")]
    assert start, (rank, text[-5:])
    got = {}
    for l in text[start[0] + 1:]:
        m = re.match(r"\s+(.*?)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+\((\d+)\)$", l)
        if not m:
            break
        got[m.group(1)] = int(m.group(5))
    return got

runs = {n: load(n) for n in ("bg", "fg")}
for n, objs in runs.items():
    s = [x for x in objs if x["t"] == "summary"][-1]
    assert s["state"] == "finished" and s["steps"] == 128, (n, s)
crc = {n: {x["params_crc32"] for x in objs if "params_crc32" in x}
       for n, objs in runs.items()}
print("params_crc32:", crc)
assert len(crc["bg"]) == 1 and crc["bg"] == crc["fg"], crc

files = {n: sorted(os.listdir("%s/ck-%s" % (T, n))) for n in ("bg", "fg")}
print("checkpoints:", files["bg"])
want = ["step-%09d.safetensors" % s for s in (20, 40, 60, 80, 100, 120, 128)]
for n in ("bg", "fg"):
    assert [f for f in files[n] if f.endswith(".safetensors")] == want, (n, files[n])
for f in want:
    a = open("%s/ck-bg/%s" % (T, f), "rb").read()
    b = open("%s/ck-fg/%s" % (T, f), "rb").read()
    assert a == b, "%s differs: %d bytes in the background, %d at once" % (f, len(a), len(b))
    assert b"extra.compressor.rank1" in a, f

for r in (0, 1):
    bg, fg = rows(runs["bg"], r), rows(runs["fg"], r)
    print("rank %d: background %s; at once %s" % (r, bg, fg))
    assert bg.get("checkpoint, waits under the steps", 0) >= 6, bg
    assert bg.get("checkpoint, gathering its state") == 1, bg
    assert "checkpoint, waits under the steps" not in fg, fg
    assert fg.get("checkpoint, gathering its state") == 7, fg

said = [x["reason"] for x in runs["bg"] if x["t"] == "event" and x["kind"] == "checkpoint"]
steps = [int(m.group(1)) for m in (re.match(r"step (\d+): ", w) for w in said) if m]
print("said:", steps)
assert steps == [20, 40, 60, 80, 100, 120, 128], said
PYEOF
pass "a compressed job's checkpoints gather under the steps, the same bytes as at once"
