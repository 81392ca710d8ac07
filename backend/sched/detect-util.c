/*
 * detect-util.c: low utilisation.  A rank whose compute share of the
 * time it does not spend waiting on peers stays under
 * policy.failover.low_util over the window, while the others' median
 * does not, moves to a free spare node.  Waiting on peers is left out
 * so that a rank waiting for a straggler is not blamed.  Judged once
 * every rank has a full window; when no spare is free it stays, and the
 * detectors after this one wait.
 */
#include "backend/sched/detect-internal.h"

static int
util_run(const struct detect_job *job, struct detect_decision *out, int max)
{
	double	 compute[DETECT_SLOW_MAX], share[DETECT_SLOW_MAX], med;
	double	 low = job->spec->policy.low_util;
	int	 nr;

	if (!detect_watching(job) || max < 1)
		return 0;
	if ((nr = detect_window(job, compute, share)) < 2)
		return 0;
	for (int r = 0; r < nr; r++) {
		med = detect_median_others(share, nr, r);
		if (share[r] < low && med >= low) {
			detect_decide(&out[0], DETECT_MIGRATE, r,
			    detect_spare(job), "utilisation %.0f%% under %.0f%% "
			    "for %d s (the others: %.0f%%)", 100 * share[r],
			    100 * low, detect_window_len(job), 100 * med);
			return 1;
		}
	}
	return 0;
}

const struct detector detect_util = {
	.name = "util",
	.run = util_run,
};
