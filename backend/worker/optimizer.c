/*
 * optimizer.c: the table of optimizers (one file each, optimizer.h), the
 * state they share over the flat parameter buffer, and the learning-rate
 * schedule.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "lib/pool.h"
#include "lib/xmalloc.h"
#include "backend/worker/optimizer.h"

extern const struct optimizer_type optimizer_sgd;
extern const struct optimizer_type optimizer_adamw;

static const struct optimizer_type *const optimizer_types[] = {
	[OPTIM_SGD] = &optimizer_sgd,
	[OPTIM_ADAMW] = &optimizer_adamw,
};

struct optimizer *
optimizer_create(const struct job_spec *job, size_t n)
{
	struct optimizer *o = xcalloc(1, sizeof *o);
	unsigned	 type = job->train.optimizer.type;

	if (type >= sizeof optimizer_types / sizeof optimizer_types[0] ||
	    optimizer_types[type] == NULL) {
		fprintf(stderr, "optimizer: no optimizer %u\n", type);
		abort();
	}
	o->ops = optimizer_types[type];
	o->type = job->train.optimizer.type;
	o->n = n;
	o->momentum = (float)job->train.optimizer.momentum;
	o->weight_decay = (float)job->train.optimizer.weight_decay;
	o->beta1 = (float)job->train.optimizer.beta1;
	o->beta2 = (float)job->train.optimizer.beta2;
	o->eps = (float)job->train.optimizer.eps;
	o->m = xmalloc_aligned(n * sizeof(float));
	memset(o->m, 0, n * sizeof(float));
	if (o->ops->n_state > 1) {
		o->v = xmalloc_aligned(n * sizeof(float));
		memset(o->v, 0, n * sizeof(float));
	}
	if (o->ops->pooled)
		o->pool = pool_get(openblas_get_num_threads());
	return o;
}

void
optimizer_free(struct optimizer *o)
{
	if (o == NULL)
		return;
	free(o->m);
	free(o->v);
	free(o->nd_off);
	free(o->nd_len);
	pool_put(o->pool);
	free(o);
}

void
optimizer_no_decay(struct optimizer *o, size_t off, size_t len)
{
	/* Adjacent ranges merge, so a run of biases is one call later. */
	if (o->n_nd > 0 && o->nd_off[o->n_nd - 1] + o->nd_len[o->n_nd - 1] ==
	    off) {
		o->nd_len[o->n_nd - 1] += len;
		return;
	}
	o->nd_off = xreallocarray(o->nd_off, (size_t)o->n_nd + 1,
	    sizeof *o->nd_off);
	o->nd_len = xreallocarray(o->nd_len, (size_t)o->n_nd + 1,
	    sizeof *o->nd_len);
	o->nd_off[o->n_nd] = off;
	o->nd_len[o->n_nd++] = len;
}

float
optimizer_run(const struct optimizer *o, size_t pos, size_t *len)
{
	for (int i = 0; i < o->n_nd; i++) {
		size_t	 a = o->nd_off[i], b = a + o->nd_len[i];

		if (pos >= a && pos < b) {
			*len = b - pos;
			return 0;
		}
		if (pos < a) {
			*len = a - pos;
			return o->weight_decay;
		}
	}
	*len = o->n - pos;
	return o->weight_decay;
}

void
optimizer_step(struct optimizer *o, float *params, const float *grads,
    float lr)
{
	o->ops->step(o, params, grads, lr);
}

size_t
optimizer_bytes(const struct optimizer *o)
{
	return o->n * sizeof(float) * (size_t)o->ops->n_state;
}

double
lr_at(const struct job_spec *job, long step, long total)
{
	double	 base = job->train.lr.base;
	long	 warm = job->train.lr.warmup_steps;

	if (warm > 0 && step < warm)
		return base * (double)(step + 1) / (double)warm;
	/* adaptive: the cosine shape, times the gain of adaptive.c */
	if (job->train.lr.schedule != SCHEDULE_CONSTANT && total > warm) {
		double progress = (double)(step - warm) / (double)(total - warm);
		return base * 0.5 * (1.0 + cos(M_PI * progress));
	}
	return base;
}
