#!/bin/sh
# Checkpoints: only the newest `keep` stay; --resume skips a corrupt newest
# checkpoint (flipped bytes), says so, and resumes from the one before.
. "$SRCDIR/tests/integration/lib.sh"
mkdata "$T/data" 1024 64
small_job "$T/j.yaml" corrupt "$T/data"
sed -i 's/every_steps: 0, keep: 3/every_steps: 8, keep: 3/' "$T/j.yaml"
"$HUNTER" run --json --stop-after-epochs 1 "$T/j.yaml" > "$T/1.out" || fail "first run"
dir="$HUNTER_STATE_DIR/checkpoints/corrupt"
n=$(ls "$dir" | grep -c '^step-.*\.safetensors$')
[ "$n" = 3 ] || { ls -la "$dir"; fail "expected 3 kept checkpoints, found $n"; }
newest=$(ls "$dir" | sort | tail -n 1)
prev=$(ls "$dir" | sort | tail -n 2 | head -n 1)
"$PY" - "$dir/$newest" <<'PYEOF'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
for i in range(-4000, -3990):
    b[i] ^= 0xFF
open(p, "wb").write(b)
PYEOF
"$HUNTER" run --json --resume "$T/j.yaml" > "$T/2.out" 2>&1 || fail "resume run"
grep -q "skipping corrupt checkpoint.*$newest.*content hash mismatch" "$T/2.out" ||
	{ cat "$T/2.out"; fail "no message about the corrupt checkpoint"; }
grep -q "resumed from $dir/$prev" "$T/2.out" || fail "did not resume from $prev"
[ "$(jget "$T/2.out" summary state)" = finished ] || fail "did not finish"
pass "skipped $newest, resumed from $prev"
