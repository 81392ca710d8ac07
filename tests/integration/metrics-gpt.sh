#!/bin/sh
# Metrics of a language model (hunter(1), METRICS): a 2-rank gpt job that
# evaluates every 20 steps, scraped while it trains.  The scrape passes
# promtool and has both ranks' tokens/s and gradient norm and the job's
# validation loss and perplexity, the loss one an eval frame said; an
# image job's test series are absent.  Then hunter report draws the
# validation loss as one point an eval beside the training loss, the
# throughput in tokens/s and the gradient norm, and its facts and epochs
# say the summary's validation loss and perplexity.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/integration/gpt-lib.sh"
command -v promtool >/dev/null ||
	fail "promtool is not installed (Debian's prometheus; bootstrap installs it)"
export PYTHONPATH="$SRCDIR/tests/integration"
gpt_text "$T/text.txt" 400000
gpt_job "$T/g.yaml" gptprom "$T/text.txt" 2 "  eval_every: 20"
# Every step takes 10 ms at least (--inject slow=10): over shared memory
# the job would otherwise end before its first scrape.
"$HUNTER" run --json --metrics 127.0.0.1:0 --inject slow=10 "$T/g.yaml" > "$T/out" 2>&1 &
run=$!
cleanup_hooks="kill -9 $run 2>/dev/null || true"
url=$("$PY" -c 'import promtext, sys; print(promtext.url_of(sys.argv[1]))' "$T/out")
"$PY" - "$url" "$T/scrape" <<'PYEOF' || fail "see above"
import promtext, sys, time
end = time.time() + 60
while True:
    text = promtext.fetch(sys.argv[1])
    s = promtext.parse(text)
    if promtext.pick(s, "hunter_job_validation_loss") and \
       len(promtext.pick(s, "hunter_rank_tokens_per_second")) == 2:
        break
    assert time.time() < end, "no validation loss and tokens/s in 60 s"
    time.sleep(0.2)
open(sys.argv[2], "w").write(text)
val = promtext.pick(s, "hunter_job_validation_loss", job="gptprom")
ppl = promtext.pick(s, "hunter_job_validation_perplexity", job="gptprom")
tok = promtext.pick(s, "hunter_rank_tokens_per_second", job="gptprom")
grad = promtext.pick(s, "hunter_rank_gradient_norm", job="gptprom")
print("scrape: validation loss %s, perplexity %s, tokens/s %s, grad norm %s"
      % (val, ppl, [round(t) for t in tok], grad))
assert len(val) == 1 and len(ppl) == 1 and abs(ppl[0] / 2.718281828459045 ** val[0] - 1) < 1e-9
assert len(grad) == 2 and all(g > 0 for g in grad) and all(t > 0 for t in tok)
assert not promtext.pick(s, "hunter_job_test_accuracy_ratio")
assert not promtext.pick(s, "hunter_job_test_loss")
PYEOF
promtool check metrics < "$T/scrape" > "$T/lint" 2>&1 || { cat "$T/lint"; fail "promtool check metrics"; }
wait $run || fail "hunter run exited $?"
[ "$(jget "$T/out" summary state)" = finished ] || fail "not finished"
"$PY" - "$T/out" "$T/scrape" <<'PYEOF' || fail "see above"
import json, promtext, sys
evals = [o["val_loss"] for o in map(json.loads, open(sys.argv[1])) if o.get("t") == "eval"]
val = promtext.pick(promtext.parse(open(sys.argv[2]).read()), "hunter_job_validation_loss")[0]
assert any(abs(v - val) <= 1e-12 * abs(v) for v in evals), (val, evals)
print("the scraped validation loss %.6f is one of the %d evals'" % (val, len(evals)))
PYEOF

(cd "$T" && "$HUNTER" report gptprom) || fail "hunter report"
"$PY" - "$T/gptprom-report.html" "$T/out" <<'PYEOF' || fail "see above"
import json, re, sys
page = open(sys.argv[1]).read()
frames = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")]
evals = [o for o in frames if o.get("t") == "eval"]
summary = [o for o in frames if o.get("t") == "summary"][-1]
charts = re.findall(r'<svg class="chart".*?</svg>', page, re.S)
def chart(title):
    c = [c for c in charts if ("<title>%s" % title) in c]
    assert c, "no chart %r" % title
    return c[0]
loss = chart("Loss: training (the global batch&#39;s) and validation")
assert 'data-name="training (rank 0)"' in loss and 'data-name="validation"' in loss
dots = loss.count('<circle class="point"')
assert dots == len(evals), (dots, len(evals))
thr = chart("Throughput")
assert "tokens/s" in thr and thr.count("<polyline") >= 1
assert chart("Gradient norm before clipping").count("<polyline") >= 1
assert "validation</th><td>loss %.4f, perplexity %.2f" % (summary["val_loss"], summary["perplexity"]) in page
assert "<th>val loss</th><th>perplexity</th><th>tokens/s</th>" in page
assert "test accuracy" not in page
print("report: the loss chart with %d validation points, tokens/s, the gradient norm; "
      "validation loss %.4f, perplexity %.2f" % (dots, summary["val_loss"], summary["perplexity"]))
PYEOF
pass "a language model's series and report"
