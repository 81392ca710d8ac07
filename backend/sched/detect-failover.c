/*
 * detect-failover.c: a rank that exits with an error is more often a
 * bystander whose peer died than the cause, so its failover waits 2 s
 * for a rank killed by a signal to be reported; when none shows up, the
 * failover is due all the same.  While a rank is silent past the
 * heartbeat timeout (its peers fail on the exchange it no longer joins:
 * a partition), the heartbeat detector judges it first, so that the
 * failover moves the silent rank, not the bystander.
 */
#include "backend/sched/detect-internal.h"

static int
failover_run(const struct detect_job *job, struct detect_decision *out,
    int max)
{
	if (job->reforming || max < 1 || job->fail_since <= 0 ||
	    job->now - job->fail_since < 2)
		return 0;
	for (int r = 0; r < job->world; r++) {
		if (detect_rank_silent(job, r))
			return 0;
	}
	detect_decide(&out[0], DETECT_FAILOVER, -1, -1, NULL);
	return 1;
}

const struct detector detect_failover = {
	.name = "failover",
	.run = failover_run,
};
