/*
 * place-rack.c: rack: the ranks in groups of group_size, each group
 * packed into one rack, taking first the rack that holds fewest of this
 * job's ranks (so a job's groups spread over the racks), then the
 * tightest rack that fits (so free slots stay in big pieces for the next
 * job).  O(nodes x racks) to index the racks, then about linear in nodes
 * and ranks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xmalloc.h"
#include "backend/sched/place-internal.h"

/* rack_of[i] gets a dense rack number for node i; returns the count. */
static int
index_racks(const struct cluster_spec *c, int *rack_of)
{
	int	*first = xcalloc((size_t)c->n_nodes + 1, sizeof *first);
	int	 nr = 0;

	for (int i = 0; i < c->n_nodes; i++) {
		int k = 0;

		while (k < nr && strcmp(c->nodes[first[k]].rack,
		    c->nodes[i].rack) != 0)
			k++;
		if (k == nr)
			first[nr++] = i;
		rack_of[i] = k;
	}
	free(first);
	return nr;
}

static int
place_rack_run(const struct cluster_spec *c, const struct job_spec *job,
    int *freeslots, int *node_of, char *err, size_t errlen)
{
	int	 n = c->n_nodes, ranks = job->resources.ranks;
	int	 group = job->resources.group_size > 0 ? job->resources.group_size : 1;
	int	*rack_of = xcalloc((size_t)n, sizeof *rack_of);
	int	 nr = index_racks(c, rack_of), r = 0, rc = 0;
	int	*rfree = xcalloc((size_t)nr, sizeof *rfree);
	int	*mine = xcalloc((size_t)nr, sizeof *mine);

	for (int i = 0; i < n; i++)
		rfree[rack_of[i]] += freeslots[i];
	while (r < ranks) {
		int	 want = ranks - r < group ? ranks - r : group, best = -1;

		for (int k = 0; k < nr; k++) {
			if (rfree[k] < want)
				continue;
			/* Fewest of this job's ranks first (balance), then the
			 * tightest rack that fits (less fragmentation). */
			if (best < 0 || mine[k] < mine[best] ||
			    (mine[k] == mine[best] && rfree[k] < rfree[best]))
				best = k;
		}
		if (best < 0) {
			snprintf(err, errlen, "job %s: no rack has %d free slots "
			    "for a group (group_size %d)", job->name, want, group);
			rc = -1;
			break;
		}
		for (int i = 0; i < n && want > 0; i++) {
			while (rack_of[i] == best && freeslots[i] > 0 && want > 0) {
				freeslots[i]--;
				node_of[r++] = i;
				want--;
				rfree[best]--;
				mine[best]++;
			}
		}
	}
	free(rack_of);
	free(rfree);
	free(mine);
	return rc;
}

const struct place_strategy place_rack = {
	.placement = PLACEMENT_RACK,
	.place = place_rack_run,
};
