#!/bin/sh
# Fault matrix 6: the journal's last line is cut mid-record (as a crash
# mid-write leaves it) while the console is dead.  `hunter run --attach`
# starts, reports the cut as an event naming the journal and the line,
# keeps every record before it (it still knows the job: re-attaches to it
# by name with its ranks, follows it to its summary), and records written
# after the cut start on a line of their own.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/faults/faults-lib.sh"
mkdata "$T/data" 2000 100
small_job "$T/j.yaml" jcut "$T/data" 'policy: {failover: {heartbeat_timeout: 5s}}'
sed -i 's/ranks: 1/ranks: 2/; s/epochs: 2/epochs: 3/; s/micro: 32/micro: 16/; s/every_steps: 0/every_steps: 20/' "$T/j.yaml"
J="$HUNTER_STATE_DIR/journal.jsonl"
"$HUNTER" run --json --inject slow-data=30 "$T/j.yaml" > "$T/first" 2>&1 &
run=$!
cleanup_hooks="kill -9 \$run 2>/dev/null || true"
wait_for "$T/first" '"kind":"checkpoint".*step 40'
kill -9 $run
wait $run 2>/dev/null || true
lines=$(wc -l < "$J")
"$PY" - "$J" <<'PYEOF'
import sys
p = sys.argv[1]
b = open(p, "rb").read()
last = b.rstrip(b"\n").rfind(b"\n") + 1          # start of the last record
cut = last + (len(b) - last) // 2                # half of it stays
open(p, "wb").write(b[:cut])
print("cut the journal's line %d after %d of its %d bytes" % (b.count(b"\n"), cut - last, len(b) - last))
PYEOF
"$HUNTER" run --attach --json > "$T/second" 2>&1 ||
	{ rc=$?; tail -n 5 "$T/second" | cut -c1-300; fail "attach exited $rc"; }
"$PY" - "$T/second" "$J" "$lines" <<'PYEOF' || fail "see above"
import json, sys
out, journal, cutline = sys.argv[1], sys.argv[2], int(sys.argv[3])
objs = [json.loads(l) for l in open(out) if l.startswith("{")]
ev = [o for o in objs if o["t"] == "event"]
cut = [o for o in ev if "journal" in o["reason"] and "%s:%d" % (journal, cutline) in o["reason"]]
att = [o for o in ev if o["kind"] == "restarted" and "re-attached to jcut (2 ranks)" in o["reason"]]
summ = [o for o in objs if o["t"] == "summary" and o.get("job") == "jcut"]
print("cut reported: %s" % (cut[0]["reason"] if cut else None))
print("re-attached: %s; summary: %s" % (bool(att), summ[-1]["state"] if summ else None))
assert cut, "no event names the cut at %s:%d" % (journal, cutline)
assert att, "the job was not found again"
assert summ and summ[-1]["state"] == "finished", "not finished"
# every line of the journal but the cut one is a whole record, and the
# records after the cut did not run into it
bad = []
for n, line in enumerate(open(journal, "rb"), 1):
    try:
        assert isinstance(json.loads(line), dict)
    except Exception:
        bad.append(n)
print("journal lines that are not records: %s" % bad)
assert bad == [cutline], "expected only line %d to be broken, got %s" % (cutline, bad)
PYEOF
pass "the cut line was reported and skipped; the job was followed to its end"
