/*
 * layer-relu.c: ReLU, y = max(x, 0), in place on its input's buffers
 * when it is their only reader (its backward needs only its output).
 */
#include "kernels/cpu/kernels.h"
#ifdef HAVE_CUDA
#include "kernels/cuda/cuda-kernels.h"
#endif
#include "backend/worker/model.h"

static void
relu_setup(struct model *m, struct layer *l)
{
	(void)m;
	layer_same_shape(l);
}

static void
relu_fwd(const struct layer *l, const struct layer_io *io)
{
	relu_forward(io->out, io->in[0], (size_t)io->B * l->out_size);
}

static void
relu_bwd(const struct layer *l, const struct layer_io *io)
{
	if (io->din[0] != NULL)
		relu_backward(io->din[0], io->dout, io->out,
		    (size_t)io->B * l->out_size);
}

#ifdef HAVE_CUDA
static int
relu_gpu_fwd(const struct layer *l, const struct layer_io *io)
{
	return cuda_relu_forward(io->out, io->in[0],
	    (size_t)io->B * l->out_size, io->stream);
}

static int
relu_gpu_bwd(const struct layer *l, const struct layer_io *io)
{
	if (io->din[0] == NULL)
		return 0;
	return cuda_relu_backward(io->din[0], io->dout, io->out,
	    (size_t)io->B * l->out_size, io->stream);
}
#endif

const struct layer_type layer_relu = {
	.name = "relu",
	.what = "ReLU",
	.inplace = 1,
	.setup = relu_setup,
	.forward = relu_fwd,
	.backward = relu_bwd,
#ifdef HAVE_CUDA
	.gpu_forward = relu_gpu_fwd,
	.gpu_backward = relu_gpu_bwd,
#endif
};
