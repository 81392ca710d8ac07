/*
 * model.h: a network as a list of layers (layer.h) over two contiguous
 * float32 buffers, one for the parameters and one for their gradients, so
 * that a gradient is one flat vector to compress and exchange.  Each model
 * kind of spec.h (spec_model_kind: its name, keys and checks) has a
 * builder here, in the table of model.c indexed by enum spec_model, that
 * appends its layers.
 */
#ifndef HUNTER_MODEL_H
#define HUNTER_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "backend/spec/spec.h"
#include "backend/worker/layer.h"

/* Floats after the gradients in the grads buffer, where the train loop
 * carries control values through the same exchange as the gradients
 * (the loss, the controls, the adaptive schedule's norm, a checkpoint's
 * vote: train.c, train-internal.h). */
#define MODEL_GRAD_EXTRA 6

/* A named tensor inside the parameter buffer, for checkpoints. */
struct tensor_info {
	char	 name[48];
	size_t	 offset, numel;
	int	 ndim;
	int	 shape[4];
	int	 no_decay;	/* the optimizer leaves it out of weight decay */
};

/*
 * What a model is trained against, after its last layer.  A class model
 * (mlp, cnn) takes softmax cross-entropy over its classes against a label
 * a sample; a token model (gpt) takes it over the vocabulary at every
 * position against the next token, fused with its gradient, which is
 * written over the logits (the last layer's dout is its out).
 */
enum model_loss { MODEL_LOSS_CLASSES, MODEL_LOSS_TOKENS };

/* One batch as a model reads it: images and their labels, or token
 * windows (the tokens and, a position later, their targets). */
struct model_input {
	const float	*x;		/* [B, c * h * w] */
	const uint8_t	*y;		/* [B] */
	const int32_t	*tok;		/* [B, T] */
	const int32_t	*tgt;		/* [B, T]; < 0: no target there */
};

struct model {
	const struct spec_model_kind *type;	/* its name, for checkpoints */
	enum model_loss	 loss;		/* set by the builder */
	int		 in_c, in_h, in_w, classes;	/* tokens: T, 1, 1, vocab */
	int		 max_batch;
	struct layer	*layers;
	int		 n_layers;
	struct tensor_info *tensors;
	int		 n_tensors;
	size_t		 n_params;
	float		*params;
	float		*grads;		/* n_params + MODEL_GRAD_EXTRA */
	float		*probs;		/* [max_batch, classes]; classes loss */
	float		*workspace;	/* shared scratch: conv's im2col */
	size_t		 workspace_len;
	/* The pool its host passes run on, of OpenBLAS's threads at
	 * creation (lib/pool.h), when every layer is pooled (layer.h; else
	 * NULL); on a pool of more than one, OpenBLAS is held at one thread
	 * during the passes, so the parts' GEMMs each take one. */
	struct pool	*pool;
	int		 pooled;
	/* Called after layer i's backward when set (train.overlap). */
	void		(*on_backward)(void *ctx, int i);
	void		*on_backward_ctx;
};

/* A model kind's builder, at its kind's index in model.c's table. */
struct model_type {
	/* Append the layers of this kind for the spec. */
	void	(*build)(struct model *, const struct job_spec *);
};

/* Build a model for images of c x h x w and `classes` outputs, with
 * activations for up to max_batch samples, initialised from seed; NULL
 * when the job's model kind has no builder. */
struct model *model_create(const struct job_spec *, int c, int h, int w,
	    int classes, int max_batch, uint64_t seed);
/* The same with a builder of the caller's (tests); m->type stays the
 * job's kind. */
struct model *model_build(const struct model_type *, const struct job_spec *,
	    int c, int h, int w, int classes, int max_batch, uint64_t seed);
void	model_free(struct model *);
/* Make room for batches of up to max_batch (activations only; the
 * parameters and gradients stay). */
void	model_set_max_batch(struct model *, int max_batch);

/* For builders: append a layer of this type, reading the layer before it
 * unless args say otherwise (args may be NULL); its index. */
int	model_add(struct model *, const struct layer_type *, const char *name,
	    const struct layer_args *);
/* The spec's hidden linear+ReLU layers, then a linear layer to the
 * classes: fc1, fc2, ... */
void	model_add_dense_head(struct model *, const struct job_spec *);

/* Forward B samples.  Returns the summed loss (over samples, or over
 * the targets of a token model); adds correct predictions to *correct
 * when it is not NULL (a class model's). */
double	model_forward(struct model *, const struct model_input *, int B,
	    int *correct);
/* Backward after model_forward on the same batch; parameter gradients are
 * accumulated, scaled by `scale` (1 / global batch; a token model's
 * loss is the mean over its tokens, so scale is 1 / (global * T)). */
void	model_backward(struct model *, const struct model_input *, int B,
	    float scale);
/* Forward only over n samples, for evaluation: returns the number
 * correct (0 for a token model) and adds the summed loss to *loss. */
int	model_evaluate(struct model *, const struct model_input *, int n,
	    double *loss);
/* The input of samples [off, off + n) of a batch of inputs. */
struct model_input model_input_at(const struct model *,
	    const struct model_input *, int off);

/* Bytes the model holds for a batch of B: parameters, gradients,
 * activations and workspace (optimizer state is counted by its owner). */
size_t	model_tracked_bytes(const struct model *, int B);

#endif
