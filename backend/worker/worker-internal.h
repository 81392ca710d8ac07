/*
 * worker-internal.h: one rank's state, shared by worker.c (the process:
 * launch, link, reader and heartbeat threads, collectives) and
 * worker-hooks.c (the train loop's hooks).  Not for other modules.
 */
#ifndef HUNTER_WORKER_INTERNAL_H
#define HUNTER_WORKER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include <jansson.h>

#include "lib/evloop.h"
#include "lib/blas.h"
#include "backend/spec/spec.h"
#include "backend/proto/metrics.h"
#include "backend/proto/proto.h"
#include "backend/worker/train.h"

/* The resume command's slot in worker.seq and worker.done. */
#define CMD_RESUME CTL_COUNT

struct worker {
	int		 fd;
	pthread_mutex_t	 send_lock;	/* guards q */
	struct proto_queue q;		/* what goes to the agent */
	struct evloop	*loop;		/* the reader thread's; rung when
					 * bytes wait in q */
	pthread_mutex_t	 box_lock;
	pthread_cond_t	 box_cond;
	json_t		*box;		/* store answers, by "req" */
	bool		 link_down;
	long		 next_req;
	atomic_int	 stop;		/* SIGTERM or a lost link: stop now */
	/* Commands by kind (enum train_ctl, and resume): the newest sequence
	 * number received, and how many were agreed (or, for resume, done).
	 * Agreements happen in step with every other rank, so `done` is the
	 * same everywhere and a command that reaches a rank late is not
	 * acted on twice. */
	atomic_long	 seq[CTL_COUNT + 1];
	long		 done[CTL_COUNT + 1];
	_Atomic double	 last_sent;	/* when metrics last went out */
	atomic_long	 last_step;	/* the newest step, for heartbeats */
	atomic_int	 paused;	/* held at a step boundary */
	atomic_int	 quit;		/* the heartbeat thread ends */

	struct job_spec	 job;
	char		 node[64];
	int		 rank, world, generation;
	int		 trace_steps;
	int		 log_flood;	/* --inject log-flood: lines a second */
	double		 flood_t0;	/* when the flood began */
	long		 flood_n;	/* lines printed since */
	struct comm	*comm;
	double		 last_metrics;
	struct rank_report last_report;	/* the newest step's */
	bool		 report_unsent;	/* it has not gone out */
	struct blas_info blas;		/* the kernel this rank runs */
	double		 blas_err;	/* blas_check()'s, at the start */
	double		 peak_gflops;	/* its cached peak; 0: none */
	bool		 mfu_warned;	/* the peak is below the rank's rate */
};

/* Send a frame to the agent (takes msg); any thread may, and none waits
 * for the agent to read. */
void	worker_send(struct worker *, json_t *msg);
/* Send what waits, as long as the agent lives (a rank's last frames). */
void	worker_drain(struct worker *);
/* Once the agent reads again, a "dropped" event if frames were lost. */
void	worker_report_drops(struct worker *);
/* A metrics frame of this rank with the known figures of rr. */
json_t	*worker_metrics(struct worker *, const struct rank_report *rr);

/* The BLAS kernel this rank runs, checked against the reference GEMM
 * (lib/blas.h), and its cached peak: 0, or -1 with why it must not train
 * with that kernel. */
int	worker_blas(struct worker *, char *err, size_t errlen);
/* The "started" event ev (taken; returned) with the kernel in its
 * fields and in reason. */
json_t	*worker_blas_started(struct worker *, json_t *ev, const char *reason);
/* The peak and the MFU of a report (valid bits included). */
void	worker_blas_report(struct worker *, struct rank_report *);

/* The hooks (worker-hooks.c); ctx is the struct worker. */
void	worker_on_step(void *ctx, const struct rank_report *);
/* Send the last step's metrics if they have not gone out yet, so the
 * backend (and its Prometheus series) ends on the final step. */
void	worker_flush_metrics(struct worker *);
void	worker_on_autotune(void *ctx, const struct autotune_trial *, int n,
	    int micro, int accum, double seconds);
void	worker_on_epoch(void *ctx, const struct epoch_report *);
void	worker_on_eval(void *ctx, long step, const double *loss,
	    const double *acc);
void	worker_on_event(void *ctx, enum event_kind, const char *reason);
unsigned worker_requests(void *ctx);
void	worker_agreed(void *ctx, unsigned bits);
int	worker_paused(void *ctx);
void	worker_summary(struct worker *, const struct train_summary *);
int	worker_reduce_scatter(void *ctx, float *buf, size_t n,
	    const size_t *counts, char *err, size_t errlen);
int	worker_allreduce(void *ctx, float *buf, size_t n, char *err,
	    size_t errlen);
int	worker_broadcast(void *ctx, void *buf, size_t len, char *err,
	    size_t errlen);
int	worker_allgatherv(void *ctx, const void *in, void *out,
	    const size_t *lens, char *err, size_t errlen);
void	*worker_xfer_start(void *ctx, void *buf, size_t len, int peer,
	    int send, uint32_t tag, char *err, size_t errlen);
int	worker_xfer_wait(void *ctx, void *xfer, char *err, size_t errlen);
int	worker_sum_u64(void *ctx, uint64_t *v, int n, char *err,
	    size_t errlen);

#endif
