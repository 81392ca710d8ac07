/*
 * train-internal.h: the train loop's state, shared by its files
 * (train.c: setup and the step; train-exchange.c: the gradient across
 * ranks; train-ckpt.c: checkpoints and resume; train-ckpt-bg.c: a
 * checkpoint's gather under the steps; train-tune.c: the micro-batch
 * search).  Not for other modules.
 */
#ifndef HUNTER_TRAIN_INTERNAL_H
#define HUNTER_TRAIN_INTERNAL_H

#include <stdint.h>

#include "backend/worker/adaptive.h"
#include "backend/worker/autotune.h"
#include "backend/worker/checkpoint.h"
#include "backend/worker/compressor.h"
#include "backend/worker/data.h"
#include "backend/worker/model-gpu.h"
#include "backend/worker/model.h"
#include "backend/worker/optimizer.h"
#include "backend/worker/tokens.h"
#include "backend/worker/train.h"

struct overlap;
struct ckpt_bg;

/* The float after the gradients (and the controls and the adaptive
 * schedule's norm) where a rank says that its part of a checkpoint in
 * the background came late this step (train-ckpt-bg.c). */
#define TRAIN_X_CKPT_LATE	(2 + CTL_COUNT)

/* Evaluation runs in batches of this many samples (or micro, if larger). */
#define EVAL_BATCH 256

/* An evaluation: images' accuracy and loss, or tokens' loss (nats a
 * token) on the validation part. */
struct train_eval {
	double		 loss;
	double		 acc;
	int		 has_acc;
};

/* The phases of a step HUNTER_PROFILE times (train-profile.c), and
 * the two of a checkpoint. */
enum train_phase {
	TP_DATA, TP_COMPUTE, TP_ENCODE, TP_GATHER_HDR, TP_GATHER_DATA,
	TP_ALLREDUCE, TP_REDUCE_SCATTER, TP_DECODE, TP_PARAM_GATHER,
	TP_UPDATE, TP_CKPT_GATHER, TP_CKPT_WRITE, TP_CKPT_BG, TP_COUNT
};

struct train_prof {
	bool		 on;
	double		 sum[TP_COUNT];
	long		 n[TP_COUNT];
	float		*kept[TP_COUNT];	/* seconds, the first steps' */
	double		 inside;	/* of the update: other phases' */
};

struct trainer {
	const struct train_config *cfg;
	const struct train_hooks *hooks;
	const struct job_spec *job;
	struct dataset	 train, test;	/* images */
	struct token_corpus corpus;	/* tokens, text */
	int		 T;		/* tokens: the context; 0: images */
	struct model_input probe;	/* the autotuner's samples */
	int32_t		*probe_tok;
	int		 config_written;	/* config.json, this run */
	const char	*dump_dir;	/* HUNTER_DUMP (train-dump.c) */
	long		 dump_steps;
	struct model	*model;
	struct model_gpu *gpu;		/* device: cuda; else NULL */
	struct optimizer *opt;		/* zero: over this rank's shard */
	int		 zero;		/* train.zero with ranks to shard over */
	size_t		*part;		/* zero: each rank's shard, floats */
	size_t		 lo;		/* zero: where this rank's starts */
	struct optimizer *full;		/* zero, rank 0: what it resumed */
	struct loader	*loader;
	int		 micro, accum;
	long		 steps_per_epoch, total_steps;
	long		 step, step_in_epoch, last_ckpt;
	long		 skew, epoch_steps;	/* the epoch in progress's
						 * (data_pos); 0 and
						 * steps_per_epoch but where
						 * an adaptive batch changed */
	int		 epoch;
	int		 stop;		/* agreed by every rank */
	struct compressor *comp;	/* NULL: dense allreduce */
	struct overlap	*ovl;		/* train.overlap; else NULL */
	struct ckpt_bg	*bg;		/* a checkpoint in the background */
	struct ckpt_meta resumed;	/* rank 0: what it resumed from */
	int		 tuned_micro;	/* the resumed micro-batch; 0: none */
	struct autotune_trial trace[AUTOTUNE_MAX_TRIALS];
	int		 ntrace;
	double		 tune_s;		/* wall time of the search */
	struct adascale	 ada;			/* lr.schedule adaptive */
	uint8_t		*cbuf, *call;	/* this rank's and everyone's bytes */
	size_t		 xslot;		/* the exchange's slot this step */
	size_t		*lens;
	void		**leaks;	/* --inject leak: kept on purpose */
	long		 nleaks;
	uint64_t	 bytes_sent, bytes_dense;
	char		 last_path[4096];
	struct train_prof prof;		/* HUNTER_PROFILE */
	/* Rank 0's newest epoch evaluation, and the step it was made at. */
	struct train_eval last_eval;
	long		 last_eval_step;
	bool		 has_last_eval;
};

