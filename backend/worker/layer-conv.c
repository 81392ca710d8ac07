/*
 * layer-conv.c: the stride-1 2-D convolution of kernels/cpu/conv.c, a
 * k x k kernel with zero padding pad, on C,H,W inputs.  Its tensors are
 * NAME.weight [K, C, k, k] and NAME.bias [K]; the im2col scratch is the
 * model's shared workspace.  No CUDA twin yet.
 */
#include "kernels/cpu/kernels.h"
#include "backend/worker/model.h"

enum { CONV_W, CONV_B };

static void
conv_setup(struct model *m, struct layer *l)
{
	int	 c = l->in_dim[0], h = l->in_dim[1], w = l->in_dim[2];
	int	 k = l->args.k, pad = l->args.pad, oc = l->args.out;

	l->out_dim[0] = oc;
	l->out_dim[1] = h + 2 * pad - k + 1;
	l->out_dim[2] = w + 2 * pad - k + 1;
	l->out_size = (size_t)oc * l->out_dim[1] * l->out_dim[2];
	l->param[CONV_W] = model_param(m, l, "weight", 4,
	    (int[]){ oc, c, k, k });
	l->param[CONV_B] = model_param(m, l, "bias", 1, (int[]){ oc });
	model_need_workspace(m, conv2d_workspace(c, h, w, k, k, pad));
}

static void
conv_init(const struct layer *l, float *p, struct rng *r)
{
	size_t	 fan_in = (size_t)l->in_dim[0] * l->args.k * l->args.k;

	layer_init_uniform(p + l->param[CONV_W], fan_in * l->args.out, fan_in,
	    r);
	layer_init_uniform(p + l->param[CONV_B], (size_t)l->args.out, fan_in,
	    r);
}

static void
conv_fwd(const struct layer *l, const struct layer_io *io)
{
	conv2d_forward(io->out, io->in[0], io->params + l->param[CONV_W],
	    io->params + l->param[CONV_B], io->workspace, io->B, l->in_dim[0],
	    l->in_dim[1], l->in_dim[2], l->args.out, l->args.k, l->args.k,
	    l->args.pad);
}

static void
conv_bwd(const struct layer *l, const struct layer_io *io)
{
	conv2d_backward(io->din[0], io->grads + l->param[CONV_W],
	    io->grads + l->param[CONV_B], io->dout, io->in[0],
	    io->params + l->param[CONV_W], io->workspace, io->B, l->in_dim[0],
	    l->in_dim[1], l->in_dim[2], l->args.out, l->args.k, l->args.k,
	    l->args.pad);
}

const struct layer_type layer_conv = {
	.name = "conv",
	.what = "convolution",
	.setup = conv_setup,
	.init = conv_init,
	.forward = conv_fwd,
	.backward = conv_bwd,
};
