/*
 * train.h: the train loop of one rank.  It owns the data, the model, the
 * optimizer and the checkpoints; what crosses ranks (the gradient
 * exchange) and what the outside sees (epoch reports, events, stop
 * requests) goes through hooks, so the same loop serves `hunter run` with
 * one rank and `hunter worker` in a group.
 */
#ifndef HUNTER_TRAIN_H
#define HUNTER_TRAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/spec/spec.h"
#include "backend/proto/event.h"
#include "backend/proto/metrics.h"
#include "backend/proto/summary.h"
#include "backend/worker/autotune.h"

struct epoch_report {
	const char	*job;
	int		 epoch;		/* 1-based, the one just finished */
	int		 epochs;
	long		 step;
	double		 loss;		/* mean training loss over the epoch */
	int		 has_acc;	/* images: test_acc; tokens: none */
	double		 test_acc;
	double		 test_loss;	/* tokens: validation nats a token */
	int		 tokens;	/* tokens a sample (the context); 0:
					 * images */
	double		 samples_per_s;
	double		 data_wait_pct;
	double		 lr;
};

/* The run's end: the summary frame's fields (summary.h; what was not
 * measured is left out, as a stopped job's evaluation), and the CRC of
 * the final parameters, which each rank reports in its finished event. */
struct train_summary {
	struct job_summary f;
	char		 params_crc32[9];
};

/* Controls that every rank must act on at the same step: requests ride
 * the gradient exchange, and a control happens when any rank asks. */
enum train_ctl { CTL_STOP, CTL_PAUSE, CTL_CHECKPOINT, CTL_COUNT };

struct train_hooks {
	void	*ctx;
	/* Sum n floats across ranks in place; NULL with one rank. */
	int	(*allreduce)(void *ctx, float *buf, size_t n, char *err,
		    size_t errlen);
	/* Sum n floats across ranks where rank r keeps the counts[r] after
	 * the earlier ranks' (comm_reduce_scatter_f32); NULL with one
	 * rank. */
	int	(*reduce_scatter)(void *ctx, float *buf, size_t n,
		    const size_t *counts, char *err, size_t errlen);
	/* Copy rank 0's len bytes to every rank; NULL with one rank. */
	int	(*broadcast)(void *ctx, void *buf, size_t len, char *err,
		    size_t errlen);
	/* Gather each rank's lens[rank] bytes into out, in rank order. */
	int	(*allgatherv)(void *ctx, const void *in, void *out,
		    const size_t *lens, char *err, size_t errlen);
	/* A transfer in the background to or from rank peer
	 * (comm_xfer_start: send when send, else receive), and the wait for
	 * it, which frees it; NULL where the collectives have none. */
	void	*(*xfer_start)(void *ctx, void *buf, size_t len, int peer,
		    int send, uint32_t tag, char *err, size_t errlen);
	int	(*xfer_wait)(void *ctx, void *xfer, char *err, size_t errlen);
	/* Sum n counters across ranks in place; NULL with one rank. */
	int	(*sum_u64)(void *ctx, uint64_t *v, int n, char *err,
		    size_t errlen);
	/* After every step, on every rank: what the step measured, as the
	 * rank's metrics frame carries it (the process's own figures, its
	 * memory and pid, are the caller's to add). */
	void	(*on_step)(void *ctx, const struct rank_report *);
	/* The micro-batch search's trials and outcome (rank 0). */
	void	(*on_autotune)(void *ctx, const struct autotune_trial *, int n,
		    int micro, int accum, double seconds);
	void	(*on_epoch)(void *ctx, const struct epoch_report *);
	/* train.eval_every (rank 0): the validation loss at this step, and
	 * the accuracy of a model that has one (else NULL). */
	void	(*on_eval)(void *ctx, long step, const double *loss,
		    const double *acc);
	void	(*on_event)(void *ctx, enum event_kind, const char *reason);
	/* The controls this rank asks for (bit i: enum train_ctl i). */
	unsigned (*requests)(void *ctx);
	/* The ranks agreed on these controls at this step (same bits on
	 * every rank). */
	void	(*agreed)(void *ctx, unsigned bits);
	/* Paused at a step boundary: block until resumed (return 0) or asked
	 * to stop (return 1). */
	int	(*paused)(void *ctx);
};

struct train_config {
	const struct job_spec *job;
	int		 rank, world;
	const char	*checkpoint_dir;	/* "" = no checkpoints */
	long long	 run;			/* the backend's id of the run */
	bool		 resume;
	int		 stop_after_epochs;	/* 0 = run to the end */
	int		 slow_data_ms;		/* --inject slow-data=MS */
	int		 slow_sample_us;	/* --inject slow-sample=US */
	int		 slow_ms;		/* --inject slow=MS: per step */
	long		 leak_bytes;		/* --inject leak=BYTES: per step */
	long		 crash_at;		/* --inject crash-at=STEP; 0 = no */
	bool		 data_inline;		/* no prefetch thread (loader.c) */
};

/* Run the job to its end (or a stop).  Returns 0, or -1 with err set. */
int	train_run(const struct train_config *, const struct train_hooks *,
	    struct train_summary *, char *err, size_t errlen);

#endif
