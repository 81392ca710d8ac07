/*
 * train-tune.c: the micro-batch search inside a live job.  Fit is judged
 * on tracked bytes (activations, parameters, gradients, optimizer and
 * compressor state, workspace) against resources.memory_per_rank, before
 * anything is allocated.  A size that fits is timed for a few forward
 * and backward passes on a scratch model, so the trial changes
 * neither the job's weights nor its loader position.  Every rank adds its
 * verdict and its time to one allreduce, so a size fails if it fails
 * anywhere and all ranks see the same throughput.
 */
#include <stdio.h>
#include <string.h>

#include "backend/core/clock.h"
#include "backend/worker/train-internal.h"

/* Steps per trial (DESIGN.md: steps_per_trial, default 3); from
 * TUNE_BIG samples on, one step is long enough to time, and the search
 * stays a small share of the run. */
#define TUNE_STEPS	3
#define TUNE_BIG	256

static size_t
tune_bytes(const struct trainer *t, int size)
{
	return model_tracked_bytes(t->model, size) + optimizer_bytes(t->opt) +
	    (t->comp != NULL ? compressor_state_bytes(t->comp) : 0);
}

static int
tune_probe(void *ctx, int size, struct autotune_trial *tr, char *err,
    size_t errlen)
{
	struct trainer	*t = ctx;
	const struct train_hooks *h = t->hooks;
	struct model	*m;
	float		 agree[2] = { 0, 0 };
	double		 t0;
	int		 n = size < t->train.n ? size : t->train.n, steps = 0;

	tr->peak_bytes = tune_bytes(t, size);
	agree[0] = tr->peak_bytes > t->job->resources.memory_per_rank;
	if (agree[0] == 0) {
		m = model_create(t->job, 1, t->train.rows, t->train.cols, 10, n,
		    t->job->train.seed);
		steps = size >= TUNE_BIG ? 1 : TUNE_STEPS;
		t0 = clock_mono();
		for (int s = 0; s < steps; s++) {
			memset(m->grads, 0, m->n_params * sizeof(float));
			model_forward(m, t->train.x, t->train.y, n, NULL);
			model_backward(m, t->train.x, t->train.y, n, 1.0f / n);
		}
		agree[1] = (float)(clock_mono() - t0);
		model_free(m);
	}
	if (h->allreduce != NULL && t->cfg->world > 1 &&
	    h->allreduce(h->ctx, agree, 2, err, errlen) != 0)
		return -1;
	tr->fit = agree[0] == 0;
	/* Per rank: the mean of the ranks' times. */
	tr->samples_per_s = tr->fit && agree[1] > 0 ? (double)n * steps *
	    t->cfg->world / agree[1] : 0;
	return 0;
}

int
train_autotune(struct trainer *t, int per_rank, char *err, size_t errlen)
{
	const struct train_hooks *h = t->hooks;
	double	 t0 = clock_mono();
	int	 best;

	if (t->tuned_micro > 0 && per_rank % t->tuned_micro == 0) {
		t->micro = t->tuned_micro;
		train_event(t, "restarted", "micro-batch %d x accum %d from the "
		    "checkpoint; no tuning", t->micro, per_rank / t->micro);
		return 0;
	}
	best = autotune_search(per_rank, t->job->resources.memory_per_rank,
	    tune_probe, t, t->trace, &t->ntrace, err, errlen);
	if (best < 0)
		return -1;
	t->micro = best;
	t->tune_s = clock_mono() - t0;
	if (t->cfg->rank == 0 && h->on_autotune != NULL)
		h->on_autotune(h->ctx, t->trace, t->ntrace, best,
		    per_rank / best, t->tune_s);
	return 0;
}
