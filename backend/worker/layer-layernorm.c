/*
 * layer-layernorm.c: LayerNorm over the channels of each token, with
 * GPT-2's epsilon (1e-5).  Its tensors are NAME.weight and NAME.bias [C],
 * initialised to 1 and 0; each sample keeps its tokens' means and
 * reciprocal deviations (aux) for the backward pass.
 */
#include "kernels/cpu/transformer.h"
#ifdef HAVE_CUDA
#include "kernels/cuda/cuda-kernels.h"
#endif
#include "backend/worker/model.h"

enum { LN_W, LN_B };

static void
ln_setup(struct model *m, struct layer *l)
{
	int	 T = l->in_dim[0], C = l->in_dim[1];

	layer_same_shape(l);
	l->aux_bytes = 2 * (size_t)T * sizeof(float);
	l->param[LN_W] = model_param(m, l, "weight", 1, (int[]){ C });
	l->param[LN_B] = model_param(m, l, "bias", 1, (int[]){ C });
}

static void
ln_init(const struct layer *l, float *p, struct rng *r)
{
	(void)r;
	for (int c = 0; c < l->in_dim[1]; c++) {
		p[l->param[LN_W] + c] = 1.0f;
		p[l->param[LN_B] + c] = 0.0f;
	}
}

static void
ln_fwd(const struct layer *l, const struct layer_io *io)
{
	int	 N = io->B * l->in_dim[0];
	float	*mean = io->aux, *rstd = mean + N;

	layernorm_forward(io->pool, io->out, mean, rstd, io->in[0],
	    io->params + l->param[LN_W], io->params + l->param[LN_B], N,
	    l->in_dim[1]);
}

static void
ln_bwd(const struct layer *l, const struct layer_io *io)
{
	int	 N = io->B * l->in_dim[0];
	float	*mean = io->aux, *rstd = mean + N;

	if (io->din[0] == NULL)
		return;
	layer_din_begin(l, io, 0, l->in_size);
	layernorm_backward(io->pool, io->din[0], io->grads + l->param[LN_W],
	    io->grads + l->param[LN_B], io->dout, io->in[0],
	    io->params + l->param[LN_W], mean, rstd, N, l->in_dim[1]);
}

#ifdef HAVE_CUDA
static int
ln_gpu_fwd(const struct layer *l, const struct layer_io *io)
{
	int	 N = io->B * l->in_dim[0];
	float	*mean = io->aux, *rstd = mean + N;

	return cuda_layernorm_forward(io->out, mean, rstd, io->in[0],
	    io->params + l->param[LN_W], io->params + l->param[LN_B], N,
	    l->in_dim[1], io->stream);
}

static int
ln_gpu_bwd(const struct layer *l, const struct layer_io *io)
{
	int	 N = io->B * l->in_dim[0];
	float	*mean = io->aux, *rstd = mean + N;

	if (io->din[0] == NULL)
		return 0;
	if (layer_gpu_din_begin(l, io, 0, l->in_size) != 0)
		return -1;
	return cuda_layernorm_backward(io->din[0], io->grads + l->param[LN_W],
	    io->grads + l->param[LN_B], io->dout, io->in[0],
	    io->params + l->param[LN_W], mean, rstd, N, l->in_dim[1],
	    io->stream);
}
#endif

const struct layer_type layer_layernorm = {
	.name = "layernorm",
	.what = "LayerNorm",
	.pooled = 1,
	.setup = ln_setup,
	.init = ln_init,
	.forward = ln_fwd,
	.backward = ln_bwd,
#ifdef HAVE_CUDA
	.gpu_forward = ln_gpu_fwd,
	.gpu_backward = ln_gpu_bwd,
#endif
};
