#!/bin/sh
# Security: terminal escapes that reach hunter's human-readable output
# are neutralised.  A hostile checkpoint planted as the newest in a job's
# checkpoint directory carries, in a metadata string that hunter quotes
# in its "skipping corrupt checkpoint" message, an OSC that sets the
# terminal's title (ESC ] 0;pwned BEL), a clear-screen CSI and an 8-bit
# CSI.  `hunter run --resume` (progress lines for a terminal) must skip
# the file, say so, and print none of those bytes; the --json stream
# carries them only JSON-escaped, UTF-8 C1 controls and bidi overrides
# included, and a JSON reader still gets the text back.  (The console's own filter is unit-
# tested in tests/unit/test-sanitize.c; tests/tui/console-escape.sh
# drives it through a hostile path.)
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/faults/faults-lib.sh"
[ -f "$SRCDIR/tui/sanitize.h" ] || { echo "skip: no tui/sanitize.h yet"; exit 77; }
mkdata "$T/data" 1024 64
small_job "$T/j.yaml" esc "$T/data"
sed -i 's/every_steps: 0, keep: 3/every_steps: 8, keep: 3/' "$T/j.yaml"
"$HUNTER" run --json --stop-after-epochs 1 "$T/j.yaml" > "$T/1" 2>&1 || fail "the first run exited $?"
dir="$HUNTER_STATE_DIR/checkpoints/esc"
"$PY" - "$dir" <<'PYEOF'
import json, os, struct, sys
d = sys.argv[1]
newest = sorted(f for f in os.listdir(d) if f.endswith(".safetensors"))[-1]
blob = open(os.path.join(d, newest), "rb").read()
(hlen,) = struct.unpack("<Q", blob[:8])
hdr = json.loads(blob[8:8 + hlen])
hdr["__metadata__"]["format"] = "\x1b]0;pwned\x07\x1b[2J\u009b31mred"
text = json.dumps(hdr).encode()          # ensure_ascii: the bytes travel as \u escapes
text += b" " * (-len(text) % 8)
open(os.path.join(d, "step-999999999.safetensors"), "wb").write(
    struct.pack("<Q", len(text)) + text + blob[8 + hlen:])
PYEOF
rc=0
"$HUNTER" run --resume "$T/j.yaml" > "$T/text" 2>&1 || rc=$?
[ $rc = 0 ] || { cat "$T/text"; fail "the resumed run exited $rc"; }
grep -q "skipping corrupt checkpoint.*step-999999999" "$T/text" ||
	{ cat -v "$T/text"; fail "no message about the hostile checkpoint"; }
echo "said: $(grep -a "step-999999999" "$T/text" | head -n 1 | cat -v | cut -c1-200)"
"$PY" - "$T/text" <<'PYEOF' || fail "control bytes reached the terminal output"
import sys
b = open(sys.argv[1], "rb").read()
bad = {"ESC": b"\x1b", "BEL": b"\x07", "8-bit CSI": "\u009b".encode()}
found = [k for k, v in bad.items() if v in b]
print("control bytes in the text output: %s" % (found or "none"))
assert not found
PYEOF
rm -f "$dir/step-999999999.safetensors"
"$HUNTER" run --json --stop-after-epochs 1 "$T/j.yaml" > /dev/null 2>&1 || true
"$PY" - "$dir" <<'PYEOF'
import json, os, struct, sys
d = sys.argv[1]
newest = sorted(f for f in os.listdir(d) if f.endswith(".safetensors"))[-1]
blob = open(os.path.join(d, newest), "rb").read()
(hlen,) = struct.unpack("<Q", blob[:8])
hdr = json.loads(blob[8:8 + hlen])
hdr["__metadata__"]["format"] = "\x1b]0;pwned\x07\u009b31m\u202egnp.exe"
text = json.dumps(hdr).encode()
text += b" " * (-len(text) % 8)
open(os.path.join(d, "step-999999999.safetensors"), "wb").write(
    struct.pack("<Q", len(text)) + text + blob[8 + hlen:])
PYEOF
"$HUNTER" run --json --resume "$T/j.yaml" > "$T/json" 2>&1 || fail "the --json resume exited $?"
grep -q 'step-999999999' "$T/json" || fail "no message in the JSON stream"
"$PY" - "$T/json" <<'PYEOF' || fail "raw control bytes in the --json stream"
import json, sys
b = open(sys.argv[1], "rb").read()
bad = {"ESC": b"\x1b", "BEL": b"\x07", "UTF-8 C1 CSI": "\u009b".encode(),
       "RLO": "\u202e".encode()}
found = [k for k, v in bad.items() if v in b]
print("raw in the --json stream: %s" % (found or "none"))
assert not found
# escaped, not lost: the reason still says what the file held
said = [json.loads(l)["reason"] for l in b.decode().splitlines()
        if l.startswith("{") and "step-999999999" in l]
assert said and "\u009b31m\u202egnp.exe" in said[0], said
PYEOF
pass "the hostile checkpoint was skipped and its escapes never reached the output"
