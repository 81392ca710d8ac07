#!/bin/sh
# Replay the seed corpus of fuzz-spec (tests/fuzz/corpus/spec): no crash
# under the build's sanitizers, valid-* accepted, bad-* refused.
. "$SRCDIR/tests/fuzz/replay-lib.sh"
replay_corpus spec
