/*
 * detect.h: the detectors, as policy.  Each is a pure function over a
 * snapshot of one job (struct detect_job: what a detector may see of the
 * job, its ranks and the nodes) that returns decisions (struct
 * detect_decision); the backend builds the snapshot once a second,
 * applies the decisions, journals them and raises the events
 * (backend/core/backend-detect.c).  The detectors are a const table, one
 * detect-NAME.c each, run in table order: the first that decides ends
 * the round, so a dead rank is dealt with before a slow one, and a slow
 * one before a leak.
 */
#ifndef HUNTER_DETECT_H
#define HUNTER_DETECT_H

#include <stdbool.h>

#include "lib/series.h"
#include "backend/spec/spec.h"

/* The most ranks the straggler and utilisation detectors compare; ranks
 * past it are not judged. */
#define DETECT_SLOW_MAX	1024

struct detect_node {
	const char	*name;
	bool		 spare;
	bool		 up;		/* linked to its agent */
	double		 heard;		/* CLOCK_MONOTONIC of its agent's last
					 * frame (node metrics come each second) */
	int		 cpu_free;	/* CPU slots less those taken */
};

struct detect_rank {
	int		 node;		/* index into detect_job.nodes */
	bool		 running;	/* launched and not yet exited */
	bool		 paused;
	double		 last_seen;	/* CLOCK_MONOTONIC of the last metrics */
	double		 kill_sent;	/* when a kill went out; 0 = none */
	double		 absent_since;	/* its agent's hello lacked it; 0 =
					 * listed, or not asked */
	/* One value per metrics frame, oldest first. */
	const struct series *compute_ms, *step_ms, *comm_ms, *rss, *step;
};

struct detect_job {
	const char	*name;
	const struct job_spec *spec;	/* policy, resources */
	int		 world, generation;
	const struct detect_rank *ranks;	/* world of them */
	const struct detect_node *nodes;
	int		 nnodes;
	bool		 paused;
	bool		 reforming;	/* a re-formation is under way */
	double		 reform_since;	/* CLOCK_MONOTONIC */
	double		 fail_since;	/* a rank failed; its failover is due */
	double		 grace_until;	/* detectors wait after a launch */
	double		 now;		/* CLOCK_MONOTONIC */
};

enum detect_kind {
	DETECT_KILL,		/* kill rank (an event when reason is set) */
	DETECT_LOST,		/* rank is lost (reason); fail over */
	DETECT_FAILOVER,	/* the failover that is due */
	DETECT_MIGRATE,		/* move rank to node (reason: why); node -1:
				 * there is nowhere better, it stays */
	DETECT_RESTART,		/* checkpoint and restart in place (reason) */
	DETECT_LEAVE,		/* leave rank behind: count it as exited */
};

struct detect_decision {
	enum detect_kind kind;
	int		 rank;		/* -1: the job */
	int		 node;		/* DETECT_MIGRATE's; else -1 */
	char		 reason[256];
};

struct detector {
	const char	*name;
	/* Up to max decisions into out; returns how many. */
	int		(*run)(const struct detect_job *,
			    struct detect_decision *out, int max);
};

extern const struct detector *const detect_table[];

/* The detector called name, or NULL. */
const struct detector *detect_find(const char *name);

/* One round: the detectors in table order until one decides.  Returns
 * the number of decisions in out (at most max; max >= world + 1 leaves
 * room for every rank). */
int	detect_run(const struct detect_job *, struct detect_decision *out,
	    int max);

#endif
