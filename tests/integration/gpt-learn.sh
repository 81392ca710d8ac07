#!/bin/sh
# gpt check 3: it learns.  The example job (examples/jobs/text-gpt.yaml)
# shortened to seconds: 1 rank, 2 layers of 64 channels, 64 bytes of
# context, 60 KB of the fortunes.  The loss of the first step is about
# ln 256 = 5.55 nats a byte; the validation loss at the end is below 3.0;
# hunter sample of the job's name takes its newest checkpoint and writes
# text of which at least 70% of the bytes are letters, spaces and
# punctuation, the same text as from the checkpoint's file.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/integration/gpt-lib.sh"
gpt_text "$T/text.txt" 60000
sed -e 's/ranks: 3/ranks: 1/' \
    -e 's/layers: 4, heads: 4, channels: 128, context: 128/layers: 2, heads: 2, channels: 64, context: 64/' \
    -e "s|path: /usr/share/games/fortunes|path: $T/text.txt|" \
    -e 's/warmup_steps: 100/warmup_steps: 10/' -e 's/global: 24, micro: 8/global: 16, micro: 16/' \
    -e 's/method: topk/method: none/' -e 's/eval_every: 100/eval_every: 20/' \
    "$SRCDIR/examples/jobs/text-gpt.yaml" > "$T/job.yaml"
grep -q 'channels: 64' "$T/job.yaml" || fail "the example changed; update this test"
"$HUNTER" run --json --trace-steps 1 "$T/job.yaml" > "$T/run" ||
	fail "hunter run exited $?"
first=$(jget "$T/run" step loss)
last=$(jget "$T/run" summary val_loss)
state=$(jget "$T/run" summary state)
echo "first step's loss $first, final validation loss $last ($state)"
[ "$state" = finished ] || fail "the run did not finish"
"$PY" -c "import sys; f, l = map(float, sys.argv[1:]); sys.exit(0 if 5.2 < f < 5.9 and l < 3.0 else 1)" \
	"$first" "$last" || fail "the loss did not fall from about 5.55 to below 3.0"
ck=$(jget "$T/run" summary checkpoint)
# By the job's name: its newest checkpoint, the run's last.
"$HUNTER" sample --prompt "The " --tokens 400 --temperature 0.8 --seed 2 text-gpt \
	> "$T/sample" 2> "$T/sample.err" || { rc=$?; cat "$T/sample.err"; fail "hunter sample exited $rc"; }
cat "$T/sample.err"
grep -qx "hunter sample: the newest checkpoint of text-gpt: $ck" "$T/sample.err" ||
	fail "hunter sample text-gpt did not take the run's last checkpoint, $ck"
"$HUNTER" sample --prompt "The " --tokens 400 --temperature 0.8 --seed 2 "$ck" \
	> "$T/sample2" || fail "hunter sample of the file exited $?"
cmp -s "$T/sample" "$T/sample2" || fail "the job's name and its file gave other text"
set +e
"$HUNTER" sample no-such-job > "$T/none" 2>&1
rc=$?
set -e
[ "$rc" = 1 ] && grep -q "no-such-job: no such file, and no checkpoint of a job no-such-job in $HUNTER_STATE_DIR/checkpoints/no-such-job" "$T/none" ||
	{ cat "$T/none"; fail "a name that is neither a file nor a job: exit $rc"; }
head -c 300 "$T/sample"; echo
"$PY" - "$T/sample" <<'PYEOF' || fail "the sample is not text"
import string, sys
b = open(sys.argv[1], "rb").read()
ok = sum(1 for c in b if chr(c) in string.ascii_letters + " .,;:!?'\"-\n")
print("%d bytes, %.0f%% letters, spaces and punctuation" % (len(b), 100.0 * ok / len(b)))
sys.exit(0 if len(b) >= 300 and ok >= 0.7 * len(b) else 1)
PYEOF
pass "validation loss $first -> $last, and the sample reads as text"
