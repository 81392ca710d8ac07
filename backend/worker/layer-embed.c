/*
 * layer-embed.c: the token and position embedding of a GPT, out[b,t,:] =
 * wte[tok[b,t],:] + wpe[t,:], reading the model's tokens (io->tok).  Its
 * tensors keep GPT-2's names, wte.weight [vocab, C] and wpe.weight
 * [context, C] (the layer's own name is empty), initialised from a normal
 * of deviation 0.02 as GPT-2's are; the output head reuses wte.weight
 * (layer-head.c).
 */
#include "kernels/cpu/transformer.h"
#ifdef HAVE_CUDA
#include "kernels/cuda/cuda-kernels.h"
#endif
#include "backend/worker/model.h"

enum { EMBED_WTE, EMBED_WPE };

static void
embed_setup(struct model *m, struct layer *l)
{
	int	 T = l->in_dim[0], C = l->args.out, V = l->args.vocab;

	l->out_dim[0] = T;
	l->out_dim[1] = C;
	l->out_dim[2] = 1;
	l->out_size = (size_t)T * C;
	l->param[EMBED_WTE] = model_param(m, l, "wte.weight", 2,
	    (int[]){ V, C });
	l->param[EMBED_WPE] = model_param(m, l, "wpe.weight", 2,
	    (int[]){ T, C });
}

static void
embed_init(const struct layer *l, float *p, struct rng *r)
{
	size_t	 C = (size_t)l->out_dim[1];

	layer_init_normal(p + l->param[EMBED_WTE], (size_t)l->args.vocab * C,
	    0.02f, r);
	layer_init_normal(p + l->param[EMBED_WPE], (size_t)l->in_dim[0] * C,
	    0.02f, r);
}

static void
embed_fwd(const struct layer *l, const struct layer_io *io)
{
	embed_forward(io->pool, io->out, io->tok,
	    io->params + l->param[EMBED_WTE], io->params + l->param[EMBED_WPE],
	    io->B, l->out_dim[0], l->out_dim[1]);
}

static void
embed_bwd(const struct layer *l, const struct layer_io *io)
{
	embed_backward(io->pool, io->grads + l->param[EMBED_WTE],
	    io->grads + l->param[EMBED_WPE], io->dout, io->tok, io->B,
	    l->out_dim[0], l->out_dim[1]);
}

#ifdef HAVE_CUDA
static int
embed_gpu_fwd(const struct layer *l, const struct layer_io *io)
{
	return cuda_embed_forward(io->out, io->tok,
	    io->params + l->param[EMBED_WTE], io->params + l->param[EMBED_WPE],
	    io->B, l->out_dim[0], l->out_dim[1], io->stream);
}

static int
embed_gpu_bwd(const struct layer *l, const struct layer_io *io)
{
	return cuda_embed_backward(io->grads + l->param[EMBED_WTE],
	    io->grads + l->param[EMBED_WPE], io->dout, io->tok, io->B,
	    l->out_dim[0], l->out_dim[1], l->args.vocab, io->workspace,
	    io->stream);
}

/* The backward pass sorts the batch's tokens. */
static size_t
embed_gpu_ws(const struct layer *l, int B)
{
	return cuda_embed_backward_workspace(B * l->out_dim[0], l->args.vocab);
}
#endif

const struct layer_type layer_embed = {
	.name = "embed",
	.what = "token embedding",
	.pooled = 1,
	.setup = embed_setup,
	.init = embed_init,
	.forward = embed_fwd,
	.backward = embed_bwd,
#ifdef HAVE_CUDA
	.gpu_forward = embed_gpu_fwd,
	.gpu_backward = embed_gpu_bwd,
	.gpu_workspace = embed_gpu_ws,
#endif
};
