#!/bin/sh
# Issue 21, placement: a job that says nothing about placement runs
# wherever its ranks fit.  Two local nodes in racks a and b with one CPU
# slot each, and a 2-rank job with no placement keys: no rack holds the
# whole job (which would keep it in one rack), so the default rack
# placement takes its group size from the job (2 ranks / 2 racks = 1) and
# it trains to the end (it was refused: "no rack has 2 free slots for a
# group (group_size 2)").  The same job with group_size: 2 is split over
# the racks, and the placed event says so; with placement: rack and
# strict: true it is refused with the reason.
. "$SRCDIR/tests/integration/lib.sh"
cat > "$T/cluster.yaml" <<EOC
cluster: tworacks
nodes:
  - {name: r1, host: local, rack: a, devices: {cpu: 1}}
  - {name: r2, host: local, rack: b, devices: {cpu: 1}}
EOC
mkdata "$T/data" 600 64
small_job "$T/j.yaml" racks "$T/data"
sed -i 's/ranks: 1}/ranks: 2}/; s/micro: 32/micro: 16/' "$T/j.yaml"
grep -q 'ranks: 2}' "$T/j.yaml" || fail "could not edit the job"
grep -q placement "$T/j.yaml" && fail "the job names a placement"

rc=0
"$HUNTER" run --json --cluster "$T/cluster.yaml" "$T/j.yaml" > "$T/out" 2>&1 || rc=$?
[ $rc -eq 0 ] || { tail -n 5 "$T/out"; fail "hunter run exited $rc"; }
[ "$(jget "$T/out" summary state)" = finished ] ||
	{ tail -n 5 "$T/out"; fail "the job did not finish"; }
grep '"kind":"placed"' "$T/out" | grep -q 'on r1, r2\|on r2, r1' ||
	{ grep placed "$T/out"; fail "the ranks are not one on each node"; }

sed 's/ranks: 2}/ranks: 2, group_size: 2}/; s/name: racks/name: split/' \
	"$T/j.yaml" > "$T/split.yaml"
rc=0
"$HUNTER" run --json --cluster "$T/cluster.yaml" "$T/split.yaml" > "$T/out2" 2>&1 || rc=$?
[ $rc -eq 0 ] || { tail -n 5 "$T/out2"; fail "the split job: hunter run exited $rc"; }
grep '"kind":"placed"' "$T/out2" |
	grep -q 'group 1 split over racks [ab], [ab]: no rack has 2 free slots' ||
	{ grep placed "$T/out2"; fail "the placed event does not say the group was split"; }

sed 's/ranks: 2}/ranks: 2, group_size: 2, placement: rack, strict: true}/; s/name: racks/name: strict/' \
	"$T/j.yaml" > "$T/strict.yaml"
rc=0
"$HUNTER" run --json --cluster "$T/cluster.yaml" "$T/strict.yaml" > "$T/out3" 2>&1 || rc=$?
[ $rc -eq 1 ] || { tail -n 5 "$T/out3"; fail "the strict job: hunter run exited $rc, not 1"; }
grep -q 'no rack has 2 free slots for a group (group_size 2, strict)' "$T/out3" ||
	{ cat "$T/out3"; fail "the strict job was not refused with the reason"; }
pass "a 2-rank job with no placement keys trains on two one-slot racks; a group is split when asked, and refused when strict"
