/*
 * layer-proj.c: a projection of each token, y = x W + b, with W stored
 * [in, out] as GPT-2's checkpoints store it (the Conv1D of Hugging Face's
 * GPT-2), so NAME.weight [C, out] and NAME.bias [out] load in PyTorch as
 * they are.  Weights start from a normal of deviation 0.02, or the
 * builder's (args.std: the residual projections' 0.02 / sqrt(2 L)), and
 * biases at 0.
 */
#include <string.h>

#include "kernels/cpu/transformer.h"
#ifdef HAVE_CUDA
#include "kernels/cuda/cuda-kernels.h"
#endif
#include "backend/worker/model.h"

enum { PROJ_W, PROJ_B };

static void
proj_setup(struct model *m, struct layer *l)
{
	int	 T = l->in_dim[0], C = l->in_dim[1], out = l->args.out;

	l->out_dim[0] = T;
	l->out_dim[1] = out;
	l->out_dim[2] = 1;
	l->out_size = (size_t)T * out;
	l->param[PROJ_W] = model_param(m, l, "weight", 2, (int[]){ C, out });
	l->param[PROJ_B] = model_param(m, l, "bias", 1, (int[]){ out });
}

static void
proj_init(const struct layer *l, float *p, struct rng *r)
{
	float	 std = l->args.std > 0 ? l->args.std : 0.02f;

	layer_init_normal(p + l->param[PROJ_W], (size_t)l->in_dim[1] *
	    l->out_dim[1], std, r);
	memset(p + l->param[PROJ_B], 0, (size_t)l->out_dim[1] * sizeof *p);
}

static void
proj_fwd(const struct layer *l, const struct layer_io *io)
{
	matmul_forward(io->out, io->in[0], io->params + l->param[PROJ_W],
	    io->params + l->param[PROJ_B], io->B * l->in_dim[0], l->in_dim[1],
	    l->out_dim[1]);
}

static void
proj_bwd(const struct layer *l, const struct layer_io *io)
{
	if (io->din[0] != NULL)
		layer_din_begin(l, io, 0, l->in_size);
	matmul_backward(io->din[0], io->grads + l->param[PROJ_W],
	    io->grads + l->param[PROJ_B], io->dout, io->in[0],
	    io->params + l->param[PROJ_W], io->B * l->in_dim[0], l->in_dim[1],
	    l->out_dim[1]);
}

#ifdef HAVE_CUDA
static int
proj_gpu_fwd(const struct layer *l, const struct layer_io *io)
{
	return cuda_matmul_forward(io->out, io->in[0],
	    io->params + l->param[PROJ_W], io->params + l->param[PROJ_B],
	    io->B * l->in_dim[0], l->in_dim[1], l->out_dim[1], io->stream);
}

static int
proj_gpu_bwd(const struct layer *l, const struct layer_io *io)
{
	if (io->din[0] != NULL && layer_gpu_din_begin(l, io, 0,
	    l->in_size) != 0)
		return -1;
	return cuda_matmul_backward(io->din[0], io->grads + l->param[PROJ_W],
	    io->grads + l->param[PROJ_B], io->dout, io->in[0],
	    io->params + l->param[PROJ_W], io->B * l->in_dim[0], l->in_dim[1],
	    l->out_dim[1], io->stream);
}
#endif

const struct layer_type layer_proj = {
	.name = "proj",
	.what = "projection",
	.setup = proj_setup,
	.init = proj_init,
	.forward = proj_fwd,
	.backward = proj_bwd,
#ifdef HAVE_CUDA
	.gpu_forward = proj_gpu_fwd,
	.gpu_backward = proj_gpu_bwd,
#endif
};
