#!/bin/sh
# Issue 21: one long error reason must not crash the backend.  A node's
# agent (fakeagent.py) sends an error frame whose reason is 4,000 bytes of
# three-byte characters.  The backend cut it to its 1 KiB buffer in the
# middle of a character, jansson refused the string, and journal_append
# was handed NULL: SIGSEGV.  Now the job on that node runs to the end,
# and the event shows the reason cut on a character boundary, in the
# stream and in the journal.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/integration/reason-lib.sh"
long_reason_setup
rc=0
timeout 60 "$HUNTER" run --json --cluster "$T/cluster.yaml" "$T/j.yaml" \
	> "$T/out" 2> "$T/err" || rc=$?
[ $rc -eq 0 ] || { tail -n 5 "$T/out" "$T/err"; fail "hunter run exited $rc (139 is the SIGSEGV)"; }
"$PY" - "$T/out" "$HUNTER_STATE_DIR/journal.jsonl" <<'PYEOF' || fail "see above"
import json, sys
sent = "node bad: " + "\u20ac" * 1334
for path in sys.argv[1:]:
    lines = [json.loads(l) for l in open(path, encoding="utf-8")
             if l.startswith("{")]
    reasons = [o["reason"] for o in lines if o.get("t") == "event" and
               o.get("node") == "bad" and o.get("reason", "").startswith("node bad: \u20ac")]
    assert reasons, "%s: no event with the reason" % path
    r = reasons[0]
    n = len(r.encode("utf-8"))
    print("%s: the reason is %d bytes, %d characters" % (path, n, len(r)))
    assert sent.startswith(r), "not a prefix of what was sent"
    assert 1000 <= n <= 1023, "cut at %d bytes" % n
summary = [o for o in map(json.loads, (l for l in open(sys.argv[1]) if l.startswith("{")))
           if o["t"] == "summary"][-1]
assert summary["state"] == "finished", summary
PYEOF
pass "a 4,000-byte multi-byte error reason is cut on a character boundary, and the job runs"
