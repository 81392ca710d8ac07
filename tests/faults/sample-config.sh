#!/bin/sh
# Issue 27, item 13: `hunter sample` trusted the config.json beside a
# checkpoint.  n_embd 1073741824 overflowed 3*C and 4*C in int and the
# command aborted (exit 134).  Now every field must be an integer within
# its bound, and the parameters the config describes must fit in the
# checkpoint, before anything is allocated: each bad config below gets
# exit 1 and a message naming the file and the field, in a second or two,
# and no core.  The checkpoint is a real one of a tiny gpt, so the last
# case (the right config) must still print text.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/faults/faults-lib.sh"
. "$SRCDIR/tests/integration/gpt-lib.sh"
gpt_text "$T/text" 3000
gpt_job "$T/j.yaml" sconf "$T/text" 1 ""
rc=0
"$HUNTER" run --json "$T/j.yaml" > "$T/out" 2>&1 || rc=$?
[ $rc = 0 ] || { tail -n 3 "$T/out" | cut -c1-300; fail "the gpt run exited $rc"; }
ck=$(jget "$T/out" summary checkpoint)
[ -f "$ck" ] || fail "no checkpoint ($ck)"
dir=$(dirname "$ck")
cp "$dir/config.json" "$T/good.json"
try() {	# try NAME WANT-RC PATTERN 'PYTHON EDIT OF c'
	"$PY" - "$T/good.json" "$dir/config.json" "$4" <<'PYEOF'
import json, sys
c = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(c, open(sys.argv[2], "w"))
PYEOF
	rc=0
	timeout 20 "$HUNTER" sample --tokens 8 "$ck" > "$T/s.out" 2> "$T/s.err" || rc=$?
	echo "$1: exit $rc: $(head -c 200 "$T/s.err")"
	[ "$rc" = "$2" ] || { cat "$T/s.err"; fail "$1: exit $rc, not $2"; }
	[ -z "$3" ] || grep -q -- "$3" "$T/s.err" ||
		{ cat "$T/s.err"; fail "$1: no '$3' in the message"; }
}
try "n_embd 2^30" 1 'config.json: n_embd: 1073741824 is outside 1\.\.65536' 'c["n_embd"] = 1 << 30'
try "n_layer 2^32+1" 1 'n_layer: 4294967297 is outside 1\.\.1024' 'c["n_layer"] = (1 << 32) + 1'
try "n_head a string" 1 'n_head is of another type, not an integer' 'c["n_head"] = "4"'
try "no vocab_size" 1 'vocab_size is missing' 'del c["vocab_size"]'
try "n_head 0" 1 'n_head: 0 is outside' 'c["n_head"] = 0'
try "heads not dividing" 1 'channels do not divide into 3 heads' 'c["n_head"] = 3'
try "bigger than the file" 1 "more than .* holds .*: it is not this checkpoint's config" 'c["n_embd"] = 4096; c["n_head"] = 8; c["n_layer"] = 48'
try "the right one" 0 '' 'pass'
[ -s "$T/s.out" ] || fail "the right config printed nothing"
pass "every bad config.json refused with its field named; the right one samples"
