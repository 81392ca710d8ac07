/*
 * detect-straggler.c: a straggler, whose compute time per step over the
 * window (policy.failover.for) is more than twice the median of the
 * others', moves to a free spare node.  Judged once every rank has a
 * full window; when no spare is free it stays, and the detectors after
 * this one wait.
 */
#include "backend/sched/detect-internal.h"

static int
straggler_run(const struct detect_job *job, struct detect_decision *out,
    int max)
{
	double	 compute[DETECT_SLOW_MAX], share[DETECT_SLOW_MAX], med;
	int	 nr;

	if (!detect_watching(job) || max < 1)
		return 0;
	if ((nr = detect_window(job, compute, share)) < 2)
		return 0;
	for (int r = 0; r < nr; r++) {
		med = detect_median_others(compute, nr, r);
		if (med > 0 && compute[r] > 2 * med) {
			detect_decide(&out[0], DETECT_MIGRATE, r,
			    detect_spare(job), "straggler: %.1f ms of compute "
			    "per step against a median of %.1f ms over %d s",
			    compute[r], med, detect_window_len(job));
			return 1;
		}
	}
	return 0;
}

const struct detector detect_straggler = {
	.name = "straggler",
	.run = straggler_run,
};
