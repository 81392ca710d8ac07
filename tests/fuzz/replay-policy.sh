#!/bin/sh
# Replay the seed corpus of fuzz-policy (tests/fuzz/corpus/policy): no
# crash under the build's sanitizers, valid-* requests decided by every
# policy, bad-* refused.
. "$SRCDIR/tests/fuzz/replay-lib.sh"
replay_corpus policy
