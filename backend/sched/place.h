/*
 * place.h: placement of a job's ranks on the nodes of a cluster, by the
 * strategy its job file names (resources.placement: pack, spread, rack;
 * one place-NAME.c each, in place_table).  Capacity is counted in device
 * slots; spare nodes are held back for failover.
 */
#ifndef HUNTER_PLACE_H
#define HUNTER_PLACE_H

#include <stddef.h>

#include "backend/spec/spec.h"

/*
 * Place job's ranks: node_of[r] gets a node index for each rank.  used[i]
 * holds slots already taken on node i (updated).  Returns 0 with a note
 * in err ("" when there is nothing to say; rack placement says when it
 * split a group over racks), or -1 with the reason in err when the job
 * cannot fit.
 */
int	place_job(const struct cluster_spec *, const struct job_spec *,
	    int *used, int *node_of, char *err, size_t errlen);

#endif
