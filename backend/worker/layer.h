/*
 * layer.h: the layer family.  Each kind of layer is one const struct
 * layer_type in a file of its own (layer-NAME.c) and one line at the end
 * of this header: how it lays out its output and its parameters when a
 * builder appends it, how it initialises them, its forward and backward
 * passes on the host, and the same two on the device with the kernels of
 * kernels/cuda (NULL where it has none, and in a build without CUDA).
 * model.c and model-gpu.c iterate over the layers and call these; they
 * know no kind by name.
 *
 * A layer reads the outputs of earlier layers (src[], by default the one
 * before it; -1 is the model's input) and writes out_size floats per
 * sample.  Shapes are per sample, outermost first: an image is C,H,W, a
 * sequence T,C,1, a flat vector n,1,1.  Its parameters are tensors of the
 * model's one buffer at param[] (model_param makes them); a layer may
 * instead point a param[] at a tensor an earlier layer made (tied
 * weights): the gradient buffer has the same layout, and gradients add.
 *
 * Gradients, as in kernels.h: parameter gradients are ADDED to io->grads;
 * the gradient of input j is WRITTEN to io->din[j], or added to it when
 * bit j of din_add is set (another reader of that activation has written
 * it first: a residual stream), and io->din[j] is NULL when nobody needs
 * it (the model's input).
 */
#ifndef HUNTER_LAYER_H
#define HUNTER_LAYER_H

#include <stddef.h>
#include <stdint.h>

#define LAYER_DIMS	3	/* C,H,W */
#define LAYER_MAX_IN	2	/* a residual add reads two activations */
/* The most tensors a layer owns: two today (a weight and a bias; the
 * embedding's wte and wpe), with room for a fused layer's. */
#define LAYER_MAX_PARAMS 4
#define LAYER_NAME_MAX	32

struct model;
struct pool;
struct rng;

/* What a builder asks of a layer; each kind reads the members it needs. */
struct layer_args {
	int	 out;			/* linear, proj: outputs; conv:
					 * channels; embed: channels */
	int	 k, pad;		/* conv: kernel side and zero padding */
	int	 heads;			/* attention */
	int	 vocab;			/* embed */
	float	 std;			/* proj: the init's standard
					 * deviation; 0: GPT-2's 0.02 */
	int	 gelu;			/* proj: GELU after it */
	int	 n_src;			/* 0: reads the layer before it */
	int	 src[LAYER_MAX_IN];	/* layer indices; -1: the model's input */
};

struct layer {
	const struct layer_type *type;
	char		 name[LAYER_NAME_MAX];	/* its tensors: NAME.weight */
	struct layer_args args;
	int		 n_src;
	int		 src[LAYER_MAX_IN];
	unsigned	 din_add;	/* see the top */
	int		 inplace;	/* shares src[0]'s out and dout */
	int		 in_dim[LAYER_DIMS], out_dim[LAYER_DIMS];
	size_t		 in_size, out_size;	/* floats per sample */
	size_t		 param[LAYER_MAX_PARAMS]; /* offsets in params, grads */
	/* Where its own tensors start: once its backward is done, the
	 * gradient from here on is final (a tie points back). */
	size_t		 param_lo;
	size_t		 aux_bytes;	/* per sample: pool's argmax */
	/* Per sample on the device where its twin keeps more than the
	 * host (attention's probabilities); 0: aux_bytes. */
	size_t		 gpu_aux_bytes;
	/* The host's buffers for max_batch samples (the device model keeps
	 * its own). */
	float		*out;
	float		*dout;
	void		*aux;
};

/* The buffers of one call, host or device pointers alike. */
struct layer_io {
	const float	*params;
	float		*grads;
	const int32_t	*tok;		/* a token model's input: [B, T] */
	const float	*in[LAYER_MAX_IN];
	float		*din[LAYER_MAX_IN];
	float		*out, *dout;
	void		*aux;		/* B * aux_bytes */
	float		*workspace;	/* the model's workspace_len floats */
	struct pool	*pool;		/* host calls: the model's pool */
	int		 B;
	void		*stream;	/* device calls: the cudaStream_t */
};

struct layer_type {
	const char	*name;
	/* What it is in a message: "layer 1 is a convolution". */
	const char	*what;
	/* May share its input's buffers (it reads nothing else of them in
	 * the backward pass than its own output). */
	int		 inplace;
	/* Its host passes run their GEMMs as parts on io->pool, which wants
	 * OpenBLAS at one thread (see model.h). */
	int		 pooled;
	/* Set out_dim, out_size and aux_bytes from in_dim, make the
	 * parameter tensors, raise the model's workspace if it needs one. */
	void	(*setup)(struct model *, struct layer *);
	/* Initialise the tensors it made; NULL when it has none. */
	void	(*init)(const struct layer *, float *params, struct rng *);
	void	(*forward)(const struct layer *, const struct layer_io *);
	void	(*backward)(const struct layer *, const struct layer_io *);
	/* On the device, queued on io->stream: 0, or -1 with the reason in
	 * cuda_last_error(). */
	int	(*gpu_forward)(const struct layer *, const struct layer_io *);
	int	(*gpu_backward)(const struct layer *, const struct layer_io *);
	/* Bytes of device scratch (io->workspace) its device passes take
	 * for B samples; NULL when it needs none beyond the host's. */
	size_t	(*gpu_workspace)(const struct layer *, int B);
};

/* For setup: a parameter tensor NAME.suffix of the layer, its offset. */
size_t	model_param(struct model *, const struct layer *, const char *suffix,
	    int ndim, const int *shape);
/* For setup: the output has the input's shape (activations, LayerNorm,
 * the residual add). */
void	layer_same_shape(struct layer *);
/* For setup: the model's workspace holds at least n floats. */
void	model_need_workspace(struct model *, size_t n);
/* For init: n floats uniform in +-1/sqrt(fan_in), PyTorch's default. */
void	layer_init_uniform(float *p, size_t n, size_t fan_in, struct rng *);
/* For init: n floats from a normal of mean 0 and this deviation. */
void	layer_init_normal(float *p, size_t n, float std, struct rng *);
/* For the layers whose kernels add into an input gradient (the
 * transformer's, kernels/cpu/transformer.h): zero io->din[j] first
 * unless this layer is to add to it.  n floats a sample. */
void	layer_din_begin(const struct layer *, const struct layer_io *, int j,
	    size_t n);
/* The same on the device (model-gpu.c): 0, or -1 with the reason in
 * cuda_last_error(). */
int	layer_gpu_din_begin(const struct layer *, const struct layer_io *,
	    int j, size_t n);
/* The tensor of the model called name, for a layer that ties to it. */
const struct tensor_info *model_tensor(const struct model *, const char *name);

extern const struct layer_type layer_linear;
extern const struct layer_type layer_relu;
extern const struct layer_type layer_conv;
extern const struct layer_type layer_pool;
extern const struct layer_type layer_embed;
extern const struct layer_type layer_layernorm;
extern const struct layer_type layer_proj;
extern const struct layer_type layer_attention;
extern const struct layer_type layer_head;

#endif
