#!/bin/sh
# Autotune check 3: micro 32 x accum 4 against micro 128 over 20 steps of
# the same data: the parameters match within 1e-4 relative (norm of the
# difference over the norm).
. "$SRCDIR/tests/integration/lib.sh"
mkdata "$T/data" 2560 64	# 2560 / 128 = 20 steps
for m in 32 128; do
	small_job "$T/m$m.yaml" "acc$m" "$T/data"
	sed -i "s/epochs: 2/epochs: 1/; s/global: 32, micro: 32/global: 128, micro: $m/" "$T/m$m.yaml"
	"$HUNTER" run --json "$T/m$m.yaml" > "$T/o$m" || fail "micro $m"
done
[ "$(jget "$T/o32" summary accum)" = 4 ] || fail "micro 32 did not accumulate 4"
[ "$(jget "$T/o32" summary steps)" = 20 ] || fail "not 20 steps"
"$PY" - "$(jget "$T/o32" summary checkpoint)" "$(jget "$T/o128" summary checkpoint)" <<'PYEOF' || fail "parameters differ"
import math, sys
sys.path.insert(0, __import__("os").environ["SRCDIR"] + "/tests/integration")
import safetensors_read as st
_, a = st.load(sys.argv[1])
_, b = st.load(sys.argv[2])
num = den = 0.0
for k in a:
    if k.startswith("optim.") or k.startswith("extra."):
        continue
    x, y = st.floats(a[k][2]), st.floats(b[k][2])
    num += sum((p - q) ** 2 for p, q in zip(x, y))
    den += sum(q * q for q in y)
rel = math.sqrt(num / den)
print("relative difference %.2e" % rel)
assert 0 < rel <= 1e-4 or rel == 0
PYEOF
pass "accumulation matches the big batch"
