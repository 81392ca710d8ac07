/*
 * train-zero.c: ZeRO-1 (train.zero: 1; Rajbhandari et al., SC'20, stage
 * 1): the optimizer's state is sharded over the ranks.  A shard is a
 * contiguous run of the flat parameter buffer, a world's share rounded
 * up to ZERO_ALIGN floats.  A step reduce-scatters the gradient (each
 * rank gets the sum over its shard, with the bits an allreduce leaves
 * there), updates its shard of the parameters with its shard of the
 * state, and allgathers the parameters.  The update is elementwise, so
 * the parameters are those of the unsharded run given the same
 * gradient; what may differ in the last bits is a global norm
 * (grad_clip, the adaptive schedule), summed shard by shard.
 * Checkpoints hold the whole state, gathered to rank 0 a round at a
 * time, so a ZeRO-1 checkpoint is like any other and resumes on any
 * world size, sharded or not.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xmalloc.h"
#include "backend/worker/train-internal.h"

#define ZERO_ALIGN	16		/* floats: the optimizer's span */
#define ZERO_ROUND	(4u << 20)	/* bytes of all ranks a gather round */

/* Where rank r's shard starts. */
static size_t
zero_lo(const struct trainer *t, int r)
{
	size_t	 lo = 0;

	for (int q = 0; q < r; q++)
		lo += t->part[q];
	return lo;
}

void
train_zero_setup(struct trainer *t)
{
	const struct job_spec *job = t->job;
	size_t		 n = t->model->n_params, per, len = n;
	int		 world = t->cfg->world, rank = t->cfg->rank;

	t->zero = job->train.zero == 1 && world > 1 &&
	    t->hooks->reduce_scatter != NULL;
	t->lo = 0;
	if (t->zero) {
		per = ((n + (size_t)world - 1) / (size_t)world + ZERO_ALIGN - 1) &
		    ~(size_t)(ZERO_ALIGN - 1);
		t->part = xcalloc((size_t)world, sizeof *t->part);
		for (int r = 0; r < world; r++) {
			size_t	a = (size_t)r * per < n ? (size_t)r * per : n;

			t->part[r] = n - a < per ? n - a : per;
		}
		t->lo = zero_lo(t, rank);
		len = t->part[rank];
	}
	t->opt = optimizer_create(job, len);
	/* The ranges left out of weight decay, as far as they are this
	 * shard's, from its start. */
	for (int i = 0; i < t->model->n_tensors; i++) {
		const struct tensor_info *ti = &t->model->tensors[i];
		size_t	a = ti->offset, b = ti->offset + ti->numel;

		a = a > t->lo ? a : t->lo;
		b = b < t->lo + len ? b : t->lo + len;
		if (ti->no_decay && b > a)
			optimizer_no_decay(t->opt, a - t->lo, b - a);
	}
}

int
train_zero_exchange(struct trainer *t, char *err, size_t errlen)
{
	const struct train_hooks *h = t->hooks;
	struct model	*m = t->model;
	double		 at = train_prof_mark(t, TP_REDUCE_SCATTER, 0);

	if (h->reduce_scatter(h->ctx, m->grads, m->n_params, t->part, err,
	    errlen) != 0)
		return -1;
	at = train_prof_mark(t, TP_REDUCE_SCATTER, at);
	if (h->allreduce(h->ctx, m->grads + m->n_params, MODEL_GRAD_EXTRA,
	    err, errlen) != 0)
		return -1;
	train_prof_mark(t, TP_ALLREDUCE, at);
	return 0;
}

double
train_sumsq(const float *v, size_t n)
{
	double	 s = 0;

	for (size_t i = 0; i < n; i++)
		s += (double)v[i] * v[i];
	return s;
}

/* Every rank's |shard|^2, gathered and summed in rank order. */
static int
zero_sumsq(struct trainer *t, double *out, char *err, size_t errlen)
{
	const struct train_hooks *h = t->hooks;
	const float	*g = t->model->grads + t->lo;
	int		 world = t->cfg->world;
	double		 mine = 0, *all = xcalloc((size_t)world, sizeof *all);
	size_t		*lens = xcalloc((size_t)world, sizeof *lens);
	int		 rc;

	mine = train_sumsq(g, t->part[t->cfg->rank]);
	for (int r = 0; r < world; r++)
		lens[r] = sizeof mine;
	rc = h->allgatherv(h->ctx, &mine, all, lens, err, errlen);
	*out = 0;
	for (int r = 0; r < world; r++)
		*out += all[r];
	free(all);
	free(lens);
	return rc;
}

int
train_grad_sumsq(struct trainer *t, double *s, char *err, size_t errlen)
{
	if (t->zero)
		return zero_sumsq(t, s, err, errlen);
	*s = train_sumsq(t->model->grads, t->model->n_params);
	return 0;
}

/* As GPT-2's training does: after the exchange, so every rank clips the
 * same (its shard, with ZeRO-1). */
