/*
 * model-gpu.c: the forward and backward passes of model.c on the device,
 * layer for layer, with the kernels of kernels/cuda (see model-gpu.h).
 * The layout follows the host model: one parameter and one gradient
 * buffer indexed by the same offsets, a ReLU working in place on its
 * input's buffers, the softmax cross-entropy at the end.  All work goes
 * to one stream; a step waits for it once, when it reads the loss.
 */
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "lib/xmalloc.h"
#include "kernels/cuda/cuda-kernels.h"
#include "backend/worker/model-gpu.h"

struct model_gpu {
	const struct model *m;
	int		 max_batch;
	cudaStream_t	 stream;
	float		*params, *grads;	/* n_params each */
	float		**out, **dout;		/* per layer, [max_batch, out] */
	float		*x;			/* [max_batch, input] */
	uint8_t		*y;
	float		*probs;			/* [max_batch, classes] */
	double		*loss;
};

/* A CUDA runtime call; on failure the reason goes to err and the caller
 * returns -1. */
#define GPU_TRY(call) do {						\
	cudaError_t gpu_e_ = (call);					\
	if (gpu_e_ != cudaSuccess) {					\
		(void)cudaGetLastError();				\
		snprintf(err, errlen, "%s:%d: %s: %s", __FILE__,	\
		    __LINE__, #call, cudaGetErrorString(gpu_e_));	\
		return -1;						\
	}								\
} while (0)

/* A kernels/cuda call, which keeps its own reason. */
#define KERNEL_TRY(call) do {						\
	if ((call) != 0) {						\
		snprintf(err, errlen, "%s", cuda_last_error());		\
		return -1;						\
	}								\
} while (0)

/* cudaMalloc of n bytes into *p; an out-of-memory sets *oom. */
static int
gpu_alloc(void *p, size_t n, int *oom, char *err, size_t errlen)
{
	cudaError_t	 e = cudaMalloc((void **)p, n);

	if (e == cudaErrorMemoryAllocation)
		*oom = 1;
	GPU_TRY(e);
	return 0;
}

static int
gpu_layers(struct model_gpu *g, int *oom, char *err, size_t errlen)
{
	const struct model *m = g->m;
	size_t		 B = (size_t)g->max_batch;

	for (int i = 0; i < m->n_layers; i++) {
		const struct layer *l = &m->layers[i];

		switch (l->kind) {
		case LAYER_RELU:
			if (i > 0) {
				g->out[i] = g->out[i - 1];
				g->dout[i] = g->dout[i - 1];
				break;
			}
			/* FALLTHROUGH */
		case LAYER_LINEAR:
			if (gpu_alloc(&g->out[i], B * l->out_size *
			    sizeof(float), oom, err, errlen) != 0 ||
			    gpu_alloc(&g->dout[i], B * l->out_size *
			    sizeof(float), oom, err, errlen) != 0)
				return -1;
			break;
		default:
			return -1;	/* refused by gpu_supported */
		}
	}
	return 0;
}

/* Whether every layer of m has CUDA kernels; if not, why in err. */
static int
gpu_supported(const struct model *m, char *err, size_t errlen)
{
	for (int i = 0; i < m->n_layers; i++) {
		enum layer_kind k = m->layers[i].kind;

		if (k != LAYER_LINEAR && k != LAYER_RELU) {
			snprintf(err, errlen, "model %s: layer %d is a %s, which "
			    "has no CUDA kernel yet; run it with device: cpu",
			    m->type->name, i + 1, k == LAYER_CONV ?
			    "convolution" : "max-pool");
			return -1;
		}
	}
	return 0;
}

struct model_gpu *
model_gpu_create(const struct model *m, int max_batch, int *oom, char *err,
    size_t errlen)
{
	struct model_gpu *g;
	size_t		 in = (size_t)m->in_c * m->in_h * m->in_w;
	size_t		 B = (size_t)max_batch;
	cudaError_t	 e;

	*oom = 0;
	if (max_batch < 1) {
		snprintf(err, errlen, "a device model for %d samples",
		    max_batch);
		return NULL;
	}
	if (gpu_supported(m, err, errlen) != 0)
		return NULL;
	/* The cuBLAS handle first: it stays for the thread's later models,
	 * and its workspace is memory an autotune trial must fit beside. */
	if (cuda_blas_init(oom) != 0) {
		snprintf(err, errlen, "%s", cuda_last_error());
		return NULL;
	}
	g = xcalloc(1, sizeof *g);
	g->m = m;
	g->max_batch = max_batch;
	g->out = xcalloc((size_t)m->n_layers, sizeof *g->out);
	g->dout = xcalloc((size_t)m->n_layers, sizeof *g->dout);
	if ((e = cudaStreamCreate(&g->stream)) != cudaSuccess) {
		(void)cudaGetLastError();
		snprintf(err, errlen, "cudaStreamCreate: %s",
		    cudaGetErrorString(e));
		g->stream = NULL;
		goto fail;
	}
	if (gpu_alloc(&g->params, m->n_params * sizeof(float), oom, err,
	    errlen) != 0 ||
	    gpu_alloc(&g->grads, m->n_params * sizeof(float), oom, err,
	    errlen) != 0 ||
	    gpu_alloc(&g->x, B * in * sizeof(float), oom, err, errlen) != 0 ||
	    gpu_alloc(&g->y, B, oom, err, errlen) != 0 ||
	    gpu_alloc(&g->probs, B * (size_t)m->classes * sizeof(float), oom,
	    err, errlen) != 0 ||
	    gpu_alloc(&g->loss, sizeof(double), oom, err, errlen) != 0 ||
	    gpu_layers(g, oom, err, errlen) != 0)
		goto fail;
	return g;
fail:
	model_gpu_free(g);
	return NULL;
}

