#!/bin/sh
# Issue 27, item 9: a FIFO where data is read.  open() of a FIFO blocks
# until someone writes to it, and the readers opened before they looked
# at the type: a FIFO in a text data directory hung `hunter validate` and
# the worker.  Now each data file is opened without blocking and checked
# first.  A text directory holding a FIFO validates and trains (the FIFO
# skipped with a note); a FIFO named as a token shard and one in place of
# an idx file are refused with their name and "a FIFO", at once.  Every
# command has a deadline (timeout), so a hang fails the test.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/faults/faults-lib.sh"
. "$SRCDIR/tests/integration/gpt-lib.sh"
mkdir "$T/text"
gpt_text "$T/text/a.txt" 3000
mkfifo "$T/text/b.pipe"
gpt_job "$T/j.yaml" fifo "$T/text" 1 ""
rc=0
timeout 20 "$HUNTER" validate "$T/j.yaml" > "$T/v" 2>&1 || rc=$?
cat "$T/v"
[ $rc != 124 ] || fail "hunter validate hung on the FIFO in the text directory"
[ $rc = 0 ] || fail "hunter validate exited $rc"
rc=0
timeout 60 "$HUNTER" run --json "$T/j.yaml" > "$T/run" 2>&1 || rc=$?
[ $rc != 124 ] || fail "hunter run hung on the FIFO in the text directory"
[ $rc = 0 ] || { tail -n 5 "$T/run"; fail "hunter run exited $rc"; }
[ "$(jget "$T/run" summary state)" = finished ] || fail "the job did not finish"
grep -q 'b.pipe: skipped, a FIFO' "$T/run" || { grep -i pipe "$T/run"; fail "no note that the FIFO was skipped"; }

# A FIFO as a token shard.
"$PY" "$SRCDIR/tests/integration/mkshard.py" "$T/train.bin" 4000 256 1
mkfifo "$T/val.bin"
sed -e "s|data: {path: $T/text}|data: {format: tokens, train: \"$T/train.bin\", val: $T/val.bin}|" \
    "$T/j.yaml" > "$T/k.yaml"
grep -q 'format: tokens' "$T/k.yaml" || fail "could not make the shard job"
rc=0
timeout 20 "$HUNTER" validate "$T/k.yaml" > "$T/v2" 2>&1 || rc=$?
cat "$T/v2"
[ $rc != 124 ] || fail "hunter validate hung on a FIFO shard"
[ $rc != 0 ] || fail "hunter validate took a FIFO as a shard"
grep -q 'val.bin: a FIFO, not a regular file' "$T/v2" || fail "the FIFO shard was not named"

# A FIFO in place of an idx file.
mkdata "$T/idx" 256 32
rm "$T/idx/t10k-labels-idx1-ubyte"*
mkfifo "$T/idx/t10k-labels-idx1-ubyte"
small_job "$T/m.yaml" fifoidx "$T/idx"
rc=0
timeout 60 "$HUNTER" run --json "$T/m.yaml" > "$T/run2" 2>&1 || rc=$?
[ $rc != 124 ] || fail "hunter run hung on a FIFO idx file"
[ $rc != 0 ] || fail "hunter run trained with a FIFO as its labels"
grep -q 't10k-labels-idx1-ubyte: a FIFO, not a regular file' "$T/run2" ||
	{ tail -n 5 "$T/run2"; fail "the FIFO idx file was not named"; }
pass "FIFOs skipped in a text directory, refused as a shard and as an idx file, nothing hung"
