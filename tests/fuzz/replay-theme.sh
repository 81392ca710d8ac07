#!/bin/sh
# Replay the seed corpus of fuzz-theme (tests/fuzz/corpus/theme): no crash
# under the build's sanitizers, valid-* accepted, bad-* refused.
. "$SRCDIR/tests/fuzz/replay-lib.sh"
replay_corpus theme
