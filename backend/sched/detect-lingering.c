/*
 * detect-lingering.c: a re-formation waits for the old group to exit.
 * Ranks that linger past the timeout are killed; ranks whose agent does
 * not answer even that are left behind (they fail on their own once
 * they run again, and their frames belong to an old generation, which
 * the backend ignores).
 */
#include "backend/sched/detect-internal.h"

static int
lingering_run(const struct detect_job *job, struct detect_decision *out,
    int max)
{
	double	 hb = job->spec->policy.heartbeat_timeout_s;
	double	 t = job->now - job->reform_since;
	int	 n = 0;

	/* A program has its stop grace to end (its agent kills it then). */
	if (job->spec->kind == JOB_PROGRAM &&
	    job->spec->program.stop_grace_s > hb)
		hb = job->spec->program.stop_grace_s;
	if (!job->reforming)
		return 0;
	/* A rank has the heartbeat timeout and 5 s more to reach the agreed
	 * step and exit; after a kill, that again and 10 s more. */
	for (int r = 0; r < job->world && n < max; r++) {
		const struct detect_rank *rk = &job->ranks[r];

		if (!rk->running)
			continue;
		if (t > hb + 5 && rk->kill_sent == 0)
			detect_decide(&out[n++], DETECT_KILL, r, -1, NULL);
		else if (t > 2 * hb + 10)
			detect_decide(&out[n++], DETECT_LEAVE, r, -1, "rank %d of "
			    "generation %d does not exit; leaving it behind", r,
			    job->generation);
	}
	return n;
}

const struct detector detect_lingering = {
	.name = "lingering",
	.run = lingering_run,
};
