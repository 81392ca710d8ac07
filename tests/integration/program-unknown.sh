#!/bin/sh
# A program job reports what it reports, and nothing it did not: its
# ranks say their step, loss and samples and an epoch line each (no
# count of epochs, no accuracy, no summary).  hunter run's epoch lines
# come once per epoch (rank 0's) with what they said and nothing else;
# its summary gives "–" for every figure never reported, never 0; the
# report's charts drop the points a rank did not report and write no NaN.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/integration/program-lib.sh"
cat > "$T/prog.py" <<'PYEOF'
import time
import hunter_client as hunter
h = hunter.Client(every=0.1)
for step in range(1, 41):
    time.sleep(0.02)
    h.metrics(step, loss=1.0 / step, samples=8 * step)
    if step % 20 == 0:
        h.epoch(step // 20, loss=1.0 / step)
PYEOF
cat > "$T/j.yaml" <<YEOF
name: quiet
resources: {ranks: 2}
program:
  argv: [$PY, prog.py]
YEOF
timeout 60 "$HUNTER" run "$T/j.yaml" > "$T/out" 2>&1 || { cat "$T/out"; fail "the job did not finish"; }
grep -v '^\[log\]' "$T/out"
[ "$(grep -c '^quiet epoch 1 ' "$T/out")" = 1 ] && [ "$(grep -c '^quiet epoch 2 ' "$T/out")" = 1 ] ||
	fail "each epoch line once (rank 0's)"
grep -q '^quiet epoch 2  loss 0.0250  $' "$T/out" || fail "an epoch line with more than the program said"
grep '^summary:' "$T/out" | tail -n 1 > "$T/sum"
for want in 'summary: finished ' ' epochs 2 ' ' steps 40 ' ' test_acc – ' \
    ' samples/s – ' ' data_wait – ' ' 2 ranks$'; do
	grep -q -- "$want" "$T/sum" || fail "summary: no '$want' in: $(cat "$T/sum")"
done
! grep -Eq ' 0(\.0+)?%?  | 0 x ' "$T/sum" || fail "a 0 for an unknown: $(cat "$T/sum")"
(cd "$T" && "$HUNTER" report -o r.html quiet) > "$T/rep" || fail "report"
! grep -qi 'nan' "$T/r.html" || { grep -io '.\{60\}nan.\{20\}' "$T/r.html" | head -n 3; fail "NaN in the report"; }
"$PY" - "$T/r.html" <<'PYEOF' || fail "see above"
import re, sys
page = open(sys.argv[1]).read()
charts = re.findall(r'<svg class="chart".*?</svg>', page, re.S)
thr = [c for c in charts if "<title>Throughput" in c]
assert thr, [re.search(r"<title>(.*?)</title>", c).group(1) for c in charts]
pts = re.findall(r'points="([^"]*)"', thr[0])
assert pts and all(len(p.split()) >= 2 for p in pts), pts
print("throughput: %d lines, %d points" % (len(pts), sum(len(p.split()) for p in pts)))
PYEOF
pass "unknowns: '–' in the summary, left out of the epoch lines (once each), no NaN in the report"
