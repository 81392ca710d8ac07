#!/bin/sh
# Metrics check 4: `hunter report` on a job that failed over (rank 1
# crashes at step 150), was paused and resumed, and had a rank migrated,
# all through `hunter ctl` and --inject.  The page renders in headless
# Chromium with nothing in its console log, holds charts with data points
# (SVG polylines) and the three events with their reasons, and loads
# nothing from elsewhere.  The screenshot stays in $KEEP (default
# $BUILDDIR/tests/report-html/) for a person to look at.
. "$SRCDIR/tests/integration/lib.sh"
command -v chromium >/dev/null ||
	fail "chromium is not installed (bootstrap installs it)"
KEEP=${KEEP:-${BUILDDIR:-$T}/tests/report-html}
mkdir -p "$KEEP"
mkdata "$T/data" 4000 64
small_job "$T/j.yaml" repjob "$T/data"
sed -i "s/ranks: 1/ranks: 2, memory_per_rank: 400KiB/; s/epochs: 2/epochs: 16/; s/global: 32, micro: 32/global: 64, micro: auto/; s/every_steps: 0/every_steps: 100/" "$T/j.yaml"

"$HUNTER" run --json --inject slow-data=8 --inject crash-at=150@1 \
	"$T/j.yaml" > "$T/out" 2>&1 &
run=$!
cleanup_hooks="kill -9 $run 2>/dev/null || true"
wait_for "$T/out" '"kind":"failover".*generation 1' 30
wait_for "$T/out" '"generation":1,"step"\|"t":"metrics".*"generation":1' 30
"$HUNTER" ctl repjob pause || fail "ctl pause"
wait_for "$T/out" '"kind":"paused"' 30
sleep 1
"$HUNTER" ctl repjob resume || fail "ctl resume"
wait_for "$T/out" '"kind":"resumed"' 30
"$HUNTER" ctl repjob migrate 0 local1 || fail "ctl migrate"
wait_for "$T/out" '"kind":"migrated".*generation 2' 30
wait $run || fail "the run exited $?"
[ "$(jget "$T/out" summary state)" = finished ] || fail "not finished"

(cd "$T" && "$HUNTER" report repjob) > "$T/report.out" || fail "hunter report"
cat "$T/report.out"
page="$T/repjob-report.html"
[ -s "$page" ] || fail "no page"
# Self-contained: nothing fetched (the SVG namespace is a name, not a load).
if grep -o '\(src\|href\)=\"[^"]*\"\|url(' "$page" | grep -v '^$' ; then
	fail "the page refers to something outside itself"
fi
cp "$page" "$KEEP/repjob-report.html"
prof="$T/chromium"
chromium --headless --no-sandbox --disable-gpu --user-data-dir="$prof" \
	--enable-logging=stderr --v=0 --window-size=1000,3000 \
	--screenshot="$KEEP/repjob-report.png" "file://$page" > "$T/shot.out" 2> "$T/shot.err" ||
	{ tail -n 20 "$T/shot.err"; fail "chromium could not take the screenshot"; }
chromium --headless --no-sandbox --disable-gpu --user-data-dir="$prof" \
	--enable-logging=stderr --v=0 --dump-dom "file://$page" \
	> "$T/dom.html" 2> "$T/dom.err" ||
	{ tail -n 20 "$T/dom.err"; fail "chromium could not load the page"; }
[ -s "$KEEP/repjob-report.png" ] || fail "no screenshot"
# The page's console: chromium logs each message as CONSOLE(...).
if grep -h 'CONSOLE\|Uncaught\|ERR_FILE\|Failed to load' "$T/shot.err" "$T/dom.err"; then
	fail "the page logged errors"
fi
"$PY" - "$T/dom.html" <<'PYEOF' || fail "see above"
import html.parser, re, sys
class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.charts = []; self.events = []; self.stack = []
    def handle_starttag(self, tag, a):
        a = dict(a)
        cls = a.get("class", "")
        if tag == "svg" and "chart" in cls.split():
            self.charts.append(0)
        if tag == "polyline" and self.charts:
            pts = a.get("points", "").split()
            self.charts[-1] = max(self.charts[-1], len(pts))
        if tag == "rect" and self.charts and "bar" in cls.split():
            self.charts[-1] = max(self.charts[-1], 1)
        if tag == "tr" and "event" in cls.split():
            self.events.append([cls, ""])
            self.stack = self.events[-1]
    def handle_data(self, d):
        if self.stack:
            self.stack[1] += d
    def handle_endtag(self, tag):
        if tag == "tr":
            self.stack = []
p = P()
p.feed(open(sys.argv[1]).read())
drawn = [n for n in p.charts if n >= 2]
print("charts: %d, with data points: %d (%s)" % (len(p.charts), len(drawn), p.charts))
assert len(drawn) >= 4, p.charts
def ev(kind):
    return [t for c, t in p.events if "ev-" + kind in c.split()]
for kind, why in (("paused", "holding at the step boundary"),
                  ("migrated", "rank 0: local"),
                  ("failover", "rank 1 on")):
    e = ev(kind)
    print("%s: %s" % (kind, e[0][:120] if e else None))
    assert e and any(why in t for t in e), (kind, e)
PYEOF
# The timeline's labels do not run into each other (placed, then each
# rank's started, come within a second): a label is 6 px a character at
# most in its 10px font.
"$PY" - "$page" <<'PYEOF' || fail "see above"
import re, sys
tl = re.search(r'<svg class="timeline".*?</svg>', open(sys.argv[1]).read(), re.S)
labels = re.findall(r'<text class="marklbl" x="([0-9.]+)" y="([0-9]+)">([^<]*)</text>',
                    tl.group(0))
rows = {}
for x, y, text in labels:
    rows.setdefault(y, []).append((float(x), text))
for y, row in rows.items():
    row.sort()
    for (x0, t0), (x1, t1) in zip(row, row[1:]):
        assert x1 >= x0 + 6 * len(t0), "%r at %.1f runs into %r at %.1f (y %s)" % (
            t0, x0, t1, x1, y)
print("timeline: %d labels, none overlapping" % len(labels))
PYEOF
# A rotated journal (journal.jsonl.1 older than journal.jsonl) tells the
# same story.
j="$HUNTER_STATE_DIR/journal.jsonl"
n=$(wc -l < "$j")
head -n $((n / 2)) "$j" > "$j.1"
tail -n +$((n / 2 + 1)) "$j" > "$j.new"
mv "$j.new" "$j"
(cd "$T" && "$HUNTER" report -o rotated.html repjob) > "$T/rot.out" || fail "report over a rotated journal"
grep -q "$(grep -o '[0-9]* events' "$T/report.out")" "$T/rot.out" ||
	fail "the rotated journal lost events: $(cat "$T/report.out" "$T/rot.out")"
"$HUNTER" report nosuchjob > "$T/none" 2>&1 && fail "a report of no job"
grep -q "no saved series of job nosuchjob" "$T/none" || { cat "$T/none"; fail "no clear error"; }
pass "report with $(grep -c '<polyline' "$page") polylines; screenshot $KEEP/repjob-report.png"
