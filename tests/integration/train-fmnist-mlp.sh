#!/bin/sh
# Issue 2, check 1: the demo job reaches >= 0.88 test accuracy on the real
# Fashion-MNIST (Debian's dataset-fashion-mnist).
. "$SRCDIR/tests/integration/lib.sh"
[ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] ||
	fail "dataset-fashion-mnist is not installed"
"$HUNTER" run --json "$SRCDIR/examples/jobs/fmnist-mlp.yaml" > "$T/out" ||
	fail "hunter run exited $?"
grep '"t":"epoch"' "$T/out" | tail -n 3
acc=$(jget "$T/out" summary test_acc)
state=$(jget "$T/out" summary state)
[ "$state" = finished ] || fail "state $state"
"$PY" -c "import sys; sys.exit(0 if float('$acc') >= 0.88 else 1)" ||
	fail "test accuracy $acc < 0.88"
pass "fmnist-mlp test_acc $acc"
