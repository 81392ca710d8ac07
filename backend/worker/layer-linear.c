/*
 * layer-linear.c: the fully connected layer, y = x w^T + b over the
 * input flattened (kernels/cpu/linear.c, kernels/cuda/linear.cu).  Its
 * tensors are NAME.weight [out, in] and NAME.bias [out].
 */
#include "kernels/cpu/kernels.h"
#ifdef HAVE_CUDA
#include "kernels/cuda/cuda-kernels.h"
#endif
#include "backend/worker/model.h"

enum { LINEAR_W, LINEAR_B };

static void
linear_setup(struct model *m, struct layer *l)
{
	int	 in = (int)l->in_size, out = l->args.out;

	l->out_dim[0] = out;
	l->out_dim[1] = l->out_dim[2] = 1;
	l->out_size = (size_t)out;
	l->param[LINEAR_W] = model_param(m, l, "weight", 2, (int[]){ out, in });
	l->param[LINEAR_B] = model_param(m, l, "bias", 1, (int[]){ out });
}

static void
linear_init(const struct layer *l, float *p, struct rng *r)
{
	layer_init_uniform(p + l->param[LINEAR_W], l->in_size * l->out_size,
	    l->in_size, r);
	layer_init_uniform(p + l->param[LINEAR_B], l->out_size, l->in_size, r);
}

static void
linear_fwd(const struct layer *l, const struct layer_io *io)
{
	linear_forward(io->out, io->in[0], io->params + l->param[LINEAR_W],
	    io->params + l->param[LINEAR_B], io->B, (int)l->in_size,
	    (int)l->out_size);
}

static void
linear_bwd(const struct layer *l, const struct layer_io *io)
{
	linear_backward(io->din[0], io->grads + l->param[LINEAR_W],
	    io->grads + l->param[LINEAR_B], io->dout, io->in[0],
	    io->params + l->param[LINEAR_W], io->B, (int)l->in_size,
	    (int)l->out_size);
}

#ifdef HAVE_CUDA
static int
linear_gpu_fwd(const struct layer *l, const struct layer_io *io)
{
	return cuda_linear_forward(io->out, io->in[0],
	    io->params + l->param[LINEAR_W], io->params + l->param[LINEAR_B],
	    io->B, (int)l->in_size, (int)l->out_size, io->stream);
}

static int
linear_gpu_bwd(const struct layer *l, const struct layer_io *io)
{
	return cuda_linear_backward(io->din[0],
	    io->grads + l->param[LINEAR_W], io->grads + l->param[LINEAR_B],
	    io->dout, io->in[0], io->params + l->param[LINEAR_W], io->B,
	    (int)l->in_size, (int)l->out_size, io->stream);
}
#endif

const struct layer_type layer_linear = {
	.name = "linear",
	.what = "linear layer",
	.setup = linear_setup,
	.init = linear_init,
	.forward = linear_fwd,
	.backward = linear_bwd,
#ifdef HAVE_CUDA
	.gpu_forward = linear_gpu_fwd,
	.gpu_backward = linear_gpu_bwd,
#endif
};
