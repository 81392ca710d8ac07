#!/bin/sh
# Replay the seed corpus of fuzz-checkpoint (tests/fuzz/corpus/checkpoint): no crash
# under the build's sanitizers, valid-* accepted, bad-* refused.
. "$SRCDIR/tests/fuzz/replay-lib.sh"
replay_corpus checkpoint
