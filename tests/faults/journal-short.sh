#!/bin/sh
# Issue 27, items 7 and 5: short writes of the journal and the series.
# A running backend gets a file-size limit (prlimit --fsize) just past
# its journal's size, so the next records come back short or refused
# (EFBIG), as on a full disk; three commands make records; the limit is
# lifted and one more command is sent, then a stop.  Before, a short write
# was left as it was and the next record glued onto it (line 3 became
# {"t":"event","job":"no-su{"t":"event",...}), replay skipped the merged
# line, and the series file did the same; the only word was about the
# end of the job.  Now:
#  - every line of the journal and of the series is a whole JSON object;
#  - the failure is reported once, as an event naming the journal and the
#    error, and so is the recovery, with the count of records lost;
#  - the records after the recovery (the last command, the job's end) are
#    there;
#  - a series line cut by a crash (written here) does not glue onto the
#    next run's first record: after a --resume, `hunter report` reads the
#    series without a bad line.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/faults/faults-lib.sh"
command -v prlimit > /dev/null || { echo "skip: no prlimit"; exit 77; }
mkdata "$T/data" 1024 32
small_job "$T/j.yaml" shortw "$T/data"
sed -i 's/epochs: 2/epochs: 40/' "$T/j.yaml"
J="$HUNTER_STATE_DIR/journal.jsonl"
S="$HUNTER_STATE_DIR/series/shortw.jsonl"
# Its output through a pipe: a file would be under the limit too.
mkfifo "$T/pipe"
cat "$T/pipe" > "$T/out" &
"$HUNTER" run --json --inject slow=15 "$T/j.yaml" > "$T/pipe" 2>&1 &
run=$!
cleanup_hooks="kill $run 2>/dev/null || true"
wait_for "$T/out" '"t":"metrics".*"scope":"rank"' 30
size=$(stat -c %s "$J")
prlimit --pid $run --fsize=$((size + 60)): || fail "prlimit refused"
for c in checkpoint pause resume; do
	"$HUNTER" ctl shortw $c > /dev/null || fail "hunter ctl $c was refused"
done
wait_for "$T/out" '"kind":"resumed"' 20
kill -0 $run || fail "the backend died under the file-size limit"
prlimit --pid $run --fsize=unlimited: || fail "prlimit refused to lift the limit"
"$HUNTER" ctl shortw checkpoint > /dev/null || fail "hunter ctl checkpoint was refused"
wait_for "$T/out" 'writing again' 20
"$HUNTER" ctl shortw stop > /dev/null || fail "hunter ctl stop was refused"
rc=0
wait $run || rc=$?
[ "$(jget "$T/out" summary state)" = stopped ] || { tail -n 3 "$T/out"; fail "the job did not stop (exit $rc)"; }
"$PY" - "$T/out" "$J" "$S" <<'PYEOF' || fail "see above"
import json, sys
out, journal, series = sys.argv[1:]
ev = [json.loads(l) for l in open(out) if l.startswith("{")]
ev = [o for o in ev if o.get("t") == "event" and "journal " + journal in o.get("reason", "")]
for o in ev:
    print("event: %s" % o["reason"])
down = [o for o in ev if "was not written" in o["reason"]]
up = [o for o in ev if "writing again" in o["reason"]]
assert len(down) == 1, "%d events about the failure, not one" % len(down)
assert "File too large" in down[0]["reason"], down[0]["reason"]
assert len(up) == 1 and " lost" in up[0]["reason"], up
for path in (journal, series):
    bad = []
    for n, line in enumerate(open(path, "rb"), 1):
        try:
            assert isinstance(json.loads(line), dict)
        except Exception:
            bad.append((n, line[:80]))
    print("%s: %d lines, not whole: %s" % (path.rsplit("/", 1)[1],
          n, bad))
    assert not bad, "lines of %s that are not records: %s" % (path, bad)
recs = [json.loads(l) for l in open(journal)]
assert recs[-1].get("t") == "job_end" and recs[-1].get("job") == "shortw", recs[-1]
PYEOF
# A crash mid-line in the series, then a resume that appends to it.
printf '{"t":"metrics","rank":0,"ste' >> "$S"
rc=0
"$HUNTER" run --json --resume "$T/j.yaml" > "$T/out2" 2>&1 || rc=$?
[ $rc = 0 ] || { tail -n 3 "$T/out2" | cut -c1-300; fail "the resume exited $rc"; }
(cd "$T" && "$HUNTER" report shortw) > "$T/report" 2>&1 || { cat "$T/report"; fail "hunter report"; }
cat "$T/report"
! grep -q "not a JSON object\|cut short" "$T/report" || fail "the series has a bad line after the resume"
pass "short writes cut back to whole records, reported once each way; a cut series line dropped"
