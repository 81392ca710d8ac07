/*
 * detect-leak.c: a rank whose memory (RSS) grows steadily -- the
 * least-squares slope over the last policy.leak.check_every steps, times
 * check_every, over policy.leak.growth_limit -- is checkpointed and
 * restarted in place.
 */
#include "backend/sched/detect-internal.h"

/*
 * Least-squares slope of RSS against step over the samples of the last
 * `steps` steps, in bytes per step.  Only a full window is judged: the
 * samples must reach back `steps` steps.  A rank's first steps touch its
 * buffers for the first time (the model at its micro-batch, the prefetch
 * queue), and a short history made of little else would read that
 * warm-up as a leak.
 */
static int
rss_slope(const struct detect_rank *rk, long steps, double *slope)
{
	double	 sx = 0, sy = 0, sxx = 0, sxy = 0, n = 0;
	long	 newest;
	int	 full = 0;

	if (rk->step->len < 4)
		return -1;
	newest = (long)series_get(rk->step, rk->step->len - 1);
	for (int i = rk->step->len - 1; i >= 0; i--) {
		double x = series_get(rk->step, i);
		double y = series_get(rk->rss, i);

		if (x < newest - steps) {
			full = 1;
			break;
		}
		sx += x;
		sy += y;
		sxx += x * x;
		sxy += x * y;
		n++;
	}
	if (!full || n < 4 || n * sxx - sx * sx <= 0)
		return -1;
	*slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
	return 0;
}

static int
leak_run(const struct detect_job *job, struct detect_decision *out, int max)
{
	long	 every = job->spec->policy.leak_check_every;
	double	 limit = (double)job->spec->policy.leak_growth_limit, slope;

	if (!detect_watching(job) || max < 1)
		return 0;
	for (int r = 0; r < job->world; r++) {
		if (rss_slope(&job->ranks[r], every, &slope) != 0 ||
		    slope * every <= limit)
			continue;
		detect_decide(&out[0], DETECT_RESTART, r, -1, "rank %d: memory "
		    "grows %.1f MiB per %ld steps (limit %.1f MiB); checkpoint "
		    "and restart", r, slope * every / 1048576.0, every,
		    limit / 1048576.0);
		return 1;
	}
	return 0;
}

const struct detector detect_leak = {
	.name = "leak",
	.run = leak_run,
};
