/*
 * optimizer-adamw.c: AdamW, decoupled weight decay, as PyTorch's
 * (kernels/cpu/optim.c); two state buffers, the moments, and the step
 * count t that its bias corrections need.  The update runs on the
 * optimizer's pool.
 */
#include "kernels/cpu/kernels.h"
#include "backend/worker/optimizer.h"

static void
adamw_update(struct optimizer *o, float *params, const float *grads,
    float lr)
{
	size_t	 len;

	o->t++;
	for (size_t pos = 0; pos < o->n; pos += len) {
		float wd = optimizer_run(o, pos, &len);

		adamw_step(o->pool, params + pos, grads + pos, o->m + pos,
		    o->v + pos, len, lr, o->beta1, o->beta2, o->eps, wd, o->t);
	}
}

const struct optimizer_type optimizer_adamw = {
	.n_state = 2,
	.pooled = 1,
	.step = adamw_update,
};
