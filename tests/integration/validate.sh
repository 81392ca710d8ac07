#!/bin/sh
# hunter validate: every error of every file as file:line:col: message,
# exit 1 when any file is bad and 0 when all are good.
. "$SRCDIR/tests/integration/lib.sh"
cd "$T"
for f in "$SRCDIR"/examples/jobs/*.yaml "$SRCDIR"/examples/clusters/*.yaml \
    "$SRCDIR"/examples/programs/*.yaml; do
	"$HUNTER" validate "$f" > out || { cat out; fail "$f should be valid"; }
done
cat > bad.yaml <<'YEOF'
name: demo
resources: {ranks: 0}
train:
  epochz: 3
  batch: {global: 0}
compression: {density: 1.5}
YEOF
set +e
"$HUNTER" validate bad.yaml "$SRCDIR/examples/jobs/fmnist-mlp.yaml" > out 2>&1
rc=$?
set -e
cat out
[ "$rc" = 1 ] || fail "exit $rc, expected 1"
grep -q '^bad.yaml:2:[0-9]*: .*ranks.*must be > 0' out || fail "ranks error"
grep -q "^bad.yaml:4:3: unknown key 'epochz'.*did you mean 'epochs'" out || fail "unknown key error"
grep -q '^bad.yaml:5:[0-9]*: .*global.*must be > 0' out || fail "batch error"
grep -q '^bad.yaml:6:[0-9]*: .*density' out || fail "density error"
grep -q 'fmnist-mlp.yaml: ok' out || fail "second file not checked"
printf '\001\002\377garbage\000\n' > bin.yaml
set +e
"$HUNTER" validate bin.yaml missing.yaml > out 2>&1
rc=$?
set -e
cat out
[ "$rc" = 1 ] || fail "exit $rc for garbage"
grep -q '^bin.yaml:[0-9]*:[0-9]*: ' out || fail "garbage not reported"
grep -q '^missing.yaml' out || fail "missing file not reported"
# Elastic ranks and an adaptive batch (hunter(1), Elastic jobs).
refused() {	# FILE: validate prints its errors to out and exits 1
	set +e
	"$HUNTER" validate "$1" > out 2>&1
	rc=$?
	set -e
	cat out
	[ "$rc" = 1 ] || fail "exit $rc for $1, expected 1"
}
cat > elastic.yaml <<'YEOF'
name: elastic
resources: {ranks: {min: 1, max: 6}}
train:
  batch: {global: {min: 128, max: 1024}}
YEOF
"$HUNTER" validate elastic.yaml > out || { cat out; fail "elastic job refused"; }
grep -q '^elastic.yaml: ok' out || fail "elastic job not reported ok"
cat > elastic-bad.yaml <<'YEOF'
name: elastic-bad
resources:
  ranks: {min: 4, mx: 2}
train:
  batch: {global: {min: 512, max: 64}}
program: {argv: [/bin/true]}
YEOF
refused elastic-bad.yaml
grep -q "^elastic-bad.yaml:3:19: unknown key 'mx' in resources.ranks (did you mean 'max'?)" out ||
	fail "elastic ranks: no did-you-mean"
grep -q "^elastic-bad.yaml:3:10: missing required key 'max' in resources.ranks" out ||
	fail "elastic ranks: missing max not reported"
grep -q "^elastic-bad.yaml:5:20: train.batch.global.min: must be <= train.batch.global.max (64), got 512" out ||
	fail "adaptive batch: min > max not reported"
cat > elastic-prog.yaml <<'YEOF'
name: elastic-prog
resources: {ranks: {min: 1, max: 4}}
program: {argv: [/bin/true]}
YEOF
refused elastic-prog.yaml
grep -q '^elastic-prog.yaml:2:13: resources.ranks: .*write program.elastic: true' out ||
	fail "program.elastic not asked for"
echo 'program: {argv: [/bin/true], elastic: true}' > elastic-prog2.yaml
sed -n 1,2p elastic-prog.yaml | sed 's/elastic-prog/elastic-prog2/' >> elastic-prog2.yaml
"$HUNTER" validate elastic-prog2.yaml > out || { cat out; fail "elastic program refused"; }
pass "validate reports every error"
