/*
 * place-pack.c: pack: fill the nodes in order, each to its last free
 * slot before the next.
 */
#include "backend/sched/place-internal.h"

static int
place_pack_run(const struct cluster_spec *c, const struct job_spec *job,
    int *freeslots, int *node_of, char *err, size_t errlen)
{
	(void)c;
	(void)err;
	(void)errlen;
	for (int r = 0, i = 0; r < job->resources.ranks; r++) {
		while (freeslots[i] == 0)
			i++;
		freeslots[i]--;
		node_of[r] = i;
	}
	return 0;
}

const struct place_strategy place_pack = {
	.placement = PLACEMENT_PACK,
	.place = place_pack_run,
};
