#!/bin/sh
# Autotune check 4: a tuned job that is resumed does not tune again; the
# summary shows the same micro-batch and accumulation.
. "$SRCDIR/tests/integration/lib.sh"
mkdata "$T/data" 4096 64
small_job "$T/j.yaml" tuned "$T/data"
sed -i 's/ranks: 1/ranks: 2, memory_per_rank: 3MiB/; s/hidden: \[32\]/hidden: [256]/; s/global: 32, micro: 32/global: 1024, micro: auto/' "$T/j.yaml"
"$HUNTER" run --json --stop-after-epochs 1 "$T/j.yaml" > "$T/a" || fail "first run"
"$HUNTER" run --json --resume "$T/j.yaml" > "$T/b" || fail "resumed run"
ma=$(jget "$T/a" autotune micro_batch)
[ "$ma" != None ] || fail "the first run did not tune"
[ "$(jget "$T/b" autotune micro_batch)" = None ] || fail "the resumed run tuned again"
grep -q 'from the checkpoint; no tuning' "$T/b" || fail "no word about skipping the search"
[ "$(jget "$T/a" summary micro_batch)" = "$(jget "$T/b" summary micro_batch)" ] || fail "micro differs"
[ "$(jget "$T/a" summary accum)" = "$(jget "$T/b" summary accum)" ] || fail "accum differs"
[ "$(jget "$T/a" summary accum)" -gt 1 ] || fail "the budget did not bind (accum 1)"
pass "resumed with micro $ma x accum $(jget "$T/b" summary accum), no tuning"
