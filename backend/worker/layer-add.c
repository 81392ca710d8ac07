/*
 * layer-add.c: the residual add, out = in[0] + in[1], of two activations
 * of one shape (a block's input and what the block made of it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/transformer.h"
#ifdef HAVE_CUDA
#include "kernels/cuda/cuda-kernels.h"
#endif
#include "backend/worker/model.h"

static void
add_setup(struct model *m, struct layer *l)
{
	const struct layer *b = &m->layers[l->src[1]];

	/* A builder's mistake, not the user's. */
	if (l->n_src != 2 || l->src[1] < 0 || b->out_size != l->in_size) {
		fprintf(stderr, "model: add layer %s: inputs differ\n", l->name);
		abort();
	}
	layer_same_shape(l);
}

static void
add_fwd(const struct layer *l, const struct layer_io *io)
{
	residual_forward(io->out, io->in[0], io->in[1],
	    (size_t)io->B * l->out_size);
}

static void
add_bwd(const struct layer *l, const struct layer_io *io)
{
	size_t	 n = (size_t)io->B * l->out_size;

	for (int j = 0; j < 2; j++) {
		if (io->din[j] == NULL)
			continue;
		if (l->din_add & (1u << j)) {
			for (size_t i = 0; i < n; i++)
				io->din[j][i] += io->dout[i];
		} else
			memcpy(io->din[j], io->dout, n * sizeof(float));
	}
}

#ifdef HAVE_CUDA
static int
add_gpu_fwd(const struct layer *l, const struct layer_io *io)
{
	return cuda_residual_forward(io->out, io->in[0], io->in[1],
	    (size_t)io->B * l->out_size, io->stream);
}

/* As on the host: each input's gradient is dout, copied, or added where
 * another reader wrote it first. */
static int
add_gpu_bwd(const struct layer *l, const struct layer_io *io)
{
	size_t	 n = (size_t)io->B * l->out_size;

	for (int j = 0; j < 2; j++) {
		if (io->din[j] == NULL)
			continue;
		if (l->din_add & (1u << j)) {
			if (cuda_residual_backward(io->din[j], NULL, io->dout, n,
			    io->stream) != 0)
				return -1;
		} else
			CUDA_CHECK(cudaMemcpyAsync(io->din[j], io->dout,
			    n * sizeof(float), cudaMemcpyDeviceToDevice,
			    io->stream));
	}
	return 0;
}
#endif

const struct layer_type layer_add = {
	.name = "add",
	.what = "residual add",
	.setup = add_setup,
	.forward = add_fwd,
	.backward = add_bwd,
#ifdef HAVE_CUDA
	.gpu_forward = add_gpu_fwd,
	.gpu_backward = add_gpu_bwd,
#endif
};
