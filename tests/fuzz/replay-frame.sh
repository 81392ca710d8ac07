#!/bin/sh
# Replay the frame decoder's seed corpus through the fuzz target (built
# with replay.c when configure was not given --enable-fuzzing).
out=$("$BUILDDIR/tests/fuzz/fuzz-frame" "$SRCDIR/tests/fuzz/corpus/frame") || {
	echo "fuzz-frame failed: $out"
	exit 1
}
echo "$out"
case $out in
replayed\ 0\ *|"") echo "no inputs replayed"; exit 1 ;;
replayed*) exit 0 ;;
*) exit 1 ;;
esac
