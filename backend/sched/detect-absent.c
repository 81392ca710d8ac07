/*
 * detect-absent.c: ranks that a re-attached backend rebuilt from the
 * journal, whose agents' hellos do not list them, were never started:
 * the backend that journalled their generation died before its launch
 * went out.  Nothing of them will ever beat, so no timeout is waited
 * for.  A second after the hello (time for the exits of the agent's
 * history, which follow its hello, to come in), the generation starts
 * again where it was placed, from the newest checkpoint, and the absent
 * ranks are left behind so that the relaunch does not wait on them;
 * nothing failed, so no failover is spent.  Grace and pause do not hide
 * them.
 */
#include "backend/sched/detect-internal.h"

#define ABSENT_AFTER_S	1.0

static bool
absent(const struct detect_job *job, int r)
{
	const struct detect_rank *rk = &job->ranks[r];

	return rk->running && rk->absent_since > 0 &&
	    job->now - rk->absent_since >= ABSENT_AFTER_S;
}

static int
absent_run(const struct detect_job *job, struct detect_decision *out, int max)
{
	int	 n = 0, first = -1, count = 0;

	for (int r = 0; r < job->world; r++) {
		if (absent(job, r) && count++ == 0)
			first = r;
	}
	if (first < 0 || max < 2)
		return 0;
	if (!job->reforming)
		detect_decide(&out[n++], DETECT_RESTART, first, -1, "generation "
		    "%d never started: the agent of %s does not have rank %d "
		    "(%d rank%s missing; the backend that journalled the launch "
		    "died before it went out)", job->generation,
		    job->nodes[job->ranks[first].node].name, first, count,
		    count == 1 ? "" : "s");
	for (int r = first; r < job->world && n < max; r++) {
		if (absent(job, r))
			detect_decide(&out[n++], DETECT_LEAVE, r, -1, "rank %d: "
			    "the agent of %s does not have it (its launch never "
			    "arrived)", r, job->nodes[job->ranks[r].node].name);
	}
	return n;
}

const struct detector detect_absent = {
	.name = "absent",
	.run = absent_run,
};
