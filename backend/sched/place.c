/*
 * place.c: placement.  pack fills nodes in order; spread puts each rank
 * on the least-loaded node; rack splits the ranks into groups of
 * group_size, each group packed into one rack, the racks taken in turn so
 * load stays balanced.  Spare nodes are never used here.
 */
#include <stdio.h>
#include <string.h>

#include "backend/sched/place.h"

static int
node_slots(const struct node_spec *n, const struct job_spec *job)
{
	if (n->spare)
		return 0;
	return job->resources.device == DEVICE_CUDA ? n->cuda_slots : n->cpu_slots;
}

/* The node of rack (or any rack, if rack is NULL) with a free slot:
 * pack takes the first, spread the one with the most free slots. */
static int
pick(const struct cluster_spec *c, const struct job_spec *job, const int *used,
    const char *rack, int spread)
{
	int	 best = -1, best_free = 0;

	for (int i = 0; i < c->n_nodes; i++) {
		int	 free_slots = node_slots(&c->nodes[i], job) - used[i];

		if (free_slots <= 0 || (rack != NULL &&
		    strcmp(c->nodes[i].rack, rack) != 0))
			continue;
		if (!spread)
			return i;
		if (free_slots > best_free) {
			best = i;
			best_free = free_slots;
		}
	}
	return best;
}

static int
rack_free(const struct cluster_spec *c, const struct job_spec *job,
    const int *used, const char *rack)
{
	int	 n = 0;

	for (int i = 0; i < c->n_nodes; i++) {
		if (strcmp(c->nodes[i].rack, rack) == 0)
			n += node_slots(&c->nodes[i], job) - used[i];
	}
	return n;
}

int
place_job(const struct cluster_spec *c, const struct job_spec *job, int *used,
    int *node_of, char *err, size_t errlen)
{
	int	 ranks = job->resources.ranks, total = 0, group, r = 0;
	int	 taken[4096];

	for (int i = 0; i < c->n_nodes; i++)
		total += node_slots(&c->nodes[i], job) - used[i];
	if (total < ranks) {
		snprintf(err, errlen, "job %s needs %d %s slots; the cluster has "
		    "%d free (spare nodes excluded)", job->name, ranks,
		    spec_device_name(job->resources.device), total);
		return -1;
	}
	if (c->n_nodes > (int)(sizeof taken / sizeof taken[0])) {
		snprintf(err, errlen, "too many nodes");
		return -1;
	}
	memcpy(taken, used, sizeof(int) * (size_t)c->n_nodes);
	group = job->resources.group_size > 0 ? job->resources.group_size : 1;
	while (r < ranks) {
		int	 n = -1, want = ranks - r < group ? ranks - r : group;

		if (job->resources.placement == PLACEMENT_RACK) {
			/* Of the racks that can take a group, the one holding
			 * fewest of this job's ranks, then the one with most room. */
			const char *best = NULL;
			int	 best_free = 0, best_mine = 0;

			for (int i = 0; i < c->n_nodes; i++) {
				const char *rack = c->nodes[i].rack;
				int f = rack_free(c, job, taken, rack);
				int mine = rack_free(c, job, used, rack) - f;

				if (f < want)
					continue;
				if (best == NULL || mine < best_mine ||
				    (mine == best_mine && f > best_free)) {
					best = rack;
					best_free = f;
					best_mine = mine;
				}
			}
			if (best == NULL) {
				snprintf(err, errlen, "job %s: no rack has %d free "
				    "slots for a group (group_size %d)", job->name,
				    want, group);
				return -1;
			}
			for (int k = 0; k < want; k++, r++) {
				n = pick(c, job, taken, best, 0);
				taken[n]++;
				node_of[r] = n;
			}
			continue;
		}
		n = pick(c, job, taken, NULL,
		    job->resources.placement == PLACEMENT_SPREAD);
		taken[n]++;
		node_of[r++] = n;
	}
	memcpy(used, taken, sizeof(int) * (size_t)c->n_nodes);
	return 0;
}
