#!/bin/sh
# Resume with compression is bit-identical too: each rank's residual and
# momentum-correction state is gathered into the checkpoint (one
# "extra.compressor.rankR" U8 tensor per rank) and handed back on resume.
# 2 epochs straight against 1 epoch, stop, resume for 1 more, on 2 ranks.
. "$SRCDIR/tests/integration/lib.sh"
mkdata "$T/data" 1024 64
for n in straight split; do
	small_job "$T/$n.yaml" "c$n" "$T/data" 'compression: {method: topk, density: 0.01, warmup_epochs: 1}'
	sed -i 's/ranks: 1/ranks: 2/; s/micro: 32/micro: 16/; /^compression: {method: none}$/d' "$T/$n.yaml"
done
"$HUNTER" run --json "$T/straight.yaml" > "$T/a" || fail "straight run"
"$HUNTER" run --json --stop-after-epochs 1 "$T/split.yaml" > "$T/b1" || fail "first half"
"$HUNTER" run --json --resume "$T/split.yaml" > "$T/b2" || fail "resumed run"
ck=$(jget "$T/b1" summary checkpoint)
"$PY" "$SRCDIR/tests/integration/safetensors_read.py" "$ck" > "$T/tensors"
grep -q '^extra.compressor.rank1 U8' "$T/tensors" || { cat "$T/tensors"; fail "no compressor state in $ck"; }
a=$("$PY" "$SRCDIR/tests/integration/safetensors_read.py" --dump "$(jget "$T/a" summary checkpoint)" | grep -v '^extra' | sha256sum)
b=$("$PY" "$SRCDIR/tests/integration/safetensors_read.py" --dump "$(jget "$T/b2" summary checkpoint)" | grep -v '^extra' | sha256sum)
[ "$a" = "$b" ] || fail "weights differ after a compressed resume"
[ "$(jget "$T/a" summary bytes_sent)" -lt "$(jget "$T/a" summary bytes_dense)" ] || fail "not compressed"
pass "compressed resume is bit-identical"
