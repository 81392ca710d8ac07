/*
 * place-rack.c: rack: the ranks in groups, each group packed into one
 * rack, taking first the rack that holds fewest of this job's ranks (so
 * a job's groups spread over the racks), then the tightest rack that fits
 * (so free slots stay in big pieces for the next job).  A group is
 * group_size ranks; when the job names none, the whole job when one rack
 * has room for it, so a job that fits in a rack stays in one, else its
 * ranks divided by the racks that have free slots, rounded up (400 ranks
 * on 4 racks of 128 slots: 4 x 100).
 *
 * Racks are a preference: when no rack holds a whole group, the group is
 * split over the racks with the most free slots, and the note says so.
 * Only strict: true refuses instead.  O(nodes x racks) to index the
 * racks, then about linear in nodes and ranks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/errf.h"
#include "lib/xmalloc.h"
#include "backend/sched/place-internal.h"

struct racks {
	int	 n;
	int	*of;		/* per node: its rack */
	int	*first;		/* per rack: its first node, for the name */
	int	*free;		/* per rack: free slots */
	int	*mine;		/* per rack: this job's ranks there */
};

static void
racks_index(struct racks *rk, const struct cluster_spec *c,
    const int *freeslots)
{
	int	 n = c->n_nodes;

	rk->of = xcalloc((size_t)n + 1, sizeof *rk->of);
	rk->first = xcalloc((size_t)n + 1, sizeof *rk->first);
	rk->free = xcalloc((size_t)n + 1, sizeof *rk->free);
	rk->mine = xcalloc((size_t)n + 1, sizeof *rk->mine);
	rk->n = 0;
	for (int i = 0; i < n; i++) {
		int k = 0;

		while (k < rk->n && strcmp(c->nodes[rk->first[k]].rack,
		    c->nodes[i].rack) != 0)
			k++;
		if (k == rk->n)
			rk->first[rk->n++] = i;
		rk->of[i] = k;
		rk->free[k] += freeslots[i];
	}
}

static void
racks_free(struct racks *rk)
{
	free(rk->of);
	free(rk->first);
	free(rk->free);
	free(rk->mine);
}

/* Put up to want ranks from r on rack k's nodes, in node order. */
static int
racks_take(struct racks *rk, const struct cluster_spec *c, int k, int want,
    int *freeslots, int *node_of, int r)
{
	int	 took = 0;

	for (int i = 0; i < c->n_nodes && took < want; i++) {
		while (rk->of[i] == k && freeslots[i] > 0 && took < want) {
			freeslots[i]--;
			node_of[r + took++] = i;
		}
	}
	rk->free[k] -= took;
	rk->mine[k] += took;
	return took;
}

/* The group size: the job's; else the whole job when one rack has room
 * for it (it stays in one rack); else its ranks over the racks with
 * room. */
static int
racks_group(const struct racks *rk, const struct job_spec *job)
{
	int	 with_room = 0, ranks = job->resources.ranks;

	if (job->resources.group_size > 0)
		return job->resources.group_size;
	for (int k = 0; k < rk->n; k++) {
		if (rk->free[k] >= ranks)
			return ranks;
	}
	for (int k = 0; k < rk->n; k++)
		with_room += rk->free[k] > 0;
	with_room = with_room > 0 ? with_room : 1;
	return (ranks + with_room - 1) / with_room;
}

/*
 * Split a group of want ranks over the racks with the most free slots
 * (the fewest racks), naming them in note for the first group split.
 */
static void
racks_split(struct racks *rk, const struct cluster_spec *c, int group_no,
    int want, int *freeslots, int *node_of, int r, char *note, size_t len)
{
	size_t	 off = strlen(note);
	int	 first = off == 0, put = 0;

	if (first)
		off += (size_t)snprintf(note, len, "group %d split over racks ",
		    group_no);
	while (put < want) {
		int best = -1;

		for (int k = 0; k < rk->n; k++) {
			if (rk->free[k] > 0 && (best < 0 ||
			    rk->free[k] > rk->free[best]))
				best = k;
		}
		if (best < 0)
			break;		/* place.c counted enough slots */
		if (first && off < len)
			off += (size_t)snprintf(note + off, len - off, "%s%s",
			    put > 0 ? ", " : "", c->nodes[rk->first[best]].rack);
		put += racks_take(rk, c, best, want - put, freeslots, node_of,
		    r + put);
	}
	if (first && off < len)
		snprintf(note + off, len - off, ": no rack has %d free slots",
		    want);
}

static int
place_rack_run(const struct cluster_spec *c, const struct job_spec *job,
    int *freeslots, int *node_of, char *err, size_t errlen)
{
	struct racks	 rk;
	int		 ranks = job->resources.ranks, r = 0, rc = 0, g = 0;
	int		 group, split = 0;
	char		 note[256] = "";

	racks_index(&rk, c, freeslots);
	group = racks_group(&rk, job);
	while (r < ranks) {
		int	 want = ranks - r < group ? ranks - r : group, best = -1;

		g++;
		for (int k = 0; k < rk.n; k++) {
			if (rk.free[k] < want)
				continue;
			/* Fewest of this job's ranks first (balance), then the
			 * tightest rack that fits (less fragmentation). */
			if (best < 0 || rk.mine[k] < rk.mine[best] ||
			    (rk.mine[k] == rk.mine[best] &&
			    rk.free[k] < rk.free[best]))
				best = k;
		}
		if (best >= 0) {
			r += racks_take(&rk, c, best, want, freeslots, node_of, r);
			continue;
		}
		if (job->resources.strict) {
			errf(err, errlen, "job %s: no rack has %d free slots "
			    "for a group (group_size %d, strict)", job->name,
			    want, group);
			rc = -1;
			break;
		}
		racks_split(&rk, c, g, want, freeslots, node_of, r, note,
		    sizeof note);
		r += want;
		split++;
	}
	if (rc == 0 && split > 1)
		errf(err, errlen, "%s (and %d more group%s split)", note,
		    split - 1, split == 2 ? "" : "s");
	else if (rc == 0)
		errf(err, errlen, "%s", note);
	racks_free(&rk);
	return rc;
}

const struct place_strategy place_rack = {
	.placement = PLACEMENT_RACK,
	.place = place_rack_run,
};
