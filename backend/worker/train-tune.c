/*
 * train-tune.c: the micro-batch search inside a live job.  Fit is judged
 * on tracked bytes (activations, parameters, gradients, optimizer and
 * compressor state, workspace) against resources.memory_per_rank, before
 * anything is allocated.  A size that fits is timed for enough forward
 * and backward passes to be trusted (below) on a scratch model, so the
 * trial changes neither the job's weights nor its loader position.  On
 * the host the scratch model is made once, for the largest size the
 * budget admits, and serves every trial: its pages are touched once, not
 * once per trial.  A
 * cuda rank times each size on a device model of that size, and a device
 * that runs out of memory fails the size as the budget does.  Every rank
 * adds its verdict and its rate to one allreduce, so a size fails if it
 * fails anywhere and all ranks see the same throughput.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lib/clock.h"
#include "backend/worker/train-internal.h"

/*
 * How much a trial times on each rank before its throughput counts.  A
 * few steps of a small size are a few milliseconds of work, which noise
 * outweighs (2 samples a step once measured twice as fast as 1024, on 6
 * samples).  So a trial times its steps in rounds of TUNE_ROUND_SAMPLES
 * samples or more (one step at least), and goes on until it has timed at
 * least two rounds, TUNE_MIN_SAMPLES samples and TUNE_MIN_S seconds, and
 * train.batch.steps_per_trial steps (3) unless those have taken
 * TUNE_LONG_S; it stops at TUNE_MAX_S whatever the count, after one round
 * (a step that long is timed well enough, and a slow device must not make
 * the search a large share of a short run).  These are on tune_clock, so
 * a loaded machine stretches a trial, never cuts it short.
 *
 * The trial's throughput is its fastest round: what else runs on the
 * machine only ever slows a round down, and so does the first touch of
 * the memory a larger size uses first; the fastest is the size's own
 * speed, and the same from run to run.
 */
#define TUNE_MIN_SAMPLES	256
#define TUNE_MIN_S		0.1
#define TUNE_LONG_S		0.25
#define TUNE_MAX_S		2.0
#define TUNE_ROUND_SAMPLES	64

/*
 * The clock a trial is timed on: on the host, this thread's CPU time (the
 * rank computes on this thread alone: OpenBLAS runs one), so that time
 * the scheduler gives to other processes does not count against a size;
 * the wall clock for a device, whose work is not this thread's.
 */
