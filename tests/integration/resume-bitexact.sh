#!/bin/sh
# Issue 2, check 2: 2 epochs straight and 1 epoch + stop + resume for 1
# more end with byte-identical tensors (parameters and optimizer state).
. "$SRCDIR/tests/integration/lib.sh"
mkdata "$T/data" 1024 128
small_job "$T/a.yaml" straight "$T/data"
small_job "$T/b.yaml" split "$T/data"
"$HUNTER" run --json "$T/a.yaml" > "$T/a.out" || fail "straight run"
"$HUNTER" run --json --stop-after-epochs 1 "$T/b.yaml" > "$T/b1.out" ||
	fail "first half"
[ "$(jget "$T/b1.out" summary state)" = stopped ] || fail "first half did not stop"
"$HUNTER" run --json --resume "$T/b.yaml" > "$T/b2.out" || fail "resumed run"
grep '"kind":"restarted"' "$T/b2.out" | grep -q '"reason":"resumed from' ||
	fail "resume did not say where it resumed from"
a=$(jget "$T/a.out" summary checkpoint)
b=$(jget "$T/b2.out" summary checkpoint)
[ "$(jget "$T/b2.out" summary steps)" = "$(jget "$T/a.out" summary steps)" ] ||
	fail "step counts differ"
"$PY" "$SRCDIR/tests/integration/safetensors_read.py" --dump "$a" > "$T/a.sum"
"$PY" "$SRCDIR/tests/integration/safetensors_read.py" --dump "$b" > "$T/b.sum"
grep -q '^fc1.weight F32 32x784 ' "$T/a.sum" || fail "unexpected tensors"
cmp "$T/a.sum" "$T/b.sum" || { diff "$T/a.sum" "$T/b.sum"; fail "tensors differ"; }
pass "$(wc -l < "$T/a.sum") tensors byte-identical after resume"
