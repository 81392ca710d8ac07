#!/bin/sh
# Program check 6: autotune by trials.  A test program whose memory grows
# with the batch (1 MiB a sample) under memory_per_rank 64 MiB: trials of
# the whole group (HUNTER_MICRO_BATCH, HUNTER_TRIAL_STEPS) find the
# largest micro-batch that fits in at most ceil(log2(max/min)) + 2
# trials, the agent killing a rank whose RSS goes over; the run uses it,
# the journal keeps it, and --resume does not tune again.  The other two
# ways a trial runs out of memory: PyTorch's words on stderr, and the
# declared exit status.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/integration/program-lib.sh"
cat > "$T/mem.py" <<'EOF2'
import sys, time
import hunter_client as hunter
h = hunter.Client()
mb = h.env.micro_batch or 1
mode, limit = sys.argv[1], int(sys.argv[2])
if mode == "words" and mb > limit:
    sys.stderr.write("RuntimeError: [enforce fail at alloc_cpu.cpp:75] "
                     "DefaultCPUAllocator: can't allocate memory: you tried "
                     "to allocate %d bytes. Error code 12\n" % (mb << 20))
    sys.exit(1)
if mode == "code" and mb > limit:
    sys.exit(42)
batch = b"x" * (mb << 20)          # resident: 1 MiB a sample
steps = h.env.trial_steps or 10
for s in range(1, steps + 1):
    time.sleep(0.03)
    h.metrics(s, loss=1.0 / s, samples=s * mb, micro_batch=mb, force=s == steps)
print("ran with micro-batch %d" % mb)
EOF2
job() {	# NAME MODE LIMIT MIN MAX [YAML]
	cat > "$T/$1.yaml" <<EOF2
name: $1
resources: {ranks: 2, memory_per_rank: 64MiB}
program:
  argv: [$PY, mem.py, $2, "$3"]
  batch: {micro: auto, min: $4, max: $5, trial_steps: 10}
  ${6:-}
EOF2
}
check() {	# NAME MIN MAX WANT WORDS
	"$PY" - "$T/$1.out" "$HUNTER_STATE_DIR/journal.jsonl" "$2" "$3" "$4" "$5" <<'PYEOF'
import json, math, sys
out, journal = sys.argv[1], sys.argv[2]
lo, hi, want, words = int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
o = [json.loads(l) for l in open(out) if l.startswith("{")]
tune = [x for x in o if x["t"] == "autotune"][-1]
rec = [json.loads(l) for l in open(journal)]
assert any(r["t"] == "autotune" and r["job"] == tune["job"] for r in rec)
m, trials = tune["micro_batch"], tune["trials"]
bound = math.ceil(math.log2(hi / lo)) + 2
print("%s: micro-batch %d after %d trials (at most %d): %s" % (tune["job"], m,
      len(trials), bound, ", ".join("%d %s" % (t["size"], "fits (%.0f/s)" %
                                    t["samples_per_s"] if t["fit"] else "no")
                                    for t in trials)))
assert len(trials) <= bound
fit = {t["size"]: t["fit"] for t in trials}
assert fit[m] and (m == hi or fit.get(m + lo) is False), fit
if want != "-":
    assert m == int(want), (m, want)
else:
    assert m * 1048576 < 64 * 1048576
why = [t["why"] for t in trials if not t["fit"]]
print("  out of memory: %s" % why[0])
assert all(words in w for w in why)
gen = len(trials)
ran = [x["line"] for x in o if x["t"] == "log" and x.get("generation") == gen]
print("  the run (generation %d): %s" % (gen, ran))
assert ran.count("ran with micro-batch %d" % m) == 2
s = [x for x in o if x["t"] == "summary"][-1]
assert s["state"] == "finished", s
print(m)
PYEOF
}

# tuned NAME TIMEOUT [ARGS]: hunter run --json ARGS NAME.yaml into $T/NAME.out;
# a run that fails says its status and the job's failure in the FAIL line.
tuned() {
	_n=$1 _t=$2
	shift 2
	( cd "$T" && timeout "$_t" "$HUNTER" run --json "$@" "$_n.yaml" > "$T/$_n.out" 2>&1 ) && return 0
	_rc=$?
	tail -n 20 "$T/$_n.out"
	fail "the $_n run ${*:+($*) }exited $_rc: $("$PY" - "$T/$_n.out" <<'PYEOF'
import json, sys
o = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
why = [x.get("reason", "") for x in o if x.get("t") == "event" and
       x.get("kind") in ("failed", "autotune")]
s = [x for x in o if x.get("t") == "summary"]
print("summary %s; last first: %s" % (s[-1].get("state") if s else "none",
      " / ".join(reversed(why[-3:]))))
PYEOF
)"
}

job rss rss 0 1 128
tuned rss 200
m=$(check rss 1 128 - "over memory_per_rank" | tee /dev/stderr | tail -n 1) ||
	fail "the rss trials, see above"
tuned rss 100 --resume
"$PY" - "$T/rss.out" "$m" <<'PYEOF' || fail "the resume tuned again"
import json, sys
o = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
assert not any(x["t"] == "autotune" for x in o)
ev = [x["reason"] for x in o if x["t"] == "event" and x["kind"] == "autotune"]
ran = [x["line"] for x in o if x["t"] == "log" and x["line"].startswith("ran")]
print("resume: %s; %s" % (ev, ran))
assert ev and "as tuned before" in ev[0] and ran == ["ran with micro-batch %s" % sys.argv[2]] * 2
PYEOF

job words words 24 8 64
tuned words 200
check words 8 64 24 "DefaultCPUAllocator" >&2 || fail "the words trials"
job code code 40 8 64 "oom_exit_code: 42"
tuned code 200
check code 8 64 40 "program.oom_exit_code" >&2 || fail "the code trials"
pass "autotune by trials: micro-batch $m under 64 MiB, used, journalled, not tuned again"
