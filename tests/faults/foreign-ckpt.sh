#!/bin/sh
# Issue 27, items 6 and 5: whose files a checkpoint directory holds.  The
# job's checkpoint.dir is a shared, sticky 1777 directory.
#  - User nobody (setpriv) plants empty step-999999998/9.safetensors
#    there: pruning used to keep the highest step numbers of any file, so
#    `keep: 2` deleted each of the job's own checkpoints right after
#    writing it.  Now only the job's own (this user's files whose header
#    names the job) count: its newest two are kept, nobody's are left.
#  - nobody copies one of the job's checkpoints in under a higher step:
#    a valid file, but nobody's.  --resume used to load the newest file
#    that passed the CRC; now it skips nobody's, saying whose it is, and
#    resumes from the job's own newest.
#  - A temporary file that a killed earlier run of the job left (its
#    name carries the job and that run) is removed when the job starts
#    again, with an event (item 5); nobody's temporary file is left.
# Skips (77) unless root, which it needs to switch users.
. "$SRCDIR/tests/integration/lib.sh"
. "$SRCDIR/tests/faults/faults-lib.sh"
needs_nobody
CK="$T/ck"
mkdir "$CK"
chmod 1777 "$CK"
nobody touch "$CK/step-999999998.safetensors" "$CK/step-999999999.safetensors"
mkdata "$T/data" 512 32
small_job "$T/j.yaml" fck "$T/data"
sed -i 's/every_steps: 0, keep: 3/every_steps: 8, keep: 2/' "$T/j.yaml"
ckpt_dir_job "$T/j.yaml" "$CK"
# --resume (there is nothing to resume): a fresh run moves the files it
# finds aside, which root may do to nobody's files in a sticky directory
# and the user the issue is about may not (they stay where they are).
rc=0
"$HUNTER" run --json --resume "$T/j.yaml" > "$T/run1" 2>&1 || rc=$?
[ $rc = 0 ] || { tail -n 3 "$T/run1" | cut -c1-300; fail "the first run exited $rc"; }
ls -ln "$CK"
own=$(find "$CK" -name 'step-*.safetensors' -user 0 -printf '%f\n' | sort | tr '\n' ' ')
[ "$own" = "step-000000024.safetensors step-000000032.safetensors " ] ||
	fail "the job's own checkpoints are '$own', not steps 24 and 32"
for f in step-999999998.safetensors step-999999999.safetensors; do
	[ -f "$CK/$f" ] || fail "nobody's $f was removed"
done

# A valid checkpoint of nobody's, under a higher step; an earlier run's
# temporary file of ours; a temporary file of nobody's.
cp "$CK/step-000000032.safetensors" "$T/copy"
chmod 644 "$T/copy"
nobody sh -c "cat '$T/copy' > '$CK/step-000000500.safetensors'"
left="$CK/.step-000000040.fck.12345.0123456789abcdef.tmp"
head -c 1000 /dev/zero > "$left"
nobody sh -c "head -c 10 /dev/zero > '$CK/.step-000000041.fck.12345.fedcba9876543210.tmp'"
sed -i 's/epochs: 2/epochs: 3/' "$T/j.yaml"
rc=0
"$HUNTER" run --json --resume "$T/j.yaml" > "$T/run2" 2>&1 || rc=$?
[ $rc = 0 ] || { tail -n 3 "$T/run2" | cut -c1-300; fail "the resume exited $rc"; }
grep -o '"reason":"[^"]*"' "$T/run2" | grep -i 'skipping\|resumed from\|temporary' | head -n 6
grep -q "resumed from $CK/step-000000032.safetensors at step 32" "$T/run2" ||
	fail "the resume did not start from the job's own step 32"
grep -q "skipping checkpoint $CK/step-000000500.safetensors: owned by uid 65534" "$T/run2" ||
	fail "no word about skipping nobody's checkpoint"
grep -q "removed 1 temporary file an earlier run of fck left in $CK" "$T/run2" ||
	fail "no word about the earlier run's temporary file"
[ ! -e "$left" ] || fail "the earlier run's temporary file is still there"
[ -f "$CK/.step-000000041.fck.12345.fedcba9876543210.tmp" ] || fail "nobody's temporary file was removed"
[ -f "$CK/step-000000500.safetensors" ] || fail "nobody's checkpoint was removed"
[ "$(jget "$T/run2" summary state)" = finished ] || fail "the resumed job did not finish"
pass "foreign checkpoints neither pruned against nor resumed; the earlier run's temporary file removed"
