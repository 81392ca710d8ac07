/*
 * place-spread.c: spread: each rank goes to the node with the most free
 * slots (the first of them on a tie), nodes x ranks.
 */
#include "backend/sched/place-internal.h"

static int
place_spread_run(const struct cluster_spec *c, const struct job_spec *job,
    int *freeslots, int *node_of, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	for (int r = 0; r < job->resources.ranks; r++) {
		int best = 0;

		for (int i = 1; i < c->n_nodes; i++)
			if (freeslots[i] > freeslots[best])
				best = i;
		freeslots[best]--;
		node_of[r] = best;
	}
	return 0;
}

const struct place_strategy place_spread = {
	.placement = PLACEMENT_SPREAD,
	.place = place_spread_run,
};
