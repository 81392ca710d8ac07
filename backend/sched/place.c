/*
 * place.c: placement: the table of strategies (one place-NAME.c each)
 * and what they share: the free slots of each node (spare nodes are
 * never used here), the check that the cluster has enough of them, and
 * the used count once a strategy has placed every rank.  A new strategy
 * is one file that exports a const struct place_strategy
 * (place-internal.h), plus one line in place_table.
 */
#include <stdio.h>
#include <stdlib.h>

#include "lib/xmalloc.h"
#include "backend/sched/place-internal.h"
#include "backend/sched/place.h"

/* The first is also what a placement not in the table gets. */
static const struct place_strategy *const place_table[] = {
	&place_pack,
	&place_spread,
	&place_rack,
	NULL
};

static const struct place_strategy *
place_strategy_of(enum spec_placement p)
{
	for (int i = 0; place_table[i] != NULL; i++) {
		if (place_table[i]->placement == p)
			return place_table[i];
	}
	return place_table[0];
}

static int
node_slots(const struct node_spec *n, const struct job_spec *job)
{
	if (n->spare)
		return 0;
	return job->resources.device == DEVICE_CUDA ? n->cuda_slots : n->cpu_slots;
}

int
place_job(const struct cluster_spec *c, const struct job_spec *job, int *used,
    int *node_of, char *err, size_t errlen)
{
	int	 n = c->n_nodes, ranks = job->resources.ranks, total = 0, rc;
	int	*freeslots = xcalloc((size_t)n + 1, sizeof *freeslots);

	for (int i = 0; i < n; i++) {
		freeslots[i] = node_slots(&c->nodes[i], job) - used[i];
		if (freeslots[i] < 0)
			freeslots[i] = 0;
		total += freeslots[i];
	}
	if (total < ranks) {
		snprintf(err, errlen, "job %s needs %d %s slots; the cluster has "
		    "%d free (spare nodes excluded)", job->name, ranks,
		    spec_device_name(job->resources.device), total);
		free(freeslots);
		return -1;
	}
	if (errlen > 0)
		err[0] = '\0';
	rc = place_strategy_of(job->resources.placement)->place(c, job,
	    freeslots, node_of, err, errlen);
	if (rc == 0) {
		for (int r = 0; r < ranks; r++)
			used[node_of[r]]++;
	}
	free(freeslots);
	return rc;
}