int
train_grad_clip(struct trainer *t, double clip, double *norm, char *err,
    size_t errlen)
{
	float	*g = t->model->grads + t->lo;
	size_t	 n = t->zero ? t->part[t->cfg->rank] : t->model->n_params;
	double	 s;

	if (train_grad_sumsq(t, &s, err, errlen) != 0)
		return -1;
	*norm = sqrt(s);
	if (*norm > clip) {
		float k = (float)(clip / *norm);

		for (size_t i = 0; i < n; i++)
			g[i] *= k;
	}
	return 0;
}

int
train_zero_update(struct trainer *t, float lr, char *err, size_t errlen)
{
	const struct train_hooks *h = t->hooks;
	struct model	*m = t->model;
	size_t		*lens;
	double		 at;
	int		 rc;

	if (!t->zero) {
		optimizer_step(t->opt, m->params, m->grads, lr);
		return 0;
	}
	optimizer_step(t->opt, m->params + t->lo, m->grads + t->lo, lr);
	lens = xcalloc((size_t)t->cfg->world, sizeof *lens);
	for (int r = 0; r < t->cfg->world; r++)
		lens[r] = t->part[r] * sizeof(float);
	at = train_prof_mark(t, TP_PARAM_GATHER, 0);
	rc = h->allgatherv(h->ctx, m->params + t->lo, m->params, lens, err,
	    errlen);
	train_prof_mark(t, TP_PARAM_GATHER, at);
	free(lens);
	return rc;
}

struct optimizer *
train_zero_full(const struct trainer *t)
{
	struct optimizer *o = optimizer_create(t->job, t->model->n_params);

	o->t = t->opt->t;
	o->momentum = t->opt->momentum;
	return o;
}

/* Every rank's shard of one state buffer into full (rank 0's), in rounds
 * of at most ZERO_ROUND bytes of all ranks together. */
static int
zero_gather_buf(struct trainer *t, const float *shard, float *full, char *err,
    size_t errlen)
{
	int		 world = t->cfg->world;
	size_t		 round = ZERO_ROUND / sizeof(float) / (size_t)world, most = 0;
	size_t		*lens = xcalloc((size_t)world, sizeof *lens);
	float		*all;
	int		 rc = 0;

	round = round < ZERO_ALIGN ? ZERO_ALIGN : round;
	all = xmalloc((size_t)world * round * sizeof *all);
	for (int r = 0; r < world; r++)
		most = t->part[r] > most ? t->part[r] : most;
	for (size_t pos = 0; pos < most && rc == 0; pos += round) {
		const float	*at = all;

		for (int r = 0; r < world; r++) {
			size_t	k = t->part[r] > pos ? t->part[r] - pos : 0;

			lens[r] = (k < round ? k : round) * sizeof(float);
		}
		rc = t->hooks->allgatherv(t->hooks->ctx, shard + pos, all, lens,
		    err, errlen);
		for (int r = 0; rc == 0 && full != NULL && r < world; r++) {
			memcpy(full + zero_lo(t, r) + pos, at, lens[r]);
			at += lens[r] / sizeof(float);
		}
	}
	free(all);
	free(lens);
	return rc;
}

int
train_zero_gather(struct trainer *t, struct optimizer *full, char *err,
    size_t errlen)
{
	if (zero_gather_buf(t, t->opt->m, full != NULL ? full->m : NULL, err,
	    errlen) != 0)
		return -1;
	if (t->opt->v == NULL)
		return 0;
	return zero_gather_buf(t, t->opt->v, full != NULL ? full->v : NULL, err,
	    errlen);
}

/* Rank 0's full buffer handed out shard by shard: each rank keeps its
 * own, into shard. */
static int
zero_scatter_buf(struct trainer *t, const float *full, float *shard,
    float *tmp, char *err, size_t errlen)
{
	const struct train_hooks *h = t->hooks;
	int		 rank = t->cfg->rank;

	for (int r = 0; r < t->cfg->world; r++) {
		float	*buf = rank == 0 ? (float *)full + zero_lo(t, r) :
		    rank == r ? shard : tmp;

		if (t->part[r] == 0)
			continue;
		if (h->broadcast(h->ctx, buf, t->part[r] * sizeof *buf, err,
		    errlen) != 0)
			return -1;
		if (rank == 0 && r == 0)
			memcpy(shard, buf, t->part[r] * sizeof *buf);
	}
	return 0;
}

int
train_zero_scatter(struct trainer *t, char *err, size_t errlen)
{
	const struct train_hooks *h = t->hooks;
	int64_t		 have = t->full != NULL;
	float		*tmp;
	int		 rc;

	if (h->broadcast(h->ctx, &have, sizeof have, err, errlen) != 0)
		return -1;
	if (!have)
		return 0;
	tmp = xmalloc((t->part[0] > 0 ? t->part[0] : 1) * sizeof *tmp);
	rc = zero_scatter_buf(t, t->full != NULL ? t->full->m : NULL,
	    t->opt->m, tmp, err, errlen);
	if (rc == 0 && t->opt->v != NULL)
		rc = zero_scatter_buf(t, t->full != NULL ? t->full->v : NULL, t->opt->v,
		    tmp, err, errlen);
	free(tmp);
	optimizer_free(t->full);
	t->full = NULL;
	return rc;
}
