#!/bin/sh
# gpt check 5: top-k at density 0.01 on 2 ranks sends at least 50x fewer
# gradient bytes than dense (no warm-up, so every step is compressed),
# with the validation loss within 2% of dense after the same steps.  The
# optimizer is DGC's: SGD with momentum, whose velocity the compressor
# corrects and masks (momentum correction applies to SGD's momentum;
# with AdamW, plain error feedback left top-k 7-15% behind dense at this
# size here).
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/integration/gpt-lib.sh"
gpt_text "$T/text.txt" 40000
gpt_job "$T/dense.yaml" gpt-dense "$T/text.txt" 2 "  epochs: 2
  optimizer: {type: sgd, momentum: 0.9, weight_decay: 0}
  grad_clip: 0"
sed -e 's/name: gpt-dense/name: gpt-topk/' \
    -e 's/method: none}/method: topk, density: 0.01, warmup_epochs: 0}/' \
    "$T/dense.yaml" > "$T/topk.yaml"
sed -i -e 's/^  epochs: 1$//' -e 's/base: 0.003/base: 0.1/' "$T/dense.yaml" "$T/topk.yaml"
"$HUNTER" run --json "$T/dense.yaml" > "$T/dense" || fail "dense run exited $?"
"$HUNTER" run --json "$T/topk.yaml" > "$T/topk" || fail "topk run exited $?"
"$PY" - "$T/dense" "$T/topk" <<'PYEOF' || fail "see above"
import json, sys
def summary(p):
    return [o for o in map(json.loads, open(p)) if o.get("t") == "summary"][-1]
d, c = summary(sys.argv[1]), summary(sys.argv[2])
ratio = d["bytes_sent"] / c["bytes_sent"]
print("dense: val_loss %.4f, %d bytes; topk: val_loss %.4f, %d bytes "
      "(dense equivalent %d): %.0fx fewer" % (d["val_loss"], d["bytes_sent"],
      c["val_loss"], c["bytes_sent"], c["bytes_dense"], ratio))
assert d["state"] == c["state"] == "finished"
assert d["steps"] == c["steps"]
assert ratio >= 50 and c["bytes_dense"] / c["bytes_sent"] >= 50
assert c["val_loss"] <= 1.02 * d["val_loss"], "more than 2% worse than dense"
PYEOF
pass "top-k at 1%: 50x+ fewer bytes, validation loss within 2% of dense"
