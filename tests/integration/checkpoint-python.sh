#!/bin/sh
# Issue 2, check 3: an independent reader (Python's struct and json) reads
# a checkpoint hunter wrote: names, shapes, and values -- the reader's own
# forward pass with those weights must reproduce hunter's test accuracy
# and test loss.  Also loads it with the real safetensors package when
# that is installed (.ci/run installs it from PyPI).
. "$SRCDIR/tests/integration/lib.sh"
mkdata "$T/data" 512 100
small_job "$T/j.yaml" pyread "$T/data"
sed -i 's/epochs: 2/epochs: 1/' "$T/j.yaml"
"$HUNTER" run --json "$T/j.yaml" > "$T/out" || fail "hunter run"
ck=$(jget "$T/out" summary checkpoint)
"$PY" "$SRCDIR/tests/integration/forward_check.py" "$ck" "$T/data" \
	"$(jget "$T/out" epoch test_acc)" "$(jget "$T/out" epoch test_loss)" ||
	fail "independent reader disagrees"
if [ -n "${ST_PYTHON:-}" ] && "$ST_PYTHON" -c 'import safetensors.numpy' 2>/dev/null; then
	"$ST_PYTHON" - "$ck" <<'PYEOF' || fail "the safetensors package cannot load it"
import sys
from safetensors.numpy import load_file
t = load_file(sys.argv[1])
assert t["fc1.weight"].shape == (32, 784), t["fc1.weight"].shape
assert t["fc2.bias"].shape == (10,)
print("safetensors package: %d tensors" % len(t))
PYEOF
else
	echo "note: python safetensors package not installed; struct/json reader only"
fi
pass "checkpoint read independently"
