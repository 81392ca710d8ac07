/*
 * job.h: a job's life and its ranks' (docs/architecture.md, "A job's
 * life"): the phases, the legal moves between them, and their names on
 * the wire and in Prometheus.  What moves a job or a rank from one phase
 * to another is backend/core/job.c, and nothing else: front ends only
 * read the phase.
 */
#ifndef HUNTER_JOB_H
#define HUNTER_JOB_H

#include <stdbool.h>

/*
 *	X(ID, name, severity, help)
 * severity is how the console colours a move into the phase (info, warn
 * or error, as event.h's).
 */
#define JOB_PHASES(X)							\
	X(QUEUED, "queued", INFO, "waiting for slots")			\
	X(PLACING, "placing", INFO,					\
	    "given nodes; its ranks are being started")			\
	X(RUNNING, "running", INFO, "its ranks train")			\
	X(PAUSED, "paused", WARN, "its ranks hold at a step boundary")	\
	X(REFORMING, "reforming", WARN, "stopping at a step, to start "	\
	    "again as the next generation (a failover, a migration, a "	\
	    "restart)")							\
	X(RESIZING, "resizing", WARN, "stopping at a step, to start "	\
	    "again with another number of ranks")			\
	X(STOPPING, "stopping", INFO, "checkpointing at a step, to end") \
	X(FINISHED, "finished", INFO, "every rank trained to the end")	\
	X(STOPPED, "stopped", INFO, "ended before the end, as asked")	\
	X(FAILED, "failed", ERROR, "ended by a failure it could not get past")

#define RANK_PHASES(X)							\
	X(PENDING, "pending", INFO, "not launched yet")			\
	X(RUNNING, "running", INFO, "launched, and not known to have ended") \
	X(EXITED, "exited", INFO, "ended as it was asked to, or well")	\
	X(FAILED, "failed", ERROR, "died, or could not be launched")	\
	X(LEFT, "left", WARN, "did not exit when asked: left behind")

#define JOB_PHASE_ENUM(id, ...)		JOB_##id,
#define RANK_PHASE_ENUM(id, ...)	RANK_##id,
enum job_phase { JOB_PHASES(JOB_PHASE_ENUM) JOB_PHASE_COUNT };
enum rank_phase { RANK_PHASES(RANK_PHASE_ENUM) RANK_PHASE_COUNT };
#undef JOB_PHASE_ENUM
#undef RANK_PHASE_ENUM

const char	*job_phase_name(enum job_phase);	/* "running" */
const char	*rank_phase_name(enum rank_phase);
/* A wire name back into a phase: 0 and *p, or -1. */
int		 job_phase_named(const char *, enum job_phase *p);
int		 rank_phase_named(const char *, enum rank_phase *p);
/* 0 info, 1 warn, 2 error (event.h's enum event_severity). */
int		 job_phase_severity(enum job_phase);
const char	*job_phase_help(enum job_phase);
/* Whether a move is in the tables. */
bool		 job_phase_legal(enum job_phase from, enum job_phase to);
bool		 rank_phase_legal(enum rank_phase from, enum rank_phase to);

/* FINISHED, STOPPED or FAILED: nothing moves it again. */
static inline bool
job_phase_final(enum job_phase p)
{
	return p == JOB_FINISHED || p == JOB_STOPPED || p == JOB_FAILED;
}

#endif
