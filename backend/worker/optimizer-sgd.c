/*
 * optimizer-sgd.c: SGD with momentum and L2 weight decay, as PyTorch's
 * (kernels/cpu/optim.c); one state buffer, the momentum.
 */
#include "kernels/cpu/kernels.h"
#include "backend/worker/optimizer.h"

static void
sgd_update(struct optimizer *o, float *params, const float *grads, float lr)
{
	size_t	 len;

	for (size_t pos = 0; pos < o->n; pos += len) {
		float wd = optimizer_run(o, pos, &len);

		sgd_step(params + pos, grads + pos, o->m + pos, len, lr,
		    o->momentum, wd);
	}
}

const struct optimizer_type optimizer_sgd = {
	.n_state = 1,
	.step = sgd_update,
};
