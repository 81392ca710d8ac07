# program-lib.sh: shared by the tests of program jobs, after lib.sh.  The
# programs are the PyTorch example (examples/programs/torch_fmnist.py,
# Debian's python3-torch under /usr/bin/python3) and small shell and
# Python programs the tests write; the client comes from the tree.
export PYTHONPATH="$SRCDIR/clients/python${PYTHONPATH:+:$PYTHONPATH}"
EXAMPLE="$SRCDIR/examples/programs/torch_fmnist.py"

need_torch() {
	"$PY" -c 'import torch, numpy' 2>/dev/null ||
		fail "python3-torch and python3-numpy are not installed for $PY (./bootstrap installs them)"
}

# torch_job FILE NAME ARGS [YAML]: a 2-rank job of the example; ARGS go
# to the script (a YAML flow list's items), YAML is appended.
torch_job() {
	cat > "$1" <<YEOF
name: $2
resources: {ranks: 2}
program:
  argv: [$PY, $EXAMPLE, $3]
  env: {OMP_NUM_THREADS: "1", OPENBLAS_NUM_THREADS: "1"}
  stop_grace: 20s
${4:-}
YEOF
}

# jwait FILE SECONDS EXPR: until the Python expression EXPR holds over the
# JSON lines of FILE (as the list o), SECONDS at most; fails the test with
# the expression and the file's last lines when it does not.
jwait() {
	"$PY" - "$@" <<'PYEOF' || fail "waited $2 s for: $3"
import json, sys, time
path, secs, expr = sys.argv[1], float(sys.argv[2]), sys.argv[3]
end = time.monotonic() + secs
while True:
    o = []
    try:
        for line in open(path):
            if line.startswith("{"):
                try:
                    o.append(json.loads(line))
                except ValueError:
                    pass
    except OSError:
        pass
    if eval(expr, {"o": o, "ev": [x for x in o if x["t"] == "event"]}):
        sys.exit(0)
    if time.monotonic() > end:
        for line in open(path).readlines()[-8:]:
            sys.stderr.write(line[:300] + ("\n" if not line.endswith("\n") else ""))
        sys.exit(1)
    time.sleep(0.2)
PYEOF
}

# steps FILE RANK: the newest step rank RANK reported (metrics, no beats).
steps() {
	"$PY" - "$1" "$2" <<'PYEOF'
import json, sys
s = 0
for line in open(sys.argv[1]):
    if line.startswith('{"t":"metrics"'):
        o = json.loads(line)
        if o.get("rank") == int(sys.argv[2]) and not o.get("beat") and "step" in o:
            s = o["step"]
print(s)
PYEOF
}
