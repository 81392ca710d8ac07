/*
 * layer-pool.c: the 2x2 max-pool, stride 2, of kernels/cpu/conv.c; the
 * index of each chosen input (int32, per output) is its aux buffer.  No
 * CUDA twin yet.
 */
#include "kernels/cpu/kernels.h"
#include "backend/worker/model.h"

static void
pool_setup(struct model *m, struct layer *l)
{
	(void)m;
	l->out_dim[0] = l->in_dim[0];
	l->out_dim[1] = l->in_dim[1] / 2;
	l->out_dim[2] = l->in_dim[2] / 2;
	l->out_size = (size_t)l->out_dim[0] * l->out_dim[1] * l->out_dim[2];
	l->aux_bytes = l->out_size * sizeof(int32_t);
}

static void
pool_fwd(const struct layer *l, const struct layer_io *io)
{
	maxpool2_forward(io->out, io->aux, io->in[0], io->B, l->in_dim[0],
	    l->in_dim[1], l->in_dim[2]);
}

static void
pool_bwd(const struct layer *l, const struct layer_io *io)
{
	if (io->din[0] != NULL)
		maxpool2_backward(io->din[0], io->dout, io->aux, io->B,
		    l->in_dim[0], l->in_dim[1], l->in_dim[2]);
}

const struct layer_type layer_pool = {
	.name = "pool",
	.what = "max-pool",
	.setup = pool_setup,
	.forward = pool_fwd,
	.backward = pool_bwd,
};
