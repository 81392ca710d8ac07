#!/bin/sh
# HUNTER_PROFILE=1 (in the agents' environment, here inherited from
# hunter run): each rank prints, as it ends, where its steps' time went
# -- data wait, forward and backward, the compressor's work, each
# collective, decoding, the update -- as ms a step.  A 2-rank top-k job:
# both ranks print every phase of the compressed exchange for each of
# its steps, the dense allreduce does not appear, and the phases' means
# add up to the step time the summary measured (within 30%: the phases
# leave out only the step's few loose ends).  The exchange takes one
# collective a step: the second, for payloads longer than their slot,
# comes in the first step (no slot yet) and in few others.  A dense
# 2-rank job with train.zero: 1 shows its reduce-scatter, the allreduce
# of the step's few extra sums and the allgatherv of the parameters, the
# update row without the gather, and adds up the same way.  Each also
# shows its one checkpoint, the final one, as rows of their own outside
# the steps' sum: the gather of its state on every rank, the write on
# rank 0 alone.  The model is
# wide (two 1024 layers) so that a step takes milliseconds: with the
# small job's 0.1 ms steps the ranks' start-up skew (one rank waiting in
# its first collective for the other) was a third of the whole and the
# sums missed the step time under CI's load.
. "$SRCDIR/tests/integration/lib.sh"
mkdata "$T/data" 2048 64
small_job "$T/j.yaml" prof "$T/data"
sed -i 's/ranks: 1/ranks: 2/; s/micro: 32/micro: 16/
	s/hidden: \[32\]/hidden: [1024, 1024]/' "$T/j.yaml"
grep -q 'hidden: \[1024, 1024\]' "$T/j.yaml" || fail "the model was not widened"
sed 's/method: none/method: topk, density: 0.01/' "$T/j.yaml" > "$T/topk.yaml"
sed 's/^train:$/train:\n  zero: 1/' "$T/j.yaml" > "$T/zero.yaml"
grep -q 'zero: 1' "$T/zero.yaml" || fail "no train: section to add zero to"
for j in topk zero; do
	HUNTER_PROFILE=1 "$HUNTER" run --json "$T/$j.yaml" > "$T/$j.out" 2>&1 ||
		{ rc=$?; tail -n 5 "$T/$j.out"; fail "the $j run exited $rc"; }
done
"$PY" - "$T/topk.out" "$T/zero.out" <<'PYEOF' || fail "see above"
import json, re, sys
cases = (
    (sys.argv[1], ["data wait", "forward+backward",
                   "error feedback+selection+encoding",
                   "allgatherv of the slots", "decoding",
                   "update and the rest"],
     "allgatherv of payloads that did not fit"),
    (sys.argv[2], ["data wait", "forward+backward", "allreduce",
                   "reduce-scatter (ZeRO-1)",
                   "allgatherv of parameters (ZeRO-1)",
                   "update and the rest"], None))
for path, want, again in cases:
    o = [json.loads(l) for l in open(path) if l.startswith("{")]
    s = [x for x in o if x["t"] == "summary"][-1]
    assert s["state"] == "finished", s
    step_ms = 1000 * 32 / s["samples_per_s"]
    lines = {}
    for x in o:
        if x["t"] == "log":
            lines.setdefault(x["rank"], []).append(x["line"])
    for r in (0, 1):
        text = lines.get(r, [])
        start = [i for i, l in enumerate(text)
                 if l.startswith("profile of rank %d" % r)]
        assert start, (r, text[-5:])
        rows, ckpt = {}, {}
        for l in text[start[0] + 1:]:
            m = re.match(r"\s+(.*?)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)"
                         r"\s+\((\d+)\)$", l)
            if not m:
                break
            row = (float(m.group(2)), int(m.group(5)))
            if m.group(1).startswith("checkpoint, "):
                ckpt[m.group(1)] = row
            else:
                rows[m.group(1)] = row
        print("%s rank %d: %s %s; step %.3f ms" % (path, r, rows, ckpt,
                                                   step_ms))
        assert sorted(k for k in rows if k != again) == sorted(want), rows
        # The final checkpoint, the only one: every rank gathers the
        # compressor state (ZeRO-1's shards), rank 0 alone writes.
        assert ckpt.get("checkpoint, gathering its state", (0, 0))[1] == 1, ckpt
        assert ("checkpoint, writing it (rank 0)" in ckpt) == (r == 0), ckpt
        assert all(rows[k][1] == s["steps"] for k in want), (rows, s["steps"])
        if again is not None:
            assert 1 <= rows[again][1] <= s["steps"] // 10, rows[again]
        total = sum(v * n for v, n in rows.values()) / s["steps"]
        assert 0.7 * step_ms <= total <= 1.3 * step_ms, (total, step_ms)
PYEOF
pass "each rank says where its steps' time went"
