/*
 * optimizer-sgd.c: SGD with momentum and L2 weight decay, as PyTorch's
 * (kernels/cpu/optim.c); one state buffer, the momentum.
 */
#include "kernels/cpu/kernels.h"
#include "backend/worker/optimizer.h"

static void
sgd_update(struct optimizer *o, float *params, const float *grads, float lr)
{
	sgd_step(params, grads, o->m, o->n, lr, o->momentum, o->weight_decay);
}

const struct optimizer_type optimizer_sgd = {
	.n_state = 1,
	.step = sgd_update,
};
