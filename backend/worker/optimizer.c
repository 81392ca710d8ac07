/*
 * optimizer.c: SGD with momentum and AdamW over the flat parameter
 * buffer, and the learning-rate schedule.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xmalloc.h"
#include "kernels/cpu/kernels.h"
#include "backend/worker/optimizer.h"

struct optimizer *
optimizer_create(const struct job_spec *job, size_t n)
{
	struct optimizer *o = xcalloc(1, sizeof *o);

	o->type = job->train.optimizer.type;
	o->n = n;
	o->momentum = (float)job->train.optimizer.momentum;
	o->weight_decay = (float)job->train.optimizer.weight_decay;
	o->beta1 = (float)job->train.optimizer.beta1;
	o->beta2 = (float)job->train.optimizer.beta2;
	o->eps = (float)job->train.optimizer.eps;
	o->m = xmalloc_aligned(n * sizeof(float));
	memset(o->m, 0, n * sizeof(float));
	if (o->type == OPTIM_ADAMW) {
		o->v = xmalloc_aligned(n * sizeof(float));
		memset(o->v, 0, n * sizeof(float));
	}
	return o;
}

void
optimizer_free(struct optimizer *o)
{
	if (o == NULL)
		return;
	free(o->m);
	free(o->v);
	free(o);
}

void
optimizer_step(struct optimizer *o, float *params, const float *grads,
    float lr)
{
	switch (o->type) {
	case OPTIM_SGD:
		sgd_step(params, grads, o->m, o->n, lr, o->momentum,
		    o->weight_decay);
		break;
	case OPTIM_ADAMW:
		o->t++;
		adamw_step(params, grads, o->m, o->v, o->n, lr, o->beta1,
		    o->beta2, o->eps, o->weight_decay, o->t);
		break;
	}
}

size_t
optimizer_bytes(const struct optimizer *o)
{
	return o->n * sizeof(float) * (o->v != NULL ? 2 : 1);
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
