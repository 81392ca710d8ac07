#!/bin/sh
# Fault matrix 1: a worker dies at 10 different steps, one run each: 7
# injected aborts (--inject crash-at=STEP@RANK: before the first
# checkpoint, on a checkpoint step, at and after an epoch's end, on the
# last step, ranks 0..3) and 3 kill -9 by pid from the metrics frames at
# various points of a slowed run.  4 ranks, a checkpoint every 5 steps.
# Every run fails over to the spare exactly once, resumes from the
# newest checkpoint losing at most one interval, finishes, and every
# rank's final weights (params_crc32) are bit-identical to those of an
# undisturbed run from the same seed.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/faults/faults-lib.sh"
mkdata "$T/data" 2000 100
small_job "$T/base.yaml" kw "$T/data" 'policy: {failover: {heartbeat_timeout: 4s}}'
sed -i 's/ranks: 1/ranks: 4/; s/epochs: 2/epochs: 3/; s/global: 32, micro: 32/global: 64, micro: 16/; s/every_steps: 0/every_steps: 5/' "$T/base.yaml"

# The undisturbed run: 3 epochs of 31 steps.
plain_run "$T/base.yaml" "$T/plain"
want=$(final_crc "$T/plain" 4) || fail "undisturbed run: $want"
steps=$(jget "$T/plain" summary steps)
[ "$steps" = 93 ] || fail "the undisturbed run took $steps steps, expected 93"

# check OUT LABEL RANK SIGNAL STEP: the verdict on one disturbed run
# (STEP: where crash-at aborted; for a kill, the step its metrics showed
# just before, so the rank died at that step or a later one).
check() {
	"$PY" - "$1" "$2" "$3" "$4" "$5" "$want" "$steps" <<'PYEOF' || { grep -v '"t":"metrics"' "$1" | cut -c1-250 >&2; fail "$2: see above"; }
import json, re, sys
out, label, rank, sig, step, want, steps = sys.argv[1:]
rank, step, steps = int(rank), int(step), int(steps)
objs = []
for l in open(out):
    if l.startswith("{"):
        objs.append(json.loads(l))
ev = [o for o in objs if o["t"] == "event"]
fo = [o for o in ev if o["kind"] == "failover"]
dead = [o for o in ev if o["kind"] == "failed" and o["rank"] == rank
        and "signal %s" % sig in o["reason"]]
res = [o for o in ev if o["kind"] == "restarted" and o.get("generation") == 1]
fin = [o for o in ev if o["kind"] == "finished" and "params_crc32" in o]
summ = [o for o in objs if o["t"] == "summary"]
m = re.search(r"at step (\d+)", res[0]["reason"]) if res else None
back = int(m.group(1)) if m else 0
print("%-22s failover: %s | resumed at %s | %s" % (label,
      fo[0]["reason"].split(";")[1].strip() if fo else None,
      back if res else "0 (no checkpoint yet)",
      " ".join(sorted(set(o["params_crc32"] for o in fin)))))
assert dead, "no 'failed' event for rank %d with signal %s" % (rank, sig)
assert len(fo) == 1, "%d failover events, expected 1" % len(fo)
assert "rank %d moves to local3" % rank in fo[0]["reason"], fo[0]["reason"]
assert summ and summ[-1]["state"] == "finished", "summary: %s" % (summ[-1:] or None)
assert summ[-1]["steps"] == steps, "summary steps %s, expected %d" % (summ[-1]["steps"], steps)
if sig == "9":
    assert step - 5 <= back <= steps, "resumed at step %d after a kill at step %d or later" % (back, step)
else:
    assert 0 <= step - back <= 5, "resumed at step %d after dying at step %d" % (back, step)
assert sorted(o["rank"] for o in fin) == [0, 1, 2, 3], "finished: %r" % fin
assert all(o.get("generation") == 1 for o in fin), "finished from an old generation"
got = set(o["params_crc32"] for o in fin)
assert got == {want}, "final weights %s differ from the undisturbed run's %s" % (got, want)
PYEOF
}

n=0
# Injected aborts: STEP@RANK.
for c in 1@1 5@0 31@3 32@2 47@0 62@1 93@2; do
	n=$((n + 1))
	cp "$T/base.yaml" "$T/c$n.yaml"
	ckpt_dir_job "$T/c$n.yaml" "$T/ck/c$n"
	"$HUNTER" run --json --inject "crash-at=$c" "$T/c$n.yaml" > "$T/c$n" 2>&1 ||
		{ rc=$?; tail -n 5 "$T/c$n" | cut -c1-300; fail "crash-at=$c: hunter run exited $rc"; }
	check "$T/c$n" "crash-at=$c" "${c#*@}" 6 "${c%@*}"
done

# kill -9 by pid, once the rank's metrics reach a step, in a run slowed
# to about 60 ms a step so that the kill lands mid-run.
for c in 10@1 30@0 50@3; do
	n=$((n + 1))
	r=${c#*@}
	cp "$T/base.yaml" "$T/c$n.yaml"
	ckpt_dir_job "$T/c$n.yaml" "$T/ck/c$n"
	"$HUNTER" run --json --inject slow-data=60 "$T/c$n.yaml" > "$T/c$n" 2>&1 &
	run=$!
	cleanup_hooks="kill -9 $run 2>/dev/null || true"
	got=""
	reached() { got=$(rank_pid "$T/c$n" "$r" "${c%@*}"); [ -n "$got" ]; }
	poll_until 15 reached || { kill -9 $run; fail "kill at $c: rank $r never reached step ${c%@*}"; }
	kill -9 "${got% *}" || fail "kill -9 ${got% *}"
	rc=0
	wait $run || rc=$?
	cleanup_hooks=""
	[ $rc = 0 ] || { tail -n 5 "$T/c$n" | cut -c1-300; fail "kill at $c: hunter run exited $rc"; }
	# the kill lands at or after the step the metrics showed
	check "$T/c$n" "kill -9 at ${got#* }@$r" "$r" 9 "${got#* }"
done
pass "$n worker deaths, each failed over once and finished with weights $want"
