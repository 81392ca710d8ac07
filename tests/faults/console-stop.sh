#!/bin/sh
# Fault matrix, issue 21 check 5: a stopped console never stops
# training.  Two ranks on one node (placement: pack, so one agent relays
# both) print 2,000 lines a second from their train loop (--inject
# log-flood), and the console (hunter run, which holds the backend) is
# stopped with SIGSTOP for 40 s: long enough for the lines the agent
# relays (20 a rank a second, with the metrics some 10 kB/s) to fill the
# agent -> backend socket (some 250 frames), then the agent's queue (128
# KiB), after which the agent drops and says so in its log.  Before the
# links were queued the agent then blocked on the backend's socket,
# stopped reading its workers' output, and the ranks blocked on their
# full stderr pipe: the step stood still until SIGCONT.
#
# The step rate is read off what the agent wrote to the ranks' log files
# (each flood line names its step and the time) and, independently, off
# the checkpoints' times: during the stop it must stay at half the rate
# before it or more (the machine is shared), and so must the part of the
# stop after the agent began to drop (every buffer on the way full),
# which must be 10 s or more.  After SIGCONT the console catches up
# (metrics of steps past the stop), reports what the agent dropped (a
# "dropped" event with the counts), no rank is failed over for the
# console's own silence, and the job stops cleanly on request.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/faults/faults-lib.sh"
mkdata "$T/data" 2000 100
small_job "$T/j.yaml" cstop "$T/data"
ckdir="$T/ck"
sed -i 's/ranks: 1/ranks: 2, placement: pack/; s/epochs: 2/epochs: 1000/; s/micro: 32/micro: 16/; s/every_steps: 0, keep: 3/every_steps: 50, keep: 1000/' "$T/j.yaml"
ckpt_dir_job "$T/j.yaml" "$ckdir"
STOP_S=${CONSOLE_STOP_S:-40}

now() { date +%s.%N; }
# About 20 ms a step: some 50 steps a second.
"$HUNTER" run --json --inject slow-data=20 --inject log-flood=2000 "$T/j.yaml" > "$T/out" 2> "$T/err" &
run=$!
cleanup_hooks="kill -CONT \$run 2>/dev/null || true; kill -9 \$run 2>/dev/null || true"
wait_for "$T/out" '"t":"metrics".*"rank":1,' 300
sleep 6
t_stop=$(now)
kill -STOP $run
echo "stopped the console (pid $run) for $STOP_S s"
sleep "$STOP_S"
t_cont=$(now)
kill -CONT $run
echo "continued it"
sleep 6
t_after=$(now)
# the agent reports its drops once the backend has caught up (judged
# below with the rest)
poll_until 30 grep -q '"kind":"dropped"' "$T/out" || true
"$HUNTER" ctl cstop stop > /dev/null || fail "hunter ctl cstop stop"
rc=0
wait $run || rc=$?
cleanup_hooks=""
[ $rc = 0 ] || { tail -n 5 "$T/out" | cut -c1-300; tail -n 5 "$T/err"; fail "hunter run exited $rc"; }
"$PY" - "$T/out" "$HUNTER_STATE_DIR/nodes" "$ckdir" "$t_stop" "$t_cont" "$t_after" <<'PYEOF' || fail "see above"
import glob, json, os, re, sys, time
out, nodes, ckdir = sys.argv[1:4]
t_stop, t_cont, t_after = map(float, sys.argv[4:7])
line_re = re.compile(r"^log-flood \d+: rank 0 step (\d+) at (\d+\.\d+) ")
# when the agent began to drop: the buffers on the way were full
full = []
for f in glob.glob(os.path.join(nodes, "*", "agent.log")):
    for l in open(f, errors="replace"):
        if "the backend reads nothing" in l:
            full.append(time.mktime(time.strptime(l[:19], "%Y-%m-%dT%H:%M:%S")))
            print("agent:", l.strip())
# (the log says the second: the drops began within the next)
t_full = min(full) + 1 if full else t_cont
pts = []
for f in glob.glob(os.path.join(nodes, "*", "cstop.rank0.log")):
    for l in open(f, errors="replace"):
        m = line_re.match(l)
        if m:
            pts.append((float(m.group(2)), int(m.group(1))))
pts.sort()
ck = sorted((os.stat(p).st_mtime, int(re.search(r"step-0*(\d+)", p).group(1)))
            for p in glob.glob(os.path.join(ckdir, "step-*.safetensors")))

def rate(series, a, b):
    s = [st for t, st in series if a <= t <= b]
    if len(s) < 2:
        return 0.0
    return (s[-1] - s[0]) / (b - a)

w = [("before", t_stop - 5, t_stop), ("during", t_stop, t_cont),
     ("buffers full", t_full, t_cont), ("after", t_cont, t_after)]
lr = {n: rate(pts, a, b) for n, a, b in w}
cr = {n: rate(ck, a, b) for n, a, b in w}
for n, a, b in w:
    print("steps/s %-16s rank log %6.1f   checkpoints %6.1f" % (n, lr[n], cr[n]))
objs = [json.loads(l) for l in open(out) if l.startswith("{")]
drop = [o for o in objs if o["t"] == "event" and o.get("kind") == "dropped"]
for o in drop:
    print("dropped event: %s %s" % (o.get("reason"), o.get("dropped")))
seen = [o["step"] for o in objs if o["t"] == "metrics" and o.get("job") == "cstop" and "step" in o]
at_stop = max([st for t, st in pts if t <= t_stop] or [0])
print("console: newest step %s, step at the stop %d" % (max(seen or [0]), at_stop))
fo = [o for o in objs if o["t"] == "event" and o.get("kind") in ("failover", "failed")]
summ = [o for o in objs if o["t"] == "summary"]
assert lr["before"] > 5, "the job hardly ran before the stop"
assert lr["during"] >= 0.5 * lr["before"], "the step slowed down during the stop"
print("the agent began to drop %.1f s into the stop, %.1f s before its end"
      % (t_full - t_stop, t_cont - t_full))
assert full, "the agent never dropped: the stop did not fill the buffers"
assert t_cont - t_full >= 10, "the buffers filled too late in the stop"
assert lr["buffers full"] >= 0.5 * lr["before"], "the step stalled once the buffers were full"
assert len(ck) >= 4 and cr["during"] >= 0.5 * cr["before"], "checkpoints stalled during the stop"
assert max(seen or [0]) > at_stop + 100, "the console did not catch up"
assert drop and sum(sum(o["dropped"].values()) for o in drop) > 0, "no drop reported"
assert not fo, "failed over for the console's stop: %s" % fo[0]["reason"]
assert summ and summ[-1]["state"] == "stopped", "summary %s" % summ[-1:]
PYEOF
pass "the step went on while the console was stopped for $STOP_S s; the drops were reported"
