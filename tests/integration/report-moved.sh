#!/bin/sh
# Issue 29 item 5: `hunter report` shows what moved on the nodes.  A
# job's saved series is written here by hand, as the backend writes it:
# node lines every 10 s of a node whose CPU goes from 10% to 90%, whose
# memory holds (a few bytes up and down), whose GPU's temperature climbs
# 40 to 70 C while its power holds, and a rank whose threads go 4 to 9.
# The page's "What moved on the nodes" lists exactly the metrics that
# moved, with their least, largest and last values, and none that held.
. "$SRCDIR/tests/integration/lib.sh"
mkdir -p "$HUNTER_STATE_DIR/series"
"$PY" - "$HUNTER_STATE_DIR/series/mv.jsonl" <<'PYEOF'
import json, sys
t0 = 1790000000.0
out = [{"t": "series", "job": "mv", "run": 1, "ts": t0, "format": 1}]
for i in range(6):
    out.append({"t": "node", "node": "n1", "ts": t0 + 10 * i, "time": t0 + 10 * i,
                "cpu_util": 10 + 16 * i, "mem_used": 8e9 + (i % 2) * 4096,
                "mem_total": 16e9, "load1": 2.0, "power": None,
                "gpus": {"index": [0], "name": ["G"], "temp": [40 + 6 * i],
                         "power": [300.0], "procs": [[]]},
                "ranks": [{"rank": 0, "threads": 4 + i, "fds": 12}]})
out.append({"t": "summary", "job": "mv", "state": "finished", "steps": 10,
            "ts": t0 + 60})
with open(sys.argv[1], "w") as f:
    for o in out:
        f.write(json.dumps(o) + "\n")
PYEOF
(cd "$T" && "$HUNTER" report mv) > "$T/report.out" || fail "hunter report"
"$PY" - "$T/mv-report.html" <<'PYEOF' || fail "see above"
import re, sys
page = open(sys.argv[1]).read()
assert "What moved on the nodes" in page, "no section"
sec = page.split("What moved on the nodes", 1)[1].split("<h2>", 1)[0]
rows = re.findall(r"<tr><td>([^<]*)</td><td title=\"[^\"]*\">([a-z_0-9]+)</td>"
                  r"<td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td><td><svg", sec)
got = {(w, m): (lo, hi, last) for w, m, lo, hi, last in rows}
print(got)
want = {("n1", "cpu_util"): ("10.0%", "90.0%", "90.0%"),
        ("n1 GPU 0", "temp"): ("40 celsius", "70 celsius", "70 celsius"),
        ("rank 0 (n1)", "threads"): ("4", "9", "9")}
assert got == want, "moved %s, not %s" % (sorted(got), sorted(want))
PYEOF
pass "the report lists what moved on the nodes, and nothing that held"