/* HUNTER_PROFILE (train-profile.c): read it; time phase p from since
 * (a clock_mono() that mark returned; 0: start only) and return now, 0
 * when off; add secs to p; print what was timed, on stderr. */
void	train_prof_init(struct trainer *);
double	train_prof_mark(struct trainer *, enum train_phase p, double since);
void	train_prof_add(struct trainer *, enum train_phase p, double secs);
void	train_prof_print(struct trainer *);

void	train_event(struct trainer *, enum event_kind, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));

/* The data (train-data.c): open it (images or tokens, as data.format
 * says) and set steps_per_epoch; the model sized to it; the loader's
 * source; the first n samples for the autotuner; an evaluation (rank 0:
 * test accuracy, or validation loss); close it. */
int	train_data_open(struct trainer *, char *err, size_t errlen);
struct model *train_data_model(struct trainer *, int max_batch);
void	train_data_source(const struct trainer *, struct loader_source *);
const struct model_input *train_data_probe(struct trainer *, int n);
void	train_data_eval(struct trainer *, struct train_eval *);
void	train_data_close(struct trainer *);
/* The size of the training data, as a checkpoint records it: images,
 * or a token corpus's training tokens. */
long long train_data_samples(const struct trainer *);
/* The samples of an epoch: images, or a token corpus's windows of T. */
long	train_epoch_samples(const struct trainer *);
/* A token model's config.json in the checkpoint directory (GPT-2's
 * fields), once a run: 0, or -1 with err. */
int	train_data_config(struct trainer *, const char *dir, char *err,
	    size_t errlen);
/* Checkpoints (train-ckpt.c).  Write one of this step (rank 0 writes;
 * with collective every rank takes part, as the compressor state is
 * gathered).  0, or -1 with err. */
int	train_checkpoint(struct trainer *, char *err, size_t errlen,
	    int collective);
/* The periodic one (checkpoint.every_steps): in the background where
 * train-ckpt-bg.c can, else train_checkpoint's.  0, or -1 with err. */
int	train_checkpoint_every(struct trainer *, char *err, size_t errlen);
/* What a checkpoint of this step records of the position and the job. */
struct ckpt_meta train_ckpt_meta(const struct trainer *);
/* Rank 0 writes cm's checkpoint of model and optimizer (train-ckpt.c),
 * and says so: 0, or -1 with err. */
int	train_ckpt_write(struct trainer *, const struct model *,
	    const struct optimizer *, struct ckpt_meta *, char *err,
	    size_t errlen);

/*
 * A checkpoint in the background (train-ckpt-bg.c).  Start snapshots
 * this step's state and sends the first chunk of each rank's compressor
 * state towards rank 0 (1), or does nothing where it cannot (0: the
 * caller writes one as before), or fails (-1).  Wait, in the exchange
 * before its collective, waits for the chunk in flight and puts this
 * rank's vote in the floats after the gradients; next, after the step,
 * reads the ranks' votes, posts the next chunk, and once every chunk is
 * in, rank 0 writes the checkpoint.  Finish completes one in flight at
 * once (every rank; before any other checkpoint), drop abandons it (a
 * failed group).  All but drop: 0, or -1 with err.
 */
