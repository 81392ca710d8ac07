/*
 * model-gpu.h: a model's forward and backward passes on a CUDA device,
 * for `device: cuda` jobs.  The host model (model.h) stays the model of
 * record: its parameter buffer is what the optimizer updates, what
 * checkpoints save and what evaluation reads.  The device holds a copy of
 * the parameters, the gradients and the activations; a step uploads each
 * micro-batch, runs the kernels of kernels/cuda, and brings the summed
 * gradient back for the exchange and the update, after which the new
 * parameters go up again.  Every layer must have CUDA entry points
 * (layer.h): linear and ReLU do, and the transformer's layers, so mlp and
 * gpt models run; a model kind that spec.h marks as not cuda (cnn) is
 * refused already when the job is read.
 *
 * Each call returns 0, or -1 with the reason (file:line of the failing
 * CUDA call) in err.  In a build without CUDA every call fails, saying so.
 */
#ifndef HUNTER_MODEL_GPU_H
#define HUNTER_MODEL_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "backend/worker/model.h"

struct model_gpu;

#ifdef HAVE_CUDA
/*
 * Make the current device (cudaSetDevice first) hold m's parameters,
 * gradients and activations for max_batch samples.  NULL with err when
 * it cannot; *oom is then 1 if the device ran out of memory.  The
 * thread's cuBLAS handle is made here too, and kept for its later models.
 */
struct model_gpu *model_gpu_create(const struct model *m, int max_batch,
	    int *oom, char *err, size_t errlen);
void	model_gpu_free(struct model_gpu *);
/* Upload the host parameters (m->params of the model it was made for). */
int	model_gpu_set_params(struct model_gpu *, const float *params,
	    char *err, size_t errlen);
int	model_gpu_zero_grads(struct model_gpu *, char *err, size_t errlen);
/*
 * Forward and backward of B samples of in (host: a class model's images
 * and labels, a token model's tokens and targets): the device gradients
 * gain the gradient of the summed loss times scale, and *loss the summed
 * loss (as model_forward returns it).  Waits for the device.
 */
int	model_gpu_step(struct model_gpu *, const struct model_input *in,
	    int B, float scale, double *loss, char *err, size_t errlen);
/* Download the n_params gradients into grads (host). */
int	model_gpu_get_grads(struct model_gpu *, float *grads, char *err,
	    size_t errlen);
#else
#include <stdio.h>

static inline struct model_gpu *
model_gpu_create(const struct model *m, int max_batch, int *oom, char *err,
    size_t errlen)
{
	(void)m;
	(void)max_batch;
	*oom = 0;
	snprintf(err, errlen, "no CUDA device: hunter was built without CUDA");
	return NULL;
}

static inline void
model_gpu_free(struct model_gpu *g)
{
	(void)g;
}

/* The rest are never reached without CUDA: there is no model_gpu. */
static inline int
model_gpu_set_params(struct model_gpu *g, const float *params, char *err,
    size_t errlen)
{
	(void)g;
	(void)params;
	snprintf(err, errlen, "hunter was built without CUDA");
	return -1;
}

static inline int
model_gpu_zero_grads(struct model_gpu *g, char *err, size_t errlen)
{
	return model_gpu_set_params(g, NULL, err, errlen);
}

static inline int
model_gpu_step(struct model_gpu *g, const struct model_input *in, int B,
    float scale, double *loss, char *err, size_t errlen)
{
	(void)in;
	(void)B;
	(void)scale;
	(void)loss;
	return model_gpu_set_params(g, NULL, err, errlen);
}

static inline int
model_gpu_get_grads(struct model_gpu *g, float *grads, char *err,
    size_t errlen)
{
	(void)grads;
	return model_gpu_set_params(g, NULL, err, errlen);
}
#endif

#endif
