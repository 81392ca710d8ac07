/*
 * layer-head.c: a GPT's output head, logits [T, vocab] = x wte^T, tied
 * to the token embedding: it makes no tensor, its param[0] is the
 * embedding's wte.weight, and its gradient adds to the embedding's.
 */
#include <stdio.h>
#include <stdlib.h>

#include "kernels/cpu/transformer.h"
#ifdef HAVE_CUDA
#include "kernels/cuda/cuda-kernels.h"
#endif
#include "backend/worker/model.h"

static void
head_setup(struct model *m, struct layer *l)
{
	const struct tensor_info *wte = model_tensor(m, "wte.weight");

	/* A builder's mistake, not the user's. */
	if (wte == NULL || wte->ndim != 2 || wte->shape[1] != l->in_dim[1]) {
		fprintf(stderr, "model: head %s: no embedding to tie to\n",
		    l->name);
		abort();
	}
	l->out_dim[0] = l->in_dim[0];
	l->out_dim[1] = wte->shape[0];
	l->out_dim[2] = 1;
	l->out_size = (size_t)l->in_dim[0] * wte->shape[0];
	l->param[0] = wte->offset;
}

static void
head_fwd(const struct layer *l, const struct layer_io *io)
{
	head_forward(io->pool, io->out, io->in[0], io->params + l->param[0],
	    io->B * l->in_dim[0], l->in_dim[1], l->out_dim[1]);
}

static void
head_bwd(const struct layer *l, const struct layer_io *io)
{
	head_backward(io->pool, io->din[0], (l->din_add & 1u) != 0,
	    io->grads + l->param[0], io->dout,
	    io->in[0], io->params + l->param[0], io->B * l->in_dim[0],
	    l->in_dim[1], l->out_dim[1]);
}

#ifdef HAVE_CUDA
static int
head_gpu_fwd(const struct layer *l, const struct layer_io *io)
{
	return cuda_head_forward(io->out, io->in[0], io->params + l->param[0],
	    io->B * l->in_dim[0], l->in_dim[1], l->out_dim[1], io->stream);
}

static int
head_gpu_bwd(const struct layer *l, const struct layer_io *io)
{
	if (layer_gpu_din_begin(l, io, 0, l->in_size) != 0)
		return -1;
	return cuda_head_backward(io->din[0], io->grads + l->param[0],
	    io->dout, io->in[0], io->params + l->param[0],
	    io->B * l->in_dim[0], l->in_dim[1], l->out_dim[1], io->stream);
}
#endif

const struct layer_type layer_head = {
	.name = "head",
	.what = "output head",
	.pooled = 1,
	.setup = head_setup,
	.forward = head_fwd,
	.backward = head_bwd,
#ifdef HAVE_CUDA
	.gpu_forward = head_gpu_fwd,
	.gpu_backward = head_gpu_bwd,
#endif
};