int	train_ckpt_bg_start(struct trainer *, char *err, size_t errlen);
int	train_ckpt_bg_wait(struct trainer *, char *err, size_t errlen);
int	train_ckpt_bg_next(struct trainer *, char *err, size_t errlen);
int	train_ckpt_bg_finish(struct trainer *, char *err, size_t errlen);
void	train_ckpt_bg_drop(struct trainer *);

/* Rank 0 resumes from the newest valid checkpoint if asked; then every
 * rank gets rank 0's state. */
int	train_resume(struct trainer *, char *err, size_t errlen);
/* A step failed (a peer died): rank 0 saves the state after t->step. */
void	train_rescue(struct trainer *);

/* The debug dump of HUNTER_DUMP (train-dump.c): the model's tensors and
 * first parameters, then each of the first steps' inputs, gradient after
 * the exchange with its loss, and parameters after the update. */
void	train_dump_start(struct trainer *);
void	train_dump_inputs(struct trainer *, const struct batch *);
void	train_dump_grads(struct trainer *, double loss, double lr);
void	train_dump_params(struct trainer *);

/* The gradient exchange (train-exchange.c).  Setup makes the compressor
 * when the job compresses and there are ranks to send to; exchange sums
 * m->grads and the floats after them across ranks, or leaves them as
 * they are with one rank, and counts the bytes this rank sent. */
void	train_exchange_setup(struct trainer *);
int	train_exchange(struct trainer *, uint64_t *sent, char *err,
	    size_t errlen);

/* ZeRO-1 (train-zero.c).  Setup makes t->opt: over the whole buffer,
 * or with train.zero over this rank's shard, a world's 1/world of it.
 * Exchange reduce-scatters the gradient and sums the floats after it;
 * update steps the shard and allgathers the parameters.
 * Gather fills a full optimizer's state on rank 0 from the shards (every
 * rank takes part); scatter hands out rank 0's t->full. */
void	train_zero_setup(struct trainer *);
int	train_zero_exchange(struct trainer *, char *err, size_t errlen);
int	train_zero_update(struct trainer *, float lr, char *err,
	    size_t errlen);
int	train_zero_gather(struct trainer *, struct optimizer *full, char *err,
	    size_t errlen);
int	train_zero_scatter(struct trainer *, char *err, size_t errlen);
/* A full optimizer of the job's kind with this one's counters. */
struct optimizer *train_zero_full(const struct trainer *);

/* Norms (train-zero.c): |v|^2 in double; that of the summed gradient,
 * every rank's shard with ZeRO-1, into *s; clip it to at most clip (the
 * norm before into *norm).  0, or -1 with err. */
double	train_sumsq(const float *, size_t n);
int	train_grad_sumsq(struct trainer *, double *s, char *err,
	    size_t errlen);
int	train_grad_clip(struct trainer *, double clip, double *norm,
	    char *err, size_t errlen);

/* train.overlap (train-overlap.c).  Setup cuts the buckets and starts
 * the exchange thread when the job overlaps a dense exchange; arm, with
 * the control floats set, before the last micro-batch's backward: the
 * buckets are summed as the backward passes them; wait for the last
 * (0, or -1 with err); free stops the thread. */
void	train_overlap_setup(struct trainer *);
int	train_overlap_buckets(const struct trainer *);
void	train_overlap_arm(struct trainer *);
int	train_overlap_wait(struct trainer *, char *err, size_t errlen);
void	train_overlap_free(struct trainer *);

/* Settle t->micro for per_rank samples a step: the resumed size, or the
 * search of autotune.h, every rank agreeing on each trial. */
int	train_autotune(struct trainer *, int per_rank, char *err,
	    size_t errlen);

#endif
