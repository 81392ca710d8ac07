/*
 * launch.h: the launch order, the backend's command that starts one rank
 * ({"t": "cmd", "cmd": "launch", ...}): what the agent needs to start it
 * and what the rank needs to join its group and train.  One field list
 * (record.h); a new field is one line here, set by the backend
 * (backend/core/backend-jobs.c) and read by the worker or the agent.
 */
#ifndef HUNTER_LAUNCH_H
#define HUNTER_LAUNCH_H

#include "backend/spec/spec.h"
#include "backend/proto/record.h"

#define LAUNCH_DIR_MAX	(SPEC_PATH_MAX + 320)	/* the state dir's, too */

#define LAUNCH_FIELDS(X)						\
	X(job, STR, SPEC_NAME_MAX, REQ)	/* the job's name */		\
	X(rank, INT, 0, REQ)						\
	X(world, INT, 0, REQ)						\
	X(generation, INT, 0, REQ)	/* of the group, from 0 */	\
	X(run, LONG, 0, REQ)		/* the launch's unique id */	\
	X(node, STR, SPEC_NAME_MAX, REQ)	/* where it runs */	\
	X(addr, STR, 256, REQ)		/* where it binds Gloo */	\
	X(local_rank, INT, 0, REQ)	/* among the job's on its node */ \
	X(host_slots, INT, 0, REQ)	/* of every node on its host */	\
	X(host_ranks, INT, 0, OPT)	/* the job's ranks on its host */ \
	X(spec_file, STR, SPEC_PATH_MAX, REQ)				\
	X(spec_yaml, TEXT, 0, REQ)	/* the job file's text */	\
	X(checkpoint_dir, STR, LAUNCH_DIR_MAX, REQ)			\
	X(resume, BOOL, 0, REQ)		/* from the newest checkpoint */ \
	X(timeout_ms, INT, 0, REQ)	/* of a collective: the heartbeat's */ \
	X(stop_after_epochs, INT, 0, REQ)	/* 0: run to the end */	\
	X(trace_steps, INT, 0, REQ)	/* step frames for the first N */ \
	X(slow_data_ms, INT, 0, REQ)	/* --inject faults: 0 = none */	\
	X(slow_sample_us, INT, 0, REQ)					\
	X(slow_ms, INT, 0, REQ)						\
	X(log_flood, INT, 0, REQ)					\
	X(leak_bytes, LONG, 0, REQ)					\
	X(crash_at, LONG, 0, REQ)					\
	X(program, JSON, 0, OPT)	/* a program job's: argv, env, ... */ \
	X(global_batch, INT, 0, OPT)	/* an adaptive batch's choice ... */ \
	X(lr, REAL, 0, OPT)		/* ... and its lr.base (goodput_lr) */

struct launch_order {
	LAUNCH_FIELDS(RECORD_MEMBER)
	uint64_t	 have;		/* LAUNCH_F_program: a program's;
					 * LAUNCH_F_global_batch, _lr: an
					 * adaptive job's */
};

#define LAUNCH_BIT(f, ...)	RECORD_BIT(LAUNCH_F_, f)
enum { LAUNCH_FIELDS(LAUNCH_BIT) LAUNCH_NFIELDS };
#undef LAUNCH_BIT

/* The launch frame of l: a new object, or NULL with err. */
json_t	*launch_pack(const struct launch_order *, char *err, size_t errlen);
/* Read a launch frame into l (zeroed here).  0, or -1 with err naming the
 * field; launch_free(l) either way. */
int	 launch_unpack(const json_t *msg, struct launch_order *, char *err,
	    size_t errlen);
void	 launch_free(struct launch_order *);

#endif
