#!/bin/sh
# Issue 20, check 4: the shared-memory segment of two ranks on one host
# is 0600 and owned by the job's user; its name is gone as soon as both
# ranks have it (so nothing is left when the job ends); and when every
# rank is killed with -9, the agents remove any name a rank left (one
# planted per rank stands for a creator killed before the others joined).
. "$SRCDIR/tests/integration/lib.sh"
mkdata "$T/data" 6000 200
small_job "$T/j.yaml" shmseg "$T/data"
sed -i 's/ranks: 1/ranks: 2/; s/epochs: 2/epochs: 30/; s/micro: 32/micro: 16/' "$T/j.yaml"
# slow=5: 5 ms a step at least, so the 5600 steps outlast the checks
# (over shared memory a fresh clone's run ended before the first look).
"$HUNTER" run --json --inject slow=5 "$T/j.yaml" > "$T/out" 2>&1 &
runpid=$!
cleanup_hooks="kill -9 $runpid 2>/dev/null || true"
# rank_pids: the pids the rank metrics name so far; two_ranks: both seen.
rank_pids() {
	grep '"t":"metrics"' "$1" | grep '"scope":"rank"' |
		sed -n 's/.*"pid":\([0-9]*\).*/\1/p' | sort -u | tr '\n' ' '
}
two_ranks() { pids=$(rank_pids "$T/out"); [ "$(echo $pids | wc -w)" -ge 2 ]; }
pids=""
poll_until 15 two_ranks && [ "$(echo $pids | wc -w)" = 2 ] ||
	{ tail "$T/out"; fail "want 2 rank pids in 15 s, have '$pids'"; }
for p in $pids; do
	seg=""
	for fd in /proc/$p/fd/*; do
		case $(readlink "$fd" 2>/dev/null) in
		/dev/shm/hunter-*) seg=$fd; break ;;
		esac
	done
	[ -n "$seg" ] || fail "rank pid $p holds no /dev/shm/hunter-* segment"
	mode=$(stat -L -c %a "$seg") owner=$(stat -L -c %u "$seg")
	echo "pid $p: $(readlink "$seg"): mode $mode owner $owner"
	[ "$mode" = 600 ] || fail "segment mode $mode"
	[ "$owner" = "$(id -u)" ] || fail "segment owner $owner"
	case $(readlink "$seg") in
	*"(deleted)") ;;
	*) fail "the segment's name is still there after both ranks joined" ;;
	esac
	: > /dev/shm/hunter-$p-planted
	chmod 600 /dev/shm/hunter-$p-planted
done
kill -9 $pids
# names_gone: no /dev/shm name of the killed ranks is left.
names_gone() {
	left=$(for p in $pids; do ls /dev/shm/hunter-$p-* 2>/dev/null || true; done)
	[ -z "$left" ]
}
poll_until 10 names_gone || fail "left 10 s after kill -9 of every rank: $left"
n=$(cat "$HUNTER_STATE_DIR"/nodes/*/agent.log | grep -c "removed 1 shared-memory segment left by shmseg")
[ "$n" = 2 ] || fail "the agents' logs name $n removals, not 2"
kill -9 $runpid 2>/dev/null || true
wait $runpid 2>/dev/null || true
stop_agents
echo "after kill -9 of both ranks: the agents removed both names"

# A job that runs to its end leaves no name either.
small_job "$T/k.yaml" shmend "$T/data"
sed -i 's/ranks: 1/ranks: 2/; s/micro: 32/micro: 16/' "$T/k.yaml"
"$HUNTER" run --json "$T/k.yaml" > "$T/out2" 2>&1 || { rc=$?; tail "$T/out2"; fail "hunter run exited $rc"; }
pids=$(rank_pids "$T/out2")
[ -n "$pids" ] || fail "no rank pids in the second job's output"
for p in $pids; do
	if ls /dev/shm/hunter-$p-* 2>/dev/null; then fail "pid $p left a segment"; fi
done
grep -q '"kind":"finished"' "$T/out2" || fail "the second job did not finish"
pass "the segment is 0600, unlinked once joined, and gone after the job and after kill -9"
