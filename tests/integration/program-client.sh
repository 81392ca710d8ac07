#!/bin/sh
# The Python client installs with pip into a venv straight from the
# source tree (offline: its build backend is its own, standard library
# only), writing nothing into the tree (no build/, no egg-info); a
# program that imports it from there, with no PYTHONPATH, reports to
# hunter: its steps and its own number reach `hunter run --json`, and
# the metrics call just before the summary arrives even though it came
# within the client's rate.
. "$SRCDIR/tests/integration/lib.sh"
# The tree's files, but __pycache__: other tests import the client from
# the tree meanwhile.
tree() { (cd "$SRCDIR/clients/python" && find . | grep -v __pycache__ | sort); }
tree > "$T/before"
"$PY" -m venv "$T/venv" || fail "no venv (python3-venv)"
timeout 120 "$T/venv/bin/pip" install -q --no-index \
    "$SRCDIR/clients/python" > "$T/pip.out" 2>&1 || { tail -n 20 "$T/pip.out"; fail "pip install failed"; }
tree > "$T/after"
diff "$T/before" "$T/after" || fail "pip install wrote into the source tree"
cat > "$T/prog.py" <<'PYEOF'
import time
import hunter_client as hunter
h = hunter.Client(every=0)
assert h.active and h.env.world_size == 1, h.env.world_size
for step in range(1, 31):
    time.sleep(0.02)
    h.metrics(step, loss=1.0 / step, samples=8 * step, answer=42)
h.every = 60
h.metrics(31, loss=0.01, rare=7)     # within the rate: held, not lost
h.summary(test_acc=0.5)
print("client from", hunter.__file__)
PYEOF
cat > "$T/j.yaml" <<YEOF
name: venv
resources: {ranks: 1}
program:
  argv: [$T/venv/bin/python, prog.py]
YEOF
env -u PYTHONPATH timeout 60 "$HUNTER" run --json "$T/j.yaml" > "$T/out" 2>&1 ||
	{ tail -n 20 "$T/out"; fail "the job did not finish"; }
grep -q "client from $T/venv/" "$T/out" || { grep '"log"' "$T/out" | tail -n 3; fail "the client did not come from the venv"; }
grep '"t":"metrics"' "$T/out" | grep -v '"beat"' | tail -n 1 | cut -c1-200
grep -q '"extra":{"answer":42' "$T/out" || fail "no extra number in the metrics"
grep '"t":"metrics"' "$T/out" | grep -q '"step":31.*"rare":7' ||
	fail "the last metrics call, held by the rate, never arrived"
grep -q '"t":"summary".*"state":"finished"' "$T/out" || fail "not finished"
pass "pip install from the tree into a venv, the tree untouched; a program using it reports to hunter, its last metrics too"
