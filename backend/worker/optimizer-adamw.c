/*
 * optimizer-adamw.c: AdamW, decoupled weight decay, as PyTorch's
 * (kernels/cpu/optim.c); two state buffers, the moments, and the step
 * count t that its bias corrections need.
 */
#include "kernels/cpu/kernels.h"
#include "backend/worker/optimizer.h"

static void
adamw_update(struct optimizer *o, float *params, const float *grads,
    float lr)
{
	o->t++;
	adamw_step(params, grads, o->m, o->v, o->n, lr, o->beta1, o->beta2,
	    o->eps, o->weight_decay, o->t);
}

const struct optimizer_type optimizer_adamw = {
	.n_state = 2,
	.step = adamw_update,
};
