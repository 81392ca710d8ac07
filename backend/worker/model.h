/*
 * model.h: a network as a list of layers over two contiguous float32
 * buffers, one for the parameters and one for their gradients, so that a
 * gradient is one flat vector to compress and exchange.  Each model type
 * (mlp, cnn) is a builder in the model table that appends layers.
 */
#ifndef HUNTER_MODEL_H
#define HUNTER_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "backend/spec/spec.h"

/* Floats after the gradients in the grads buffer, where the train loop
 * carries control values through the same exchange as the gradients. */
#define MODEL_GRAD_EXTRA 5

enum layer_kind { LAYER_LINEAR, LAYER_RELU, LAYER_CONV, LAYER_POOL };

struct layer {
	enum layer_kind	 kind;
	int		 c, h, w;	/* input shape per sample (linear: c = in) */
	int		 oc, oh, ow;	/* output shape per sample */
	int		 k, pad;	/* conv kernel side and padding */
	size_t		 w_off, b_off;	/* into params/grads (linear, conv) */
	size_t		 in_size, out_size; /* floats per sample */
	float		*out;		/* [max_batch, out_size] */
	float		*dout;		/* gradient of out */
	int32_t		*argmax;	/* pool */
};

/* A named tensor inside the parameter buffer, for checkpoints. */
struct tensor_info {
	char	 name[48];
	size_t	 offset, numel;
	int	 ndim;
	int	 shape[4];
};

struct model {
	const struct model_type *type;
	int		 in_c, in_h, in_w, classes;
	int		 max_batch;
	struct layer	*layers;
	int		 n_layers;
	struct tensor_info *tensors;
	int		 n_tensors;
	size_t		 n_params;
	float		*params;
	float		*grads;		/* n_params + MODEL_GRAD_EXTRA */
	float		*probs;		/* [max_batch, classes] */
	float		*workspace;	/* conv im2col scratch */
	size_t		 workspace_len;
	float		*dinput;	/* scratch for the first layer's dx */
};

struct model_type {
	const char	*name;
	enum spec_model	 kind;
	/* Append the layers of this type for the spec. */
	void		(*build)(struct model *, const struct job_spec *);
};

const struct model_type *model_type_find(enum spec_model);

/* Build a model for images of c x h x w and `classes` outputs, with
 * activations for up to max_batch samples, initialised from seed. */
struct model *model_create(const struct job_spec *, int c, int h, int w,
	    int classes, int max_batch, uint64_t seed);
void	model_free(struct model *);
/* Make room for batches of up to max_batch (activations only; the
 * parameters and gradients stay). */
void	model_set_max_batch(struct model *, int max_batch);

/* Builder helpers: append a layer taking the current output shape. */
void	model_add_linear(struct model *, int out, const char *name);
void	model_add_relu(struct model *);
void	model_add_conv(struct model *, int out_c, int k, int pad, const char *name);
void	model_add_pool(struct model *);
/* The spec's hidden linear+ReLU layers, then a linear layer to the
 * classes: fc1, fc2, ... */
void	model_add_dense_head(struct model *, const struct job_spec *);

/* Forward B samples.  Returns the summed loss; adds correct predictions
 * to *correct when it is not NULL. */
double	model_forward(struct model *, const float *x, const uint8_t *y, int B,
	    int *correct);
/* Backward after model_forward on the same batch; parameter gradients are
 * accumulated, scaled by `scale` (1 / global batch). */
void	model_backward(struct model *, const float *x, const uint8_t *y, int B,
	    float scale);
/* Forward only, for evaluation: returns the number correct and adds the
 * summed loss to *loss. */
int	model_evaluate(struct model *, const float *x, const uint8_t *y, int n,
	    double *loss);

/* Bytes the model holds for a batch of B: parameters, gradients,
 * activations and workspace (optimizer state is counted by its owner). */
size_t	model_tracked_bytes(const struct model *, int B);

#endif
