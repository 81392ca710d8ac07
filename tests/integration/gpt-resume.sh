#!/bin/sh
# gpt check 6: on 2 ranks with top-k, a run stopped after its first epoch
# and resumed ends with a final checkpoint byte-identical to the one of a
# run that never stopped.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/integration/gpt-lib.sh"
gpt_text "$T/text.txt" 6000
gpt_job "$T/job.yaml" gpt-resume "$T/text.txt" 2 "  epochs: 2" \
    "checkpoint: {every_steps: 0, keep: 5}"
sed -i -e 's/^  epochs: 1$//' -e 's/^checkpoint: {every_steps: 0, keep: 2}$//' \
    -e 's/method: none}/method: topk, density: 0.01, warmup_epochs: 1}/' "$T/job.yaml"
HUNTER_STATE_DIR="$T/a" "$HUNTER" run --json "$T/job.yaml" > "$T/a.out" ||
	fail "uninterrupted run exited $?"
HUNTER_STATE_DIR="$T/b" "$HUNTER" run --json --stop-after-epochs 1 "$T/job.yaml" \
	> "$T/b1.out" || fail "first half exited $?"
[ "$(jget "$T/b1.out" summary state)" = stopped ] || fail "the first half did not stop"
HUNTER_STATE_DIR="$T/b" "$HUNTER" run --json --resume "$T/job.yaml" > "$T/b2.out" ||
	fail "resumed run exited $?"
for d in a b; do
	for p in "$T/$d"/nodes/*/agent.pid; do
		[ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null || true
	done
done
fa=$(ls "$T/a/checkpoints/gpt-resume/"*.safetensors | tail -1)
fb=$(ls "$T/b/checkpoints/gpt-resume/"*.safetensors | tail -1)
echo "uninterrupted: $(basename "$fa") $(sha256sum < "$fa" | cut -c1-16)"
echo "resumed:       $(basename "$fb") $(sha256sum < "$fb" | cut -c1-16)"
[ "$(basename "$fa")" = "$(basename "$fb")" ] || fail "they end at other steps"
cmp -s "$fa" "$fb" || fail "the final checkpoints differ"
grep -q '"kind": *"restarted".*resumed from' "$T/b2.out" || fail "it did not resume"
pass "stop, resume: the final checkpoint is byte-identical"
