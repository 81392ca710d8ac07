#!/bin/sh
# BLAS check 2 (issue 26): the MFU is measured against the cached sgemm
# peak of the kernel and threads the rank runs, never another's, and is
# never above 100%.  A gpt job, four times, on one state directory:
#  - nothing cached: no peak and no MFU in the rank's metrics;
#  - only another kernel's peak cached (a Prescott figure of 0.01
#    GFLOP/s, left from before the kernel was put right): still none, where
#    a peak read without its key would give an MFU in the thousands;
#  - `hunter bench sgemm` (HUNTER_BENCH_QUICK) cached this kernel's: the
#    metrics carry exactly that peak and an MFU in (0, 1];
#  - this kernel's figure made too low (0.01 GFLOP/s, as a peak measured
#    under load could be): the MFU is unknown, never above 1, and a
#    warning says to measure the peak again.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/integration/gpt-lib.sh"
gpt_text "$T/text.txt" 100000
gpt_job "$T/g.yaml" mfu "$T/text.txt" 1 ""
peaks="$HUNTER_STATE_DIR/bench/sgemm-peak"
run() {	# LABEL
	"$HUNTER" run --json "$T/g.yaml" > "$T/$1" 2>&1 ||
		{ rc=$?; tail -n 5 "$T/$1"; fail "run $1 exited $rc"; }
}
# key FIELD: the worker's started event's FIELD, from the first run
key() {
	"$PY" -c 'import json, sys
print([o for o in map(json.loads, open(sys.argv[1])) if o.get("t") == "event"
       and o["kind"] == "started"][0][sys.argv[2]])' "$T/r0" "$1"
}
run r0
other=Prescott
[ "$(key kernel)" = Prescott ] && other=SkylakeX
mkdir -p "$HUNTER_STATE_DIR/bench"
printf '0.010\t%s\t%s\t%s\t%s\n' "$(key cpu)" "$(key blas)" "$other" \
	"$(key blas_threads)" > "$peaks"
run r1
HUNTER_BENCH_QUICK=1 "$HUNTER" bench sgemm > "$T/bench" 2>&1 ||
	{ rc=$?; cat "$T/bench"; fail "hunter bench sgemm exited $rc"; }
run r2
"$PY" - "$peaks" "$(key kernel)" "$(key blas_threads)" <<'PYEOF' || fail "no peak cached for the kernel"
import sys
lines = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
assert any(l[3] == sys.argv[2] and l[4] == sys.argv[3] for l in lines), lines
PYEOF
cp "$peaks" "$T/peaks-measured"
"$PY" - "$peaks" "$(key kernel)" "$(key blas_threads)" <<'PYEOF'
import sys
lines = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
out = ["\t".join(["0.010"] + l[1:]) if l[3] == sys.argv[2] and
       l[4] == sys.argv[3] else "\t".join(l) for l in lines]
open(sys.argv[1], "w").write("\n".join(out) + "\n")
PYEOF
run r3
"$PY" - "$T" "$(key kernel)" <<'PYEOF' || fail "see above"
import json, sys
t, kernel = sys.argv[1], sys.argv[2]
def frames(label):
    return [json.loads(l) for l in open("%s/%s" % (t, label)) if l.startswith("{")]
def ranks(label):
    m = [o for o in frames(label) if o["t"] == "metrics" and
         o.get("scope") == "rank" and not o.get("beat")]
    assert m, label
    return m
cached = [l.split("\t") for l in open(t + "/peaks-measured")]
print(open(t + "/bench").read().strip())
for label in ("r0", "r1", "r2", "r3"):
    m = ranks(label)
    print("%s: peak %s, MFU %s" % (label, sorted({o.get("peak_gflops") for o in m},
          key=str), [round(o["mfu"], 4) for o in m if "mfu" in o]))
    assert [o for o in frames(label) if o["t"] == "summary"][-1]["state"] == "finished"
    assert all(0 < o["mfu"] <= 1 for o in m if "mfu" in o), label
for label in ("r0", "r1"):
    assert not any("peak_gflops" in o or "mfu" in o for o in ranks(label)), label
m = ranks("r2")
mine = [float(l[0]) for l in cached if l[3] == kernel]
assert all(o.get("peak_gflops") in mine for o in m), (mine, m[0])
assert any("mfu" in o for o in m)
m = ranks("r3")
assert all(o.get("peak_gflops") == 0.01 and "mfu" not in o for o in m)
warn = [o for o in frames("r3") if o["t"] == "event" and o["kind"] == "warning"]
print("warning: %s" % (warn[0]["reason"] if warn else None))
assert warn and "below what the job reaches" in warn[0]["reason"] and kernel in warn[0]["reason"]
PYEOF
pass "the MFU uses its own kernel's peak only, and never shows above 100%"
