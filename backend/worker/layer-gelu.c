/*
 * layer-gelu.c: GELU in GPT-2's tanh form.  Not in place: its backward
 * pass reads its input.
 */
#include "kernels/cpu/transformer.h"
#ifdef HAVE_CUDA
#include "kernels/cuda/cuda-kernels.h"
#endif
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

#ifdef HAVE_CUDA
static int
gelu_gpu_fwd(const struct layer *l, const struct layer_io *io)
{
	return cuda_gelu_forward(io->out, io->in[0],
	    (size_t)io->B * l->out_size, io->stream);
}

static int
gelu_gpu_bwd(const struct layer *l, const struct layer_io *io)
{
	if (io->din[0] == NULL)
		return 0;
	if (layer_gpu_din_begin(l, io, 0, l->in_size) != 0)
		return -1;
	return cuda_gelu_backward(io->din[0], io->in[0], io->dout,
	    (size_t)io->B * l->out_size, io->stream);
}
#endif

const struct layer_type layer_gelu = {
	.name = "gelu",
	.what = "GELU",
	.setup = gelu_setup,
	.forward = gelu_fwd,
	.backward = gelu_bwd,
#ifdef HAVE_CUDA
	.gpu_forward = gelu_gpu_fwd,
	.gpu_backward = gelu_gpu_bwd,
#endif
};
