#!/bin/sh
# The mistakes of a first hour get a message that says what to do: an
# unknown key gets the key that was meant (learning_rate: lr, batch_size:
# batch), a program whose script is not there fails validate with the
# argument's place, and a node at host: localhost that nobody answers
# over SSH says that only host: local runs a node here without SSH.
. "$SRCDIR/tests/integration/lib.sh"
cd "$T"
cat > keys.yaml <<'YEOF'
name: keys
train:
  learning_rate: 0.1
  batch_size: 64
YEOF
mkdir dir
cat > prog.yaml <<YEOF
name: prog
program:
  argv: [$PY, -u, trian.py, --epochs, "3"]
YEOF
printf 'name: prog2\nprogram: {argv: [sh, dir]}\n' > prog2.yaml
printf 'name: ok\nprogram: {argv: [sh, -c, "exit 0"]}\n' > ok.yaml
set +e
"$HUNTER" validate keys.yaml prog.yaml prog2.yaml ok.yaml > out 2>&1
rc=$?
set -e
cat out
[ "$rc" = 1 ] || fail "validate exited $rc"
grep -q "^keys.yaml:3:3: unknown key 'learning_rate' in train (did you mean 'lr'?)" out || fail "learning_rate"
grep -q "^keys.yaml:4:3: unknown key 'batch_size' in train (did you mean 'batch'?)" out || fail "batch_size"
grep -q "^prog.yaml:3:[0-9]*: program.argv\[2\]: the script 'trian.py' that $PY runs is not a file on this node ($T/trian.py: No such file or directory" out ||
	fail "the missing script"
grep -q "^prog2.yaml:2:[0-9]*: program.argv\[1\]: the script 'dir' that sh runs is not a file on this node ($T/dir: is a directory" out ||
	fail "a directory as the script"
grep -q "^ok.yaml: ok" out || fail "sh -c is a command, not a script"
port=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf 'cluster: mine\nnodes:\n  - {name: n1, host: localhost, port: %s}\n' "$port" > cl.yaml
set +e
timeout 30 "$HUNTER" check --cluster cl.yaml > chk 2>&1
rc=$?
set -e
cat chk
[ "$rc" = 1 ] && grep -q "node n1: cannot reach \[localhost\]:$port: .*host: local runs the node on this machine without SSH" chk ||
	fail "host: localhost without a hint (exit $rc)"
pass "did you mean lr and batch; a missing script; host: localhost's hint"
