/*
 * queue.c: queue order and backfill over place_job().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xmalloc.h"
#include "backend/sched/place.h"
#include "backend/sched/queue.h"

int
queue_admissible(const struct cluster_spec *c, const struct job_spec *job,
    char *err, size_t errlen)
{
	int	*used = xcalloc((size_t)c->n_nodes, sizeof *used);
	int	*node_of = xcalloc((size_t)job->resources.ranks, sizeof *node_of);
	int	 rc = place_job(c, job, used, node_of, err, errlen);

	free(used);
	free(node_of);
	return rc;
}

static const struct queue_entry *sort_base;

/* Higher priority first, then earlier submission, then entry order. */
static int
queue_cmp(const void *a, const void *b)
{
	const struct queue_entry *x = &sort_base[*(const int *)a];
	const struct queue_entry *y = &sort_base[*(const int *)b];

	if (x->spec->priority != y->spec->priority)
		return (int)y->spec->priority - (int)x->spec->priority;
	if (x->submitted != y->submitted)
		return x->submitted < y->submitted ? -1 : 1;
	return *(const int *)a - *(const int *)b;
}

int
queue_schedule(const struct cluster_spec *c, int *used, struct queue_entry *e,
    int n)
{
	int	*order = xcalloc((size_t)n + 1, sizeof *order);
	int	 placed = 0;
	char	 err[256];

	for (int i = 0; i < n; i++)
		order[i] = i;
	sort_base = e;
	qsort(order, (size_t)n, sizeof *order, queue_cmp);
	/* In order; a job that does not fit now stays, and those behind it
	 * are still tried: that is the backfill. */
	for (int k = 0; k < n; k++) {
		struct queue_entry *q = &e[order[k]];

		if (q->placed)
			continue;
		if (place_job(c, q->spec, used, q->node_of, err, sizeof err) == 0) {
			snprintf(q->note, sizeof q->note, "%s", err);
			q->placed = true;
			placed++;
		}
	}
	free(order);
	return placed;
}
