/*
 * summary.h: the summary frame, rank 0's account of its run as it ends
 * ({"t": "summary", ...}; docs/architecture.md, "Frames").  One field list
 * (record.h): the worker and a program's agent send it, core keeps it
 * (struct job_state.sum) and the front ends print it.  What a rank did
 * not measure is left out, and its bit in `have` is clear: unknown is
 * never 0.  The state is the rank's own account; the job's phase is the
 * backend's verdict over every rank (backend/core/job.c).
 */
#ifndef HUNTER_SUMMARY_H
#define HUNTER_SUMMARY_H

#include "backend/spec/spec.h"
#include "backend/proto/record.h"

#define SUMMARY_FIELDS(X)						\
	X(job, STR, SPEC_NAME_MAX, REQ)					\
	X(state, STR, 16, REQ)		/* finished | stopped | failed */ \
	X(steps, LONG, 0, REQ)		/* optimizer steps done */	\
	X(epochs, INT, 0, OPT)		/* epochs completed */		\
	X(world, INT, 0, OPT)						\
	X(test_acc, REAL, 0, OPT)	/* images, once evaluated */	\
	X(val_loss, REAL, 0, OPT)	/* tokens: nats a token */	\
	X(perplexity, REAL, 0, OPT)					\
	X(samples_per_s, REAL, 0, OPT)					\
	X(tokens_per_s, REAL, 0, OPT)					\
	X(data_wait_pct, REAL, 0, OPT)					\
	X(wall_s, REAL, 0, OPT)		/* this generation's */		\
	X(bytes_sent, LONG, 0, OPT)	/* every rank's, every step */	\
	X(bytes_dense, LONG, 0, OPT)					\
	X(optimizer_bytes, LONG, 0, OPT)	/* rank 0's */		\
	X(micro_batch, INT, 0, OPT)					\
	X(accum, INT, 0, OPT)						\
	X(checkpoint, STR, SPEC_PATH_MAX + 320, OPT)	/* the last one */ \
	X(checkpoint_error, STR, 512, OPT)	/* why the final one failed */

struct job_summary {
	SUMMARY_FIELDS(RECORD_MEMBER)
	uint64_t	 have;		/* SUMMARY_F_x: field x was reported */
};

#define SUMMARY_BIT(f, ...)	RECORD_BIT(SUMMARY_F_, f)
enum { SUMMARY_FIELDS(SUMMARY_BIT) SUMMARY_NFIELDS };
#undef SUMMARY_BIT

#define SUMMARY_HAS(s, f)	(((s)->have >> SUMMARY_F_##f) & 1)
#define SUMMARY_SET(s, f, v)	((s)->f = (v), \
	(s)->have |= (uint64_t)1 << SUMMARY_F_##f)

/* The fields of s into obj (a frame, or a line of hunter run --json).
 * 0, or -1 with err. */
int	summary_pack(const struct job_summary *, json_t *obj, char *err,
	    size_t errlen);
/* A summary frame into s (zeroed here).  0, or -1 with err. */
int	summary_unpack(const json_t *msg, struct job_summary *, char *err,
	    size_t errlen);
/* Field name of s as a number, if it is one that was reported. */
bool	summary_number(const struct job_summary *, const char *name,
	    double *v);

#endif
