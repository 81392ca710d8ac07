#!/bin/sh
# A job that cannot start (issue: "the first hour", item 4): on this
# machine's nodes, hunter run checks what hunter validate checks before
# anything is placed, so a job whose data is missing ends at once with
# the cause and is never placed; and a rank that fails before its first
# step again after its failover to the spare (a program whose module is
# missing) ends the job, the rank's own last line in the reason, instead
# of failing over for ever.
. "$SRCDIR/tests/integration/lib.sh"
small_job "$T/nodata.yaml" nodata "$T/no-such-dir"
set +e
"$HUNTER" run --json "$T/nodata.yaml" > "$T/out1" 2> "$T/err1"
rc=$?
set -e
[ "$rc" = 1 ] || { cat "$T/out1" "$T/err1"; fail "a job without its data exited $rc, expected 1"; }
grep -q "nodata.yaml: data: .*no-such-dir/train-images-idx3-ubyte: No such file" "$T/err1" ||
	{ cat "$T/err1"; fail "the missing data is not named"; }
! grep -q '"kind":"placed"' "$T/out1" || fail "a job without its data was placed"
echo "missing data: $(cat "$T/err1")"

cat > "$T/nomod.yaml" <<YEOF
name: nomod
resources: {ranks: 1}
program: {argv: [/usr/bin/python3, -c, "import hunter_no_such_module_xyz"]}
YEOF
set +e
"$HUNTER" run --json "$T/nomod.yaml" > "$T/out2" 2>&1
rc=$?
set -e
"$PY" - "$T/out2" "$rc" <<'PYEOF' || { grep -v '"metrics"' "$T/out2" | cut -c1-300; fail "see above"; }
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
ev = [o for o in objs if o["t"] == "event" and o.get("job") == "nomod"]
fo = [o["reason"] for o in ev if o["kind"] == "failover"]
s = [o for o in objs if o["t"] == "summary"][-1]
print("exit %s; failovers: %s" % (sys.argv[2], fo))
print("summary: %s: %s" % (s["state"], s.get("reason")))
assert sys.argv[2] == "1", "exit status %s" % sys.argv[2]
assert s["state"] == "failed", s
assert len(fo) == 1, fo                 # to the spare once, no more
assert "before its first step" in s["reason"], s["reason"]
assert "ModuleNotFoundError" in s["reason"], s["reason"]
PYEOF
pass "a job that cannot start ends with its cause, placed at most twice"
