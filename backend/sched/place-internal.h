/*
 * place-internal.h: what the placement strategies share with place.c.
 * Each strategy lives in its own place-NAME.c and exports one const
 * struct place_strategy; place.c holds the table and the common part
 * (free slots, the capacity check, the used count).
 */
#ifndef HUNTER_PLACE_INTERNAL_H
#define HUNTER_PLACE_INTERNAL_H

#include <stddef.h>

#include "backend/spec/spec.h"

struct place_strategy {
	enum spec_placement placement;	/* the job file's resources.placement */
	/* Put job's ranks on nodes: node_of[r] for each rank, taking slots
	 * from freeslots[] (per node; spares are 0).  The total is known to
	 * be enough.  0 (with a note in err, which starts empty), or -1
	 * with the reason in err. */
	int	(*place)(const struct cluster_spec *, const struct job_spec *,
		    int *freeslots, int *node_of, char *err, size_t errlen);
};

extern const struct place_strategy place_pack;
extern const struct place_strategy place_spread;
extern const struct place_strategy place_rack;

#endif
