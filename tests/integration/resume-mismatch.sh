#!/bin/sh
# Issue 21: --resume refuses a checkpoint that does not fit the job.  A
# 1-rank job is stopped (SIGINT) in the middle of epoch 2 of 64 steps;
# resumed with batch.global raised so that an epoch has 10 steps, the
# checkpoint's step_in_epoch is past the end of the epoch: the rank must
# fail at once, naming the field and both values (not index past the
# data, not spin with its heartbeat going), and leave the checkpoint as it
# was.  So must a header forged with a valid hash.  Every run has a
# deadline, so a hang fails the test instead of stalling it.
. "$SRCDIR/tests/integration/lib.sh"
mkdata "$T/data" 2048 64
small_job "$T/j.yaml" mismatch "$T/data"
sed -i 's/epochs: 2/epochs: 3/' "$T/j.yaml"
dir="$HUNTER_STATE_DIR/checkpoints/mismatch"

# 2048 / 32 = 64 steps an epoch, 30 ms each: epoch 2 takes about 2 s.
"$HUNTER" run --json --inject slow=30 "$T/j.yaml" > "$T/1.out" 2>&1 &
pid=$!
# The first epoch's line, or the run's end (which the checks below fail).
epoch1() { grep -q '"t":"epoch".*"epoch":1,' "$T/1.out" || ! kill -0 $pid 2>/dev/null; }
wait_until 30 "the first epoch" epoch1
sleep 0.6
kill -INT $pid 2>/dev/null || true
wait $pid || true
[ "$(jget "$T/1.out" summary state)" = stopped ] ||
	{ tail -n 5 "$T/1.out"; fail "the first run did not stop"; }
steps=$(jget "$T/1.out" summary steps)
[ "$steps" -ge 74 ] && [ "$steps" -lt 128 ] ||
	fail "stopped at step $steps, not at step 10 or later of epoch 2"
ck=$(jget "$T/1.out" summary checkpoint)
sum=$(sha256sum < "$ck")

# 2048 / 192 = 10 steps an epoch; the checkpoint is at step
# $((steps - 64)) of epoch 2.
sed 's/global: 32, micro: 32/global: 192, micro: 32/' "$T/j.yaml" > "$T/k.yaml"
rc=0
timeout 60 "$HUNTER" run --json --resume "$T/k.yaml" > "$T/2.out" 2>&1 || rc=$?
[ $rc = 124 ] && fail "the resume with another batch.global hung"
! grep -q "killed by signal" "$T/2.out" || fail "the worker crashed on the resume"
[ $rc = 1 ] || { tail -n 20 "$T/2.out"; fail "the resume exited $rc, not 1"; }
want="train.batch.global is 32 in the checkpoint, 192 in the job"
grep -q "does not fit this job: $want" "$T/2.out" ||
	{ cat "$T/2.out"; fail "no message naming train.batch.global"; }
[ "$(jget "$T/2.out" summary state)" = failed ] || fail "the job did not fail"
[ "$(sha256sum < "$ck")" = "$sum" ] || fail "the refused checkpoint changed"

# The same checkpoint with step_in_epoch forged to 70 (an epoch has 64)
# and the hash made to match, as checkpoint-file.c makes it.
"$PY" - "$ck" <<'PYEOF'
import re, struct, sys, zlib
p = sys.argv[1]
b = open(p, "rb").read()
hlen = struct.unpack("<Q", b[:8])[0]
h = b[8:8 + hlen].decode()
h2 = re.sub(r'"step_in_epoch":"\d+"', '"step_in_epoch":"70"', h)
h2 = re.sub(r'"step":"\d+"', '"step":"134"', h2)
h2 = re.sub(r'"crc32":"[0-9a-f]{8}"', '"crc32":"00000000"', h2)
h2 = h2.rstrip(" ")
h2 += " " * (-len(h2) % 8)
out = struct.pack("<Q", len(h2)) + h2.encode() + b[8 + hlen:]
crc = b"%08x" % zlib.crc32(out)
out = out.replace(b'"crc32":"00000000"', b'"crc32":"' + crc + b'"')
open(p, "wb").write(out)
PYEOF
rc=0
timeout 60 "$HUNTER" run --json --resume "$T/j.yaml" > "$T/3.out" 2>&1 || rc=$?
[ $rc = 124 ] && fail "the resume from a forged header hung"
! grep -q "killed by signal" "$T/3.out" || fail "the worker crashed on the resume"
[ $rc = 1 ] || { tail -n 20 "$T/3.out"; fail "the forged resume exited $rc, not 1"; }
want="step_in_epoch is 70 in the checkpoint, and an epoch of the job has 64"
grep -q "does not fit this job: $want steps" "$T/3.out" ||
	{ cat "$T/3.out"; fail "no message naming step_in_epoch"; }
pass "stopped at step $steps; refused with batch.global 192, and forged"
