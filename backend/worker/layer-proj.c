/*
 * layer-proj.c: a projection of each token, y = x W + b, with W stored
 * [in, out] as GPT-2's checkpoints store it (the Conv1D of Hugging Face's
 * GPT-2), so NAME.weight [C, out] and NAME.bias [out] load in PyTorch as
 * they are.  Weights start from a normal of deviation 0.02, or the
 * builder's (args.std: the residual projections' 0.02 / sqrt(2 L)), and
 * biases at 0.
 *
 * Two epilogues save a layer each, and a pass over its output: with
 * args.gelu the output is GELU(x W + b), x W + b kept per sample (aux)
 * for the backward pass, which overwrites it with the gradient there;
 * with a second source (the residual stream, of the output's shape) the
 * output is that stream plus x W + b, and the stream's gradient is the
 * output's.  Both give the bits of a projection followed by the GELU or
 * the add layer they replace.
 */
#include <stdio.h>
#include <stdlib.h>
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
	/* A builder's mistake, not the user's. */
	if (l->n_src == 2 && (l->src[1] < 0 || l->args.gelu ||
	    m->layers[l->src[1]].out_size != l->out_size)) {
		fprintf(stderr, "model: proj %s: the stream it adds to "
		    "differs\n", l->name);
		abort();
	}
	if (l->args.gelu)
		l->aux_bytes = l->out_size * sizeof(float);
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
	const float *w = io->params + l->param[PROJ_W];
	const float *b = io->params + l->param[PROJ_B];
	int	 N = io->B * l->in_dim[0], C = l->in_dim[1], OC = l->out_dim[1];

	if (l->args.gelu)
		matmul_gelu_forward(io->pool, io->out, io->aux, io->in[0], w, b,
		    N, C, OC);
	else if (l->n_src == 2)
		matmul_residual_forward(io->pool, io->out, io->in[0], w, b,
		    io->in[1], N, C, OC);
	else
		matmul_forward(io->pool, io->out, io->in[0], w, b, N, C, OC);
}

static void
proj_bwd(const struct layer *l, const struct layer_io *io)
{
	const float *w = io->params + l->param[PROJ_W];
	float	*dw = io->grads + l->param[PROJ_W];
	float	*db = io->grads + l->param[PROJ_B];
	int	 N = io->B * l->in_dim[0], C = l->in_dim[1], OC = l->out_dim[1];

	int	 add = (l->din_add & 1u) != 0;

	/* The input's gradient comes out of the GEMM: written, or added
	 * where another reader wrote it first. */
	if (l->n_src == 2 && io->din[1] != NULL)
		grad_pass(io->pool, io->din[1], io->dout, (size_t)N * OC,
		    (l->din_add & 2u) != 0);
	if (l->args.gelu)
		matmul_gelu_backward(io->pool, io->din[0], add, dw, db,
		    io->dout, io->aux, io->in[0], w, N, C, OC);
	else
		matmul_backward(io->pool, io->din[0], add, dw, db, io->dout,
		    io->in[0], w, N, C, OC);
}

#ifdef HAVE_CUDA
/* On the device the epilogues are the kernels of the layers they
 * replace, after the projection. */
static int
proj_gpu_fwd(const struct layer *l, const struct layer_io *io)
{
	int	 N = io->B * l->in_dim[0];
	size_t	 n = (size_t)N * l->out_dim[1];
	float	*y = l->args.gelu ? io->aux : io->out;

	if (cuda_matmul_forward(y, io->in[0], io->params + l->param[PROJ_W],
	    io->params + l->param[PROJ_B], N, l->in_dim[1], l->out_dim[1],
	    io->stream) != 0)
		return -1;
	if (l->args.gelu)
		return cuda_gelu_forward(io->out, io->aux, n, io->stream);
	if (l->n_src == 2)
		return cuda_residual_forward(io->out, io->out, io->in[1], n,
		    io->stream);
	return 0;
}

static int
proj_gpu_bwd(const struct layer *l, const struct layer_io *io)
{
	int	 N = io->B * l->in_dim[0];
	size_t	 n = (size_t)N * l->out_dim[1];
	const float *dy = io->dout;

	if (io->din[0] != NULL && layer_gpu_din_begin(l, io, 0,
	    l->in_size) != 0)
		return -1;
	if (l->n_src == 2 && io->din[1] != NULL) {
		if (l->din_add & 2u) {
			if (cuda_residual_backward(io->din[1], NULL, io->dout,
			    n, io->stream) != 0)
				return -1;
		} else
			CUDA_CHECK(cudaMemcpyAsync(io->din[1], io->dout,
			    n * sizeof(float), cudaMemcpyDeviceToDevice,
			    io->stream));
	}
	if (l->args.gelu) {
		/* The gradient at x W + b, in the scratch. */
		CUDA_CHECK(cudaMemsetAsync(io->workspace, 0, n * sizeof(float),
		    io->stream));
		if (cuda_gelu_backward(io->workspace, io->aux, io->dout, n,
		    io->stream) != 0)
			return -1;
		dy = io->workspace;
	}
	return cuda_matmul_backward(io->din[0], io->grads + l->param[PROJ_W],
	    io->grads + l->param[PROJ_B], dy, io->in[0],
	    io->params + l->param[PROJ_W], N, l->in_dim[1], l->out_dim[1],
	    io->stream);
}

/* GELU's gradient takes the output's size of scratch. */
static size_t
proj_gpu_ws(const struct layer *l, int B)
{
	return l->args.gelu ? (size_t)B * l->out_size * sizeof(float) : 0;
}
#endif

const struct layer_type layer_proj = {
	.name = "proj",
	.what = "projection",
	.pooled = 1,
	.setup = proj_setup,
	.init = proj_init,
	.forward = proj_fwd,
	.backward = proj_bwd,
#ifdef HAVE_CUDA
	.gpu_forward = proj_gpu_fwd,
	.gpu_backward = proj_gpu_bwd,
	.gpu_workspace = proj_gpu_ws,
#endif
};
