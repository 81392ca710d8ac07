/*
 * model-gpu.c: the forward and backward passes of model.c on the device,
 * layer for layer, through each layer type's CUDA entry points (layer.h;
 * see model-gpu.h).  The layout follows the host model: one parameter
 * and one gradient buffer indexed by the same offsets, the same layers
 * working in place on their input's buffers, the loss at the end: the
 * softmax cross-entropy over a class model's classes, or the vocabulary
 * cross-entropy of a token model, fused with its gradient, which is
 * written over the logits (the last layer's dout is its out, as on the
 * host).  A class model uploads images and labels, a token model its
 * token windows and their targets.  All work goes to one stream; a step
 * waits for it once, when it reads the loss.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	void		**aux;			/* per layer, max_batch x aux */
	float		*x;			/* [max_batch, input] */
	uint8_t		*y;
	float		*probs;			/* [max_batch, classes] */
	int32_t		*tok, *tgt;		/* [max_batch, T]: tokens */
	void		*xent_ws;		/* the vocabulary loss's */
	float		*workspace;		/* see gpu_workspace_bytes */
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

/* Whether layer i's gradient is written over its output: a token
 * model's logits. */
static int
gpu_dout_is_out(const struct model *m, int i)
{
	return m->loss == MODEL_LOSS_TOKENS && i == m->n_layers - 1;
}

/* Each layer's buffers; one working in place shares its input's. */
static int
gpu_layers(struct model_gpu *g, int *oom, char *err, size_t errlen)
{
	const struct model *m = g->m;
	size_t		 B = (size_t)g->max_batch;

	for (int i = 0; i < m->n_layers; i++) {
		const struct layer *l = &m->layers[i];
		size_t	 aux = l->gpu_aux_bytes > 0 ? l->gpu_aux_bytes :
			    l->aux_bytes;

		if (aux > 0 && gpu_alloc(&g->aux[i], B * aux, oom, err,
		    errlen) != 0)
			return -1;
		if (l->inplace) {
			g->out[i] = g->out[l->src[0]];
			g->dout[i] = g->dout[l->src[0]];
			continue;
		}
		if (gpu_alloc(&g->out[i], B * l->out_size * sizeof(float), oom,
		    err, errlen) != 0)
			return -1;
		if (gpu_dout_is_out(m, i))
			g->dout[i] = g->out[i];
		else if (gpu_alloc(&g->dout[i], B * l->out_size * sizeof(float),
		    oom, err, errlen) != 0)
			return -1;
	}
	return 0;
}

/* The device scratch: the host's workspace, or more where a layer's
 * device passes take more for max_batch samples. */
static size_t
gpu_workspace_bytes(const struct model *m, int max_batch)
{
	size_t	 bytes = m->workspace_len * sizeof(float), n;

	for (int i = 0; i < m->n_layers; i++) {
		const struct layer *l = &m->layers[i];

		if (l->type->gpu_workspace != NULL &&
		    (n = l->type->gpu_workspace(l, max_batch)) > bytes)
			bytes = n;
	}
	return bytes;
}

/* The buffers of the batch and its loss: images, labels and the
 * probabilities, or tokens, targets and the vocabulary loss's scratch. */
static int
gpu_inputs(struct model_gpu *g, int *oom, char *err, size_t errlen)
{
	const struct model *m = g->m;
	size_t		 B = (size_t)g->max_batch;
	size_t		 in = (size_t)m->in_c * m->in_h * m->in_w;

	if (m->loss == MODEL_LOSS_TOKENS)
		return gpu_alloc(&g->tok, B * in * sizeof(int32_t), oom, err,
		    errlen) != 0 ||
		    gpu_alloc(&g->tgt, B * in * sizeof(int32_t), oom, err,
		    errlen) != 0 ||
		    gpu_alloc(&g->xent_ws, cuda_vocab_xent_workspace((int)(B *
		    in)), oom, err, errlen) != 0 ? -1 : 0;
	return gpu_alloc(&g->x, B * in * sizeof(float), oom, err, errlen) != 0 ||
	    gpu_alloc(&g->y, B, oom, err, errlen) != 0 ||
	    gpu_alloc(&g->probs, B * (size_t)m->classes * sizeof(float), oom,
	    err, errlen) != 0 ? -1 : 0;
}

int
layer_gpu_din_begin(const struct layer *l, const struct layer_io *io, int j,
    size_t n)
{
	if (io->din[j] != NULL && !(l->din_add & (1u << j)))
		CUDA_CHECK(cudaMemsetAsync(io->din[j], 0, (size_t)io->B * n *
		    sizeof(float), io->stream));
	return 0;
}

