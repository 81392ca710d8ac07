#!/bin/sh
# Fault matrix 5: the newest checkpoint is corrupt (bytes flipped in its
# tensor data).  On 2 ranks, `hunter run --resume` skips it, says so
# (content hash mismatch, naming the file), resumes from the one before,
# finishes, and its final weights are those of a run that never stopped.
# A second case corrupts the header's length field of the newest, which
# must be skipped the same way.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/faults/faults-lib.sh"
mkdata "$T/data" 1024 64
small_job "$T/j.yaml" corrupt2 "$T/data"
sed -i 's/ranks: 1/ranks: 2/; s/micro: 32/micro: 16/; s/every_steps: 0, keep: 3/every_steps: 8, keep: 3/' "$T/j.yaml"
plain_run "$T/j.yaml" "$T/plain"
want=$(final_crc "$T/plain" 2) || fail "undisturbed run: $want"
dir="$HUNTER_STATE_DIR/checkpoints/corrupt2"

for how in data header; do
	rm -rf "$dir"
	"$HUNTER" run --json --stop-after-epochs 1 "$T/j.yaml" > "$T/1.$how" 2>&1 ||
		fail "$how: the first run exited $?"
	[ "$(jget "$T/1.$how" summary state)" = stopped ] || fail "$how: the first run did not stop"
	n=$(ls "$dir" | grep -c '^step-.*\.safetensors$')
	[ "$n" = 3 ] || { ls -la "$dir"; fail "$how: expected 3 kept checkpoints, found $n"; }
	newest=$(ls "$dir" | sort | tail -n 1)
	prev=$(ls "$dir" | sort | tail -n 2 | head -n 1)
	"$PY" - "$dir/$newest" "$how" <<'PYEOF'
import sys
p, how = sys.argv[1], sys.argv[2]
b = bytearray(open(p, "rb").read())
if how == "data":
    for i in range(-3000, -2990):
        b[i] ^= 0xFF
else:
    b[0:8] = (len(b) * 3).to_bytes(8, "little")   # header length past the end
open(p, "wb").write(b)
PYEOF
	"$HUNTER" run --json --resume "$T/j.yaml" > "$T/2.$how" 2>&1 ||
		{ rc=$?; tail -n 5 "$T/2.$how" | cut -c1-300; fail "$how: the resumed run exited $rc"; }
	grep -q "skipping corrupt checkpoint.*$newest" "$T/2.$how" ||
		{ grep -v metrics "$T/2.$how" | cut -c1-300; fail "$how: no message about the corrupt $newest"; }
	grep -q "resumed from $dir/$prev" "$T/2.$how" ||
		{ grep -v metrics "$T/2.$how" | cut -c1-300; fail "$how: did not resume from $prev"; }
	[ "$(jget "$T/2.$how" summary state)" = finished ] || fail "$how: not finished"
	grep -q '"kind":"failover"' "$T/2.$how" && fail "$how: a failover during the resume"
	got=$(final_crc "$T/2.$how" 2) || fail "$how: $got"
	[ "$got" = "$want" ] || fail "$how: weights $got, undisturbed $want"
	echo "$how: $(grep -o 'skipping corrupt checkpoint[^"]*' "$T/2.$how" | head -n 1 | sed "s|$dir/||g")"
	echo "$how: resumed from $prev, weights $got"
done
pass "corrupt newest checkpoints skipped on 2 ranks; resumed bit-exactly from the one before"
