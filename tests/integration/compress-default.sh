#!/bin/sh
# The compression default is a dense exchange (hunter(1), JOB FILES): a
# 2-rank job without a compression key says so in its started events and
# sends what dense would; one that asks for top-k gets it, and its
# started events give the method and the density.  A compression block
# that sets a density but no method is refused, not silently dense.
. "$SRCDIR/tests/integration/lib.sh"
mkdata "$T/data" 256 64
small_job "$T/d.yaml" cdefault "$T/data"
sed -i 's/ranks: 1/ranks: 2/; s/micro: 32/micro: 16/; s/epochs: 2/epochs: 1/; /^compression:/d' "$T/d.yaml"
grep -q compression "$T/d.yaml" && fail "the job still names a compression"
sed 's/name: cdefault/name: ctopk/' "$T/d.yaml" > "$T/k.yaml"
echo 'compression: {method: topk, density: 0.01, warmup_epochs: 0}' >> "$T/k.yaml"
"$HUNTER" run --json "$T/d.yaml" > "$T/d.out" 2>&1 || { rc=$?; tail "$T/d.out"; fail "dense run exited $rc"; }
"$HUNTER" run "$T/k.yaml" > "$T/k.out" 2>&1 || { rc=$?; tail "$T/k.out"; fail "topk run exited $rc"; }
"$PY" - "$T/d.out" <<'PYEOF' || fail "see above"
import json, sys
o = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
st = [x for x in o if x["t"] == "event" and x["kind"] == "started"]
s = [x for x in o if x["t"] == "summary"][-1]
print("started: %s" % st[0]["reason"])
assert len(st) == 2, st
assert all("dense exchange (compression none)" in x["reason"] for x in st), st
assert s["bytes_sent"] >= s["bytes_dense"] > 0, s   # plus the control floats
PYEOF
grep '^\[started\] rank 0' "$T/k.out"
grep -q '^\[started\] rank 0: ctopk: .*compression topk at density 0.01 (no warm-up)' "$T/k.out" ||
	{ cat "$T/k.out"; fail "the top-k job's start line does not say its compression"; }
printf 'name: x\ncompression: {density: 0.01}\n' > "$T/bad.yaml"
set +e
"$HUNTER" validate "$T/bad.yaml" > "$T/bad.out" 2>&1
rc=$?
set -e
[ "$rc" = 1 ] && grep -q "bad.yaml:2:15: compression.density: applies to method topk or threshold, and the method defaults to none" "$T/bad.out" ||
	{ cat "$T/bad.out"; fail "a density without a method: exit $rc"; }
pass "no compression key: dense, said when it starts; top-k said with its density"
