#!/bin/sh
# HUNTER_PROFILE=1 (in the agents' environment, here inherited from
# hunter run): each rank prints, as it ends, where its steps' time went
# -- data wait, forward and backward, the compressor's work, each
# collective, decoding, the update -- as ms a step.  A 2-rank top-k job:
# both ranks print every phase of the compressed exchange for each of
# its steps, the dense allreduce does not appear, and the phases' means
# add up to the step time the summary measured (within 30%: the phases
# leave out only the step's few loose ends).
. "$SRCDIR/tests/integration/lib.sh"
mkdata "$T/data" 2048 64
small_job "$T/j.yaml" prof "$T/data"
sed -i 's/ranks: 1/ranks: 2/; s/micro: 32/micro: 16/; s/method: none/method: topk, density: 0.01/' "$T/j.yaml"
HUNTER_PROFILE=1 "$HUNTER" run --json "$T/j.yaml" > "$T/out" 2>&1 ||
	{ tail -n 5 "$T/out"; fail "the run exited $?"; }
"$PY" - "$T/out" <<'PYEOF' || fail "see above"
import json, re, sys
o = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
s = [x for x in o if x["t"] == "summary"][-1]
step_ms = 1000 * 32 / s["samples_per_s"]
lines = {}
for x in o:
    if x["t"] == "log":
        lines.setdefault(x["rank"], []).append(x["line"])
want = ["data wait", "forward+backward", "error feedback+selection+encoding",
        "allgatherv of the headers", "allgatherv of the payloads", "decoding",
        "update and the rest"]
for r in (0, 1):
    text = lines.get(r, [])
    start = [i for i, l in enumerate(text) if l.startswith("profile of rank %d" % r)]
    assert start, (r, text[-5:])
    rows = {}
    for l in text[start[0] + 1:start[0] + 1 + len(want)]:
        m = re.match(r"\s+(.*?)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+\((\d+)\)$", l)
        assert m, l
        rows[m.group(1)] = (float(m.group(2)), int(m.group(5)))
    print("rank %d: %s; step %.3f ms" % (r, {k: v[0] for k, v in rows.items()}, step_ms))
    assert sorted(rows) == sorted(want), rows
    assert all(n == s["steps"] for _, n in rows.values()), (rows, s["steps"])
    total = sum(v for v, _ in rows.values())
    assert 0.7 * step_ms <= total <= 1.3 * step_ms, (total, step_ms)
assert s["state"] == "finished"
PYEOF
pass "each rank says where its steps' time went"
