/*
 * queue.h: the job queue.  Waiting jobs are taken by priority, then by
 * time of submission; when the head cannot fit now, smaller jobs behind
 * it that do fit go first (backfill).  A job that could never fit, even
 * on an empty cluster, is refused with the reason.
 */
#ifndef HUNTER_QUEUE_H
#define HUNTER_QUEUE_H

#include <stdbool.h>
#include <stddef.h>

#include "backend/spec/spec.h"

struct queue_entry {
	const struct job_spec *spec;
	double		 submitted;	/* any clock; earlier goes first */
	bool		 placed;	/* set by queue_schedule */
	int		*node_of;	/* caller's array of spec->resources.ranks */
	char		 note[256];	/* placement's note once placed (place.h) */
};

/* Whether the job could ever fit the cluster (spares excluded).  0, or
 * -1 with the reason. */
int	queue_admissible(const struct cluster_spec *, const struct job_spec *,
	    char *err, size_t errlen);

/* Place what fits of the unplaced entries, in queue order with backfill;
 * used[] is updated.  Returns the number placed. */
int	queue_schedule(const struct cluster_spec *, int *used,
	    struct queue_entry *, int n);

#endif