/* Whether every layer of m has CUDA kernels; if not, why in err. */
static int
gpu_supported(const struct model *m, char *err, size_t errlen)
{
	for (int i = 0; i < m->n_layers; i++) {
		const struct layer_type *t = m->layers[i].type;

		if (t->gpu_forward == NULL || t->gpu_backward == NULL) {
			snprintf(err, errlen, "model %s: layer %d is a %s, which "
			    "has no CUDA kernel yet; run it with device: cpu",
			    m->type->name, i + 1, t->what);
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
	size_t		 ws;
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
	g->aux = xcalloc((size_t)m->n_layers, sizeof *g->aux);
	if ((e = cudaStreamCreate(&g->stream)) != cudaSuccess) {
		(void)cudaGetLastError();
		snprintf(err, errlen, "cudaStreamCreate: %s",
		    cudaGetErrorString(e));
		g->stream = NULL;
		goto fail;
	}
	ws = gpu_workspace_bytes(m, max_batch);
	if (gpu_alloc(&g->params, m->n_params * sizeof(float), oom, err,
	    errlen) != 0 ||
	    gpu_alloc(&g->grads, m->n_params * sizeof(float), oom, err,
	    errlen) != 0 ||
	    gpu_inputs(g, oom, err, errlen) != 0 ||
	    gpu_alloc(&g->loss, sizeof(double), oom, err, errlen) != 0 ||
	    (ws > 0 && gpu_alloc(&g->workspace, ws, oom, err, errlen) != 0) ||
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
		cudaFree(g->aux[i]);
		if (g->m->layers[i].inplace)
			continue;
		if (g->dout[i] != g->out[i])
			cudaFree(g->dout[i]);
		cudaFree(g->out[i]);
	}
	cudaFree(g->params);
	cudaFree(g->grads);
	cudaFree(g->x);
	cudaFree(g->y);
	cudaFree(g->probs);
	cudaFree(g->tok);
	cudaFree(g->tgt);
	cudaFree(g->xent_ws);
	cudaFree(g->workspace);
	cudaFree(g->loss);
	if (g->stream != NULL) {
		cuda_blas_detach(g->stream);
		cudaStreamDestroy(g->stream);
	}
	(void)cudaGetLastError();
	free(g->out);
	free(g->dout);
	free(g->aux);
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

/* The device buffers of layer i for B samples. */
static void
gpu_io(const struct model_gpu *g, int i, int B, struct layer_io *io)
{
	const struct layer *l = &g->m->layers[i];

	memset(io, 0, sizeof *io);
	io->params = g->params;
	io->grads = g->grads;
	io->tok = g->tok;
	io->out = g->out[i];
	io->dout = g->dout[i];
	io->aux = g->aux[i];
	io->workspace = g->workspace;
	io->B = B;
	io->stream = g->stream;
	for (int j = 0; j < l->n_src; j++) {
		int	 s = l->src[j];

		io->in[j] = s < 0 ? g->x : g->out[s];
		io->din[j] = s < 0 ? NULL : g->dout[s];
	}
}

/* The layers forward, then the loss into g->loss; a token model's
 * gradient is written over its logits at the same time. */
static int
gpu_forward(struct model_gpu *g, int B, float scale, char *err,
    size_t errlen)
{
	const struct model *m = g->m;
	float		*logits = g->out[m->n_layers - 1];
	struct layer_io	 io;

	for (int i = 0; i < m->n_layers; i++) {
		gpu_io(g, i, B, &io);
		KERNEL_TRY(m->layers[i].type->gpu_forward(&m->layers[i], &io));
	}
	if (m->loss == MODEL_LOSS_TOKENS)
		KERNEL_TRY(cuda_vocab_xent(logits, g->loss, g->tgt, B * m->in_c,
		    m->classes, scale, g->xent_ws, g->stream));
	else
		KERNEL_TRY(cuda_softmax_xent_forward(g->probs, g->loss, logits,
		    g->y, B, m->classes, g->stream));
	return 0;
}

static int
gpu_backward(struct model_gpu *g, int B, float scale, char *err,
    size_t errlen)
{
	const struct model *m = g->m;
	int		 last = m->n_layers - 1;
	struct layer_io	 io;

	if (m->loss == MODEL_LOSS_CLASSES)
		KERNEL_TRY(cuda_softmax_xent_backward(g->dout[last], g->probs,
		    g->y, B, m->classes, scale, g->stream));
	for (int i = last; i >= 0; i--) {
		gpu_io(g, i, B, &io);
		KERNEL_TRY(m->layers[i].type->gpu_backward(&m->layers[i], &io));
	}
	return 0;
}

/* Upload the batch: images and labels, or tokens and targets. */
static int
gpu_upload(struct model_gpu *g, const struct model_input *x, int B,
    char *err, size_t errlen)
{
	const struct model *m = g->m;
	size_t		 in = (size_t)B * m->in_c * m->in_h * m->in_w;

	if (m->loss == MODEL_LOSS_TOKENS) {
		GPU_TRY(cudaMemcpyAsync(g->tok, x->tok, in * sizeof(int32_t),
		    cudaMemcpyHostToDevice, g->stream));
		GPU_TRY(cudaMemcpyAsync(g->tgt, x->tgt, in * sizeof(int32_t),
		    cudaMemcpyHostToDevice, g->stream));
		return 0;
	}
	GPU_TRY(cudaMemcpyAsync(g->x, x->x, in * sizeof(float),
	    cudaMemcpyHostToDevice, g->stream));
	GPU_TRY(cudaMemcpyAsync(g->y, x->y, (size_t)B, cudaMemcpyHostToDevice,
	    g->stream));
	return 0;
}

int
model_gpu_step(struct model_gpu *g, const struct model_input *x, int B,
    float scale, double *loss, char *err, size_t errlen)
{
	double		 sum = 0;

	if (B < 1 || B > g->max_batch) {
		snprintf(err, errlen, "a micro-batch of %d on a device model "
		    "made for %d", B, g->max_batch);
		return -1;
	}
	if (gpu_upload(g, x, B, err, errlen) != 0 ||
	    gpu_forward(g, B, scale, err, errlen) != 0 ||
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
