/*
 * layer-attention.c: causal multi-head self-attention over the fused
 * projection [T, 3C] (queries, keys, values) to [T, C].  It has no
 * tensors of its own: the projections around it are layer-proj.c's.
 * On the host each sample keeps two floats a row of each head (aux: the
 * softmax's statistics, kernels/cpu/attention.c), and both passes take
 * a block of queries' scores a thread from the model's workspace, so its
 * memory grows with T, not T * T.  The device's twin keeps its heads'
 * probabilities (H * T * T floats a sample, gpu_aux_bytes) and takes
 * max(B, H) * T * T floats of scratch.
 */
#include "lib/pool.h"
#include "kernels/cpu/transformer.h"
#ifdef HAVE_CUDA
#include "kernels/cuda/cuda-kernels.h"
#endif
#include "backend/worker/model.h"

static void
attn_setup(struct model *m, struct layer *l)
{
	int	 T = l->in_dim[0], C = l->in_dim[1] / 3, H = l->args.heads;

	l->out_dim[0] = T;
	l->out_dim[1] = C;
	l->out_dim[2] = 1;
	l->out_size = (size_t)T * C;
	l->aux_bytes = 2 * (size_t)H * T * sizeof(float);
	l->gpu_aux_bytes = (size_t)H * T * T * sizeof(float);
	model_need_workspace(m, attention_workspace(T, C / H,
	    pool_threads(m->pool)));
}

static void
attn_fwd(const struct layer *l, const struct layer_io *io)
{
	attention_forward(io->pool, io->out, io->aux, io->workspace,
	    io->in[0], io->B, l->out_dim[0], l->out_dim[1], l->args.heads);
}

static void
attn_bwd(const struct layer *l, const struct layer_io *io)
{
	if (io->din[0] == NULL)
		return;
	attention_backward(io->pool, io->din[0], (l->din_add & 1u) != 0,
	    io->dout, io->in[0],
	    io->aux, io->workspace, io->B, l->out_dim[0], l->out_dim[1],
	    l->args.heads);
}

#ifdef HAVE_CUDA
static int
attn_gpu_fwd(const struct layer *l, const struct layer_io *io)
{
	return cuda_attention_forward(io->out, io->aux, io->in[0], io->B,
	    l->out_dim[0], l->out_dim[1], l->args.heads, io->stream);
}

static int
attn_gpu_bwd(const struct layer *l, const struct layer_io *io)
{
	if (io->din[0] == NULL)
		return 0;
	if (layer_gpu_din_begin(l, io, 0, l->in_size) != 0)
		return -1;
	return cuda_attention_backward(io->din[0], io->dout, io->in[0],
	    io->aux, io->workspace, io->B, l->out_dim[0], l->out_dim[1],
	    l->args.heads, io->stream);
}

static size_t
attn_gpu_ws(const struct layer *l, int B)
{
	return cuda_attention_workspace(B, l->out_dim[0], l->args.heads);
}
#endif

const struct layer_type layer_attention = {
	.name = "attention",
	.what = "attention",
	.pooled = 1,
	.setup = attn_setup,
	.forward = attn_fwd,
	.backward = attn_bwd,
#ifdef HAVE_CUDA
	.gpu_forward = attn_gpu_fwd,
	.gpu_backward = attn_gpu_bwd,
	.gpu_workspace = attn_gpu_ws,
#endif
};
