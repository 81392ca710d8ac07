/*
 * backend-sim.h: a backend over a synthetic cluster, for the console's
 * benchmark and for trying the console without agents: no state
 * directory, no agents, no workers.  Its thread fills the node views
 * with noisy metrics once a second and runs one job of a few ranks
 * whose step, loss and throughput move like a real one's; the control
 * commands (pause, resume, checkpoint, migrate, stop) act on it and
 * answer with the usual events.  backend_submit() and backend_attach()
 * must not be called on it.
 */
#ifndef HUNTER_BACKEND_SIM_H
#define HUNTER_BACKEND_SIM_H

#include <stdint.h>

#include "backend/core/backend.h"

/* nodes in racks (the last node of each rack a spare), seeded. */
struct backend	*backend_open_sim(int nodes, int racks, uint64_t seed);
/* Start its thread (instead of backend_start()) with an observer, which
 * may be NULL.  Close it with backend_close(). */
int		 backend_sim_start(struct backend *,
		    const struct backend_observer *);

#endif
