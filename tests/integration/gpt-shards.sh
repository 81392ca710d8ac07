#!/bin/sh
# gpt check 7: token shards in llm.c's format, written here, train (the
# loss falls from ln 512); hostile shards (bad magic, wrong version, a
# count beyond the file, a token >= vocab, empty, unreadable) are refused
# with the file and the reason, by hunter validate and by hunter run.
. "$SRCDIR/tests/integration/lib.sh"
mk() { "$PY" "$SRCDIR/tests/integration/mkshard.py" "$@"; }
mkdir "$T/d"
mk "$T/d/train_000.bin" 20000 512 1
mk "$T/d/train_001.bin" 20000 512 2
mk "$T/d/val.bin" 4000 512 3
job() {
	cat > "$1" <<YEOF
name: gpt-shards
resources: {ranks: 1}
model: {type: gpt, layers: 2, heads: 2, channels: 32, context: 32, vocab: 512}
data: {format: tokens, train: "$2", val: $3}
train:
  epochs: 2
  seed: 5
  lr: {base: 0.003, schedule: cosine, warmup_steps: 10}
  batch: {global: 16, micro: 16}
compression: {method: none}
checkpoint: {every_steps: 0, keep: 1}
YEOF
}
job "$T/good.yaml" "$T/d/train_*.bin" "$T/d/val.bin"
"$HUNTER" validate "$T/good.yaml" || fail "validate refused good shards"
"$HUNTER" run --json --trace-steps 1 "$T/good.yaml" > "$T/run" ||
	fail "hunter run exited $?"
first=$(jget "$T/run" step loss)
last=$(jget "$T/run" summary val_loss)
echo "shards: first loss $first (ln 512 = 6.24), validation loss $last"
"$PY" -c "import sys; f, l = map(float, sys.argv[1:]); sys.exit(0 if 5.9 < f < 6.6 and l < f - 1 else 1)" \
	"$first" "$last" || fail "the loss did not fall"

for kind in magic version beyond vocab empty; do
	mk "$T/d/bad-$kind.bin" 3000 512 4 "$kind"
done
mkdir "$T/d/bad-dir.bin"
check() {	# check SHARD REASON
	job "$T/bad.yaml" "$T/d/train_000.bin" "$1"
	if "$HUNTER" validate "$T/bad.yaml" > "$T/v" 2>&1; then
		fail "validate took $1"
	fi
	grep -q "$(basename "$1").*$2" "$T/v" || { cat "$T/v"; fail "validate: no '$2' for $1"; }
	sed -n 1p "$T/v"
}
check "$T/d/bad-magic.bin" "bad magic 20240521"
check "$T/d/bad-version.bin" "version 2, not 1"
check "$T/d/bad-beyond.bin" "counts 4000 tokens, the file holds 3000"
check "$T/d/bad-vocab.bin" "token 512 at position 1500 is not below the vocabulary (512)"
check "$T/d/bad-empty.bin" "no tokens"
check "$T/d/bad-dir.bin" "not a regular file"
check "$T/d/missing.bin" "No such file"
# hunter run refuses it too, naming it, and fails rather than trains.
job "$T/bad.yaml" "$T/d/train_000.bin" "$T/d/bad-vocab.bin"
if "$HUNTER" run --json "$T/bad.yaml" > "$T/badrun" 2>&1; then
	fail "hunter run trained on a hostile shard"
fi
grep -q "bad-vocab.bin: token 512" "$T/badrun" || { cat "$T/badrun"; fail "hunter run did not say why"; }
pass "shards train; six hostile ones refused with the file and the reason"
