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
pass "validate reports every error"
