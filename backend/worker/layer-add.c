/*
 * layer-add.c: the residual add, out = in[0] + in[1], of two activations
 * of one shape (a block's input and what the block made of it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/transformer.h"
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

const struct layer_type layer_add = {
	.name = "add",
	.what = "residual add",
	.setup = add_setup,
	.forward = add_fwd,
	.backward = add_bwd,
};
