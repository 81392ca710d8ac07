#!/bin/sh
# gpt check 4: 1, 2 and 4 ranks at the same global batch (8) see the same
# windows (tokens_draw: seed, step, index) and give the same loss over 30
# steps within 1e-5 relative (the sums of the micro-batches and of the
# ranks may round differently, nothing else).
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/integration/gpt-lib.sh"
gpt_text "$T/text.txt" 5000
for n in 1 2 4; do
	gpt_job "$T/w$n.yaml" gpt-world "$T/text.txt" $n ""
	"$HUNTER" run --json --trace-steps 30 "$T/w$n.yaml" > "$T/w$n" ||
		fail "$n ranks: hunter run exited $?"
	stop_agents
done
"$PY" - "$T/w1" "$T/w2" "$T/w4" <<'PYEOF' || fail "the losses differ"
import json, sys
runs = []
for p in sys.argv[1:]:
    loss = [o["loss"] for o in map(json.loads, open(p)) if o.get("t") == "step"]
    runs.append(loss)
for n, r in zip((1, 2, 4), runs):
    print("%d ranks: %d steps, loss %.6f .. %.6f" % (n, len(r), r[0], r[-1]))
assert all(len(r) == 30 for r in runs), [len(r) for r in runs]
worst = max(abs(a - b) / abs(a) for r in runs[1:] for a, b in zip(runs[0], r))
print("worst relative difference from 1 rank: %.2e" % worst)
assert worst <= 1e-5
assert runs[0][-1] < runs[0][0]
PYEOF
pass "1, 2 and 4 ranks agree over 30 steps"