void
model_gpu_free(struct model_gpu *g)
{
	if (g == NULL)
		return;
	for (int i = 0; i < g->m->n_layers; i++) {
		if (g->m->layers[i].kind == LAYER_RELU && i > 0)
			continue;
		cudaFree(g->out[i]);
		cudaFree(g->dout[i]);
	}
	cudaFree(g->params);
	cudaFree(g->grads);
	cudaFree(g->x);
	cudaFree(g->y);
	cudaFree(g->probs);
	cudaFree(g->loss);
	if (g->stream != NULL) {
		cuda_blas_detach(g->stream);
		cudaStreamDestroy(g->stream);
	}
	(void)cudaGetLastError();
	free(g->out);
	free(g->dout);
	free(g);
}

int
model_gpu_set_params(struct model_gpu *g, const float *params, char *err,
    size_t errlen)
{
	GPU_TRY(cudaMemcpyAsync(g->params, params, g->m->n_params *
	    sizeof(float), cudaMemcpyHostToDevice, g->stream));
	GPU_TRY(cudaStreamSynchronize(g->stream));
	return 0;
}

int
model_gpu_zero_grads(struct model_gpu *g, char *err, size_t errlen)
{
	GPU_TRY(cudaMemsetAsync(g->grads, 0, g->m->n_params * sizeof(float),
	    g->stream));
	return 0;
}

static int
gpu_forward(struct model_gpu *g, int B, char *err, size_t errlen)
{
	const struct model *m = g->m;
	const float	*in = g->x;

	for (int i = 0; i < m->n_layers; i++) {
		const struct layer *l = &m->layers[i];

		if (l->kind == LAYER_LINEAR)
			KERNEL_TRY(cuda_linear_forward(g->out[i], in,
			    g->params + l->w_off, g->params + l->b_off, B, l->c,
			    l->oc, g->stream));
		else
			KERNEL_TRY(cuda_relu_forward(g->out[i], in,
			    (size_t)B * l->out_size, g->stream));
		in = g->out[i];
	}
	KERNEL_TRY(cuda_softmax_xent_forward(g->probs, g->loss, in, g->y, B,
	    m->classes, g->stream));
	return 0;
}

static int
gpu_backward(struct model_gpu *g, int B, float scale, char *err,
    size_t errlen)
{
	const struct model *m = g->m;
	int		 last = m->n_layers - 1;

	KERNEL_TRY(cuda_softmax_xent_backward(g->dout[last], g->probs, g->y, B,
	    m->classes, scale, g->stream));
	for (int i = last; i >= 0; i--) {
		const struct layer *l = &m->layers[i];
		const float	*in = i == 0 ? g->x : g->out[i - 1];
		float		*din = i == 0 ? NULL : g->dout[i - 1];

		if (l->kind == LAYER_LINEAR)
			KERNEL_TRY(cuda_linear_backward(din,
			    g->grads + l->w_off, g->grads + l->b_off,
			    g->dout[i], in, g->params + l->w_off, B, l->c,
			    l->oc, g->stream));
		else if (din != NULL)
			KERNEL_TRY(cuda_relu_backward(din, g->dout[i],
			    g->out[i], (size_t)B * l->out_size, g->stream));
	}
	return 0;
}

int
model_gpu_step(struct model_gpu *g, const float *x, const uint8_t *y, int B,
    float scale, double *loss, char *err, size_t errlen)
{
	const struct model *m = g->m;
	size_t		 in = (size_t)m->in_c * m->in_h * m->in_w;
	double		 sum = 0;

	if (B < 1 || B > g->max_batch) {
		snprintf(err, errlen, "a micro-batch of %d on a device model "
		    "made for %d", B, g->max_batch);
		return -1;
	}
	GPU_TRY(cudaMemcpyAsync(g->x, x, (size_t)B * in * sizeof(float),
	    cudaMemcpyHostToDevice, g->stream));
	GPU_TRY(cudaMemcpyAsync(g->y, y, (size_t)B, cudaMemcpyHostToDevice,
	    g->stream));
	if (gpu_forward(g, B, err, errlen) != 0 ||
	    gpu_backward(g, B, scale, err, errlen) != 0)
		return -1;
	GPU_TRY(cudaMemcpyAsync(&sum, g->loss, sizeof sum,
	    cudaMemcpyDeviceToHost, g->stream));
	GPU_TRY(cudaStreamSynchronize(g->stream));
	*loss += sum;
	return 0;
}

int
model_gpu_get_grads(struct model_gpu *g, float *grads, char *err,
    size_t errlen)
{
	GPU_TRY(cudaMemcpyAsync(grads, g->grads, g->m->n_params * sizeof(float),
	    cudaMemcpyDeviceToHost, g->stream));
	GPU_TRY(cudaStreamSynchronize(g->stream));
	return 0;
}
