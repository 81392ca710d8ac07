/*
 * layer-gelu.c: GELU in GPT-2's tanh form.  Not in place: its backward
 * pass reads its input.
 */
#include "kernels/cpu/transformer.h"
#include "backend/worker/model.h"

static void
gelu_setup(struct model *m, struct layer *l)
{
	(void)m;
	layer_same_shape(l);
}

static void
gelu_fwd(const struct layer *l, const struct layer_io *io)
{
	gelu_forward(io->out, io->in[0], (size_t)io->B * l->out_size);
}

static void
gelu_bwd(const struct layer *l, const struct layer_io *io)
{
	if (io->din[0] == NULL)
		return;
	layer_din_begin(l, io, 0, l->in_size);
	gelu_backward(io->din[0], io->in[0], io->dout,
	    (size_t)io->B * l->out_size);
}

const struct layer_type layer_gelu = {
	.name = "gelu",
	.what = "GELU",
	.setup = gelu_setup,
	.forward = gelu_fwd,
	.backward = gelu_bwd,
};
