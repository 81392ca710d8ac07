#!/bin/sh
# Replay the seed corpus of fuzz-idx (tests/fuzz/corpus/idx): no crash
# under the build's sanitizers, valid-* accepted, bad-* refused.
. "$SRCDIR/tests/fuzz/replay-lib.sh"
replay_corpus idx