static double
tune_clock(const struct trainer *t)
{
	struct timespec	ts;

	if (t->job->resources.device == DEVICE_CUDA)
		return clock_mono();
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* What a trial has timed so far. */
struct tune_count {
	int	 rounds;
	int	 steps;
	double	 samples;
	double	 secs;		/* on tune_clock */
	double	 best;		/* the fastest round, samples a second */
};

/* Whether a trial has timed enough. */
static bool
tune_enough(const struct trainer *t, const struct tune_count *c)
{
	if (c->rounds < 1)
		return false;
	if (c->secs >= TUNE_MAX_S)
		return true;
	return c->rounds >= 2 && c->samples >= TUNE_MIN_SAMPLES &&
	    c->secs >= TUNE_MIN_S &&
	    (c->steps >= t->job->train.batch.steps_per_trial ||
	    c->secs >= TUNE_LONG_S);
}

static size_t
tune_bytes(const struct trainer *t, int size)
{
	return model_tracked_bytes(t->model, size) + optimizer_bytes(t->opt) +
	    (t->comp != NULL ? compressor_state_bytes(t->comp) : 0);
}

struct tune_ctx {
	struct trainer	*t;
	struct model	*scratch;	/* host trials; NULL when none fits */
	const struct model_input *probe; /* the trials' samples */
	int		 nprobe;
};

/* One step of a trial: on the host scratch model, or on g, the device. */
static int
tune_step(struct tune_ctx *ctx, struct model_gpu *g, int n, char *err,
    size_t errlen)
{
	struct model	*m = ctx->scratch;
	double		 loss = 0;

	if (g != NULL)
		return model_gpu_zero_grads(g, err, errlen) != 0 ||
		    model_gpu_step(g, ctx->probe, n, 1.0f / n, &loss, err,
		    errlen) != 0 ? -1 : 0;
	memset(m->grads, 0, m->n_params * sizeof(float));
	model_forward(m, ctx->probe, n, NULL);
	model_backward(m, ctx->probe, n, 1.0f / n);
	return 0;
}

/*
 * Time a size that fits the budget: agree[1] gets the fastest round's
 * samples a second, agree[2] the steps.  On a cuda rank the trial runs on
 * the device, and a device out of memory makes the size fail (agree[0])
 * as the budget does.
 */
static int
tune_time(struct tune_ctx *ctx, int n, float *agree, char *err,
    size_t errlen)
{
	struct trainer	*t = ctx->t;
	struct model_gpu *g = NULL;
	struct tune_count c = { 0, 0, 0, 0, 0 };
	double		 r0, dt;
	int		 oom, rc = 0, k;

	if (t->job->resources.device == DEVICE_CUDA) {
		if ((g = model_gpu_create(t->model, n, &oom, err,
		    errlen)) == NULL) {
			agree[0] = 1;
			return oom ? 0 : -1;
		}
		/* One step untimed: the first launch of each kernel costs
		 * more than the size does. */
		if (model_gpu_set_params(g, t->model->params, err, errlen) != 0 ||
		    tune_step(ctx, g, n, err, errlen) != 0)
			rc = -1;
	} else if (ctx->scratch == NULL) {
		agree[0] = 1;
		return 0;
	}
	while (rc == 0 && !tune_enough(t, &c)) {
		r0 = tune_clock(t);
		for (k = 0; rc == 0 && (k == 0 || k * n < TUNE_ROUND_SAMPLES);
		    k++)
			rc = tune_step(ctx, g, n, err, errlen);
		dt = tune_clock(t) - r0;
		c.rounds++;
		c.steps += k;
		c.samples += (double)k * n;
		c.secs += dt;
		if (rc == 0 && dt > 0 && k * n / dt > c.best)
			c.best = k * n / dt;
	}
	agree[1] = (float)c.best;
	agree[2] = (float)c.steps;
	model_gpu_free(g);
	return rc;
}

static int
tune_probe(void *arg, int size, struct autotune_trial *tr, char *err,
    size_t errlen)
{
	struct tune_ctx	*ctx = arg;
	struct trainer	*t = ctx->t;
	const struct train_hooks *h = t->hooks;
	float		 agree[3] = { 0, 0, 0 };	/* over, rate, steps */
	int		 n = size < ctx->nprobe ? size : ctx->nprobe;

	tr->peak_bytes = tune_bytes(t, size);
	agree[0] = tr->peak_bytes > t->job->resources.memory_per_rank;
	if (agree[0] == 0 && tune_time(ctx, n, agree, err, errlen) != 0)
		return -1;
	if (h->allreduce != NULL && t->cfg->world > 1 &&
	    h->allreduce(h->ctx, agree, 3, err, errlen) != 0)
		return -1;
	tr->fit = agree[0] == 0;
	tr->steps = agree[2] / (t->cfg->world > 1 ? t->cfg->world : 1);
	/* Per rank: the mean of the ranks' fastest rounds. */
	tr->samples_per_s = tr->fit ? agree[1] / (t->cfg->world > 1 ?
	    t->cfg->world : 1) : 0;
	return 0;
}

int
train_autotune(struct trainer *t, int per_rank, char *err, size_t errlen)
{
	const struct train_hooks *h = t->hooks;
	struct tune_ctx	 ctx = { .t = t, .scratch = NULL };
	double		 t0 = clock_mono();
	int		 best;

	if (t->tuned_micro > 0 && per_rank % t->tuned_micro == 0) {
		t->micro = t->tuned_micro;
		train_event(t, EV_RESTARTED, "micro-batch %d x accum %d from the "
		    "checkpoint; no tuning", t->micro, per_rank / t->micro);
		return 0;
	}
	/* Images: the first samples of the training set; tokens: as many
	 * windows as the largest trial takes. */
	ctx.nprobe = t->T > 0 ? per_rank : t->train.n;
	ctx.probe = train_data_probe(t, ctx.nprobe);
	/* Tracked bytes grow with the size: the largest divisor of per_rank
	 * within the budget bounds every size a trial will run on the host.
	 * (A cuda rank's trials each make their own device model.) */
	for (int d = per_rank; d >= 1 &&
	    t->job->resources.device != DEVICE_CUDA; d--) {
		if (per_rank % d == 0 &&
		    tune_bytes(t, d) <= t->job->resources.memory_per_rank) {
			ctx.scratch = train_data_model(t, d < ctx.nprobe ? d :
			    ctx.nprobe);
			break;
		}
	}
	best = autotune_search(per_rank, t->job->resources.memory_per_rank,
	    tune_probe, &ctx, t->trace, &t->ntrace, err, errlen);
	model_free(ctx.scratch);
	if (best < 0)
		return -1;
	t->micro = best;
	t->tune_s = clock_mono() - t0;
	if (t->cfg->rank == 0 && h->on_autotune != NULL)
		h->on_autotune(h->ctx, t->trace, t->ntrace, best,
		    per_rank / best, t->tune_s);
	return 0;
}
