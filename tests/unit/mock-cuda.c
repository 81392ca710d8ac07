/*
 * mock-cuda.c: a MOCK GPU, for a machine that has none.  It stands in for
 * the CUDA runtime calls and the kernels/cuda functions that
 * backend/worker/model-gpu.c uses, with host memory and the CPU kernels
 * of kernels/cpu behind them, so that the device model's bookkeeping and
 * the train loop's cuda path (uploads, accumulation, downloads, the
 * autotuner's out-of-memory handling) run in make check.  It says nothing
 * about CUDA itself: tests/unit/test-cuda.c and tests/gpu/gpu-check.sh do,
 * on a GPU.
 *
 * "Device" memory is malloc'd and counted against mock_cuda_capacity
 * bytes (0: unlimited); past it cudaMalloc fails with
 * cudaErrorMemoryAllocation, as a full GPU does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "tests/unit/mock-cuda.h"
#include "kernels/cpu/kernels.h"
#include "kernels/cpu/transformer.h"
#include "kernels/cuda/cuda-kernels.h"

size_t	mock_cuda_capacity;
size_t	mock_cuda_used;
long	mock_cuda_calls;		/* kernels run */

/* Each block remembers its size, for cudaFree's accounting. */
struct mock_block {
	size_t	 size;
	double	 align;
};

cudaError_t
cudaMalloc(void **p, size_t n)
{
	struct mock_block *b;

	*p = NULL;
	if (mock_cuda_capacity > 0 && mock_cuda_used + n > mock_cuda_capacity)
		return cudaErrorMemoryAllocation;
	if ((b = malloc(sizeof *b + (n > 0 ? n : 1))) == NULL)
		return cudaErrorMemoryAllocation;
	b->size = n;
	mock_cuda_used += n;
	*p = b + 1;
	return cudaSuccess;
}

cudaError_t
cudaFree(void *p)
{
	struct mock_block *b;

	if (p == NULL)
		return cudaSuccess;
	b = (struct mock_block *)p - 1;
	mock_cuda_used -= b->size;
	free(b);
	return cudaSuccess;
}

cudaError_t
cudaStreamCreate(cudaStream_t *s)
{
	*s = malloc(1);
	return *s != NULL ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t
cudaStreamDestroy(cudaStream_t s)
{
	free(s);
	return cudaSuccess;
}

cudaError_t
cudaStreamSynchronize(cudaStream_t s)
{
	(void)s;
	return cudaSuccess;
}

cudaError_t
cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind k,
    cudaStream_t s)
{
	(void)k;
	(void)s;
	memmove(dst, src, n);
	return cudaSuccess;
}

cudaError_t
cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s)
{
	(void)s;
	memset(p, v, n);
	return cudaSuccess;
}

cudaError_t
cudaGetLastError(void)
{
	return cudaSuccess;
}

const char *
cudaGetErrorString(cudaError_t e)
{
	return e == cudaErrorMemoryAllocation ? "out of memory (mock GPU)" :
	    e == cudaSuccess ? "no error" : "error (mock GPU)";
}

const char *
cuda_last_error(void)
{
	return "no error (mock GPU)";
}

int
cuda_fail(const char *file, int line, const char *what, const char *why)
{
	(void)file;
	(void)line;
	(void)what;
	(void)why;
	return -1;
}

int
cuda_blas_init(int *oom)
{
	*oom = 0;
	return 0;
}

void
cuda_blas_detach(cudaStream_t s)
{
	(void)s;
}

int
cuda_linear_forward(float *y, const float *x, const float *w, const float *b,
    int B, int in, int out, cudaStream_t s)
{
	(void)s;
	mock_cuda_calls++;
	linear_forward(y, x, w, b, B, in, out);
	return 0;
}

int
cuda_linear_backward(float *dx, float *dw, float *db, const float *dy,
    const float *x, const float *w, int B, int in, int out, cudaStream_t s)
{
	(void)s;
	mock_cuda_calls++;
	linear_backward(dx, dw, db, dy, x, w, B, in, out);
	return 0;
}

int
cuda_relu_forward(float *y, const float *x, size_t n, cudaStream_t s)
{
	(void)s;
	mock_cuda_calls++;
	relu_forward(y, x, n);
	return 0;
}

int
cuda_relu_backward(float *dx, const float *dy, const float *y, size_t n,
    cudaStream_t s)
{
	(void)s;
	mock_cuda_calls++;
	relu_backward(dx, dy, y, n);
	return 0;
}

int
cuda_softmax_xent_forward(float *probs, double *loss, const float *logits,
    const uint8_t *labels, int B, int C, cudaStream_t s)
{
	double	 sum;

	(void)s;
	mock_cuda_calls++;
	sum = softmax_xent_forward(probs, logits, labels, B, C);
	if (loss != NULL)
		*loss = sum;
	return 0;
}

int
cuda_softmax_xent_backward(float *dlogits, const float *probs,
    const uint8_t *labels, int B, int C, float scale, cudaStream_t s)
{
	(void)s;
	mock_cuda_calls++;
	softmax_xent_backward(dlogits, probs, labels, B, C, scale);
	return 0;
}

/* The transformer's twins, each its CPU twin (transformer.h). */

int
cuda_embed_forward(float *out, const int32_t *tok, const float *wte,
    const float *wpe, int B, int T, int C, cudaStream_t s)
{
	(void)s;
	mock_cuda_calls++;
	embed_forward(NULL, out, tok, wte, wpe, B, T, C);
	return 0;
}

size_t
cuda_embed_backward_workspace(int N, int V)
{
	(void)V;
	return (size_t)N * 3 * sizeof(int32_t);	/* as the sort takes */
}

int
cuda_embed_backward(float *dwte, float *dwpe, const float *dout,
    const int32_t *tok, int B, int T, int C, int V, void *ws, cudaStream_t s)
{
	(void)V;
	(void)ws;
	(void)s;
	mock_cuda_calls++;
	embed_backward(NULL, dwte, dwpe, dout, tok, B, T, C);
	return 0;
}

int
cuda_layernorm_forward(float *out, float *mean, float *rstd, const float *x,
    const float *w, const float *b, int N, int C, cudaStream_t s)
{
	(void)s;
	mock_cuda_calls++;
	layernorm_forward(NULL, out, mean, rstd, x, w, b, N, C);
	return 0;
}

int
cuda_layernorm_backward(float *dx, float *dw, float *db, const float *dout,
    const float *x, const float *w, const float *mean, const float *rstd,
    int N, int C, cudaStream_t s)
{
	(void)s;
	mock_cuda_calls++;
	layernorm_backward(NULL, dx, dw, db, dout, x, w, mean, rstd, N, C);
	return 0;
}

int
cuda_matmul_forward(float *y, const float *x, const float *w, const float *b,
    int N, int C, int OC, cudaStream_t s)
{
	(void)s;
	mock_cuda_calls++;
	matmul_forward(NULL, y, x, w, b, N, C, OC);
	return 0;
}

int
cuda_matmul_backward(float *dx, float *dw, float *db, const float *dy,
    const float *x, const float *w, int N, int C, int OC, cudaStream_t s)
{
	(void)s;
	mock_cuda_calls++;
	matmul_backward(NULL, dx, 1, dw, db, dy, x, w, N, C, OC);
	return 0;
}

int
cuda_head_forward(float *logits, const float *x, const float *wte, int N,
    int C, int V, cudaStream_t s)
{
	(void)s;
	mock_cuda_calls++;
	head_forward(NULL, logits, x, wte, N, C, V);
	return 0;
}

int
cuda_head_backward(float *dx, float *dwte, const float *dlogits,
    const float *x, const float *wte, int N, int C, int V, cudaStream_t s)
{
	(void)s;
	mock_cuda_calls++;
	head_backward(NULL, dx, 1, dwte, dlogits, x, wte, N, C, V);
	return 0;
}

/* What the device's takes, so that the mock's memory is the device's. */
size_t
cuda_attention_workspace(int B, int T, int H)
{
	return (size_t)(B > H ? B : H) * T * T * sizeof(float);
}

/*
 * The CPU twin keeps only each row's statistics (2 floats, where the
 * device keeps T probabilities): in the first floats of att, which the
 * backward pass gets back; its scratch is its own.
 */
int
cuda_attention_forward(float *out, float *att, const float *qkv, int B,
    int T, int C, int H, cudaStream_t s)
{
	float	*ws = malloc(attention_workspace(T, C / H, 1) * sizeof(float));

	(void)s;
	mock_cuda_calls++;
	if (ws == NULL || T < 2) {
		fprintf(stderr, "mock-cuda: attention at T %d\n", T);
		abort();
	}
	attention_forward(NULL, out, att, ws, qkv, B, T, C, H);
	free(ws);
	return 0;
}

int
cuda_attention_backward(float *dqkv, const float *dout, const float *qkv,
    const float *att, float *ws, int B, int T, int C, int H, cudaStream_t s)
{
	float	*hws = malloc(attention_workspace(T, C / H, 1) * sizeof(float));

	(void)s;
	(void)ws;
	mock_cuda_calls++;
	if (hws == NULL) {
		fprintf(stderr, "mock-cuda: attention at T %d\n", T);
		abort();
	}
	attention_backward(NULL, dqkv, 1, dout, qkv, att, hws, B, T, C, H);
	free(hws);
	return 0;
}

int
cuda_gelu_forward(float *y, const float *x, size_t n, cudaStream_t s)
{
	(void)s;
	mock_cuda_calls++;
	gelu_forward(NULL, y, x, n);
	return 0;
}

int
cuda_gelu_backward(float *dx, const float *x, const float *dy, size_t n,
    cudaStream_t s)
{
	(void)s;
	mock_cuda_calls++;
	gelu_backward(NULL, dx, x, dy, n);
	return 0;
}

int
cuda_residual_forward(float *out, const float *a, const float *b, size_t n,
    cudaStream_t s)
{
	(void)s;
	mock_cuda_calls++;
	residual_forward(NULL, out, a, b, n);
	return 0;
}

/* residual_backward takes both gradients; the device's either. */
int
cuda_residual_backward(float *da, float *db, const float *dout, size_t n,
    cudaStream_t s)
{
	(void)s;
	mock_cuda_calls++;
	for (size_t i = 0; i < n; i++) {
		if (da != NULL)
			da[i] += dout[i];
		if (db != NULL)
			db[i] += dout[i];
	}
	return 0;
}

size_t
cuda_vocab_xent_workspace(int N)
{
	return (size_t)N * sizeof(double);
}

int
cuda_vocab_xent(float *logits, double *loss, const int32_t *target, int N,
    int V, float scale, void *ws, cudaStream_t s)
{
	double	 sum;

	(void)ws;
	(void)s;
	mock_cuda_calls++;
	sum = vocab_xent(NULL, logits, target, N, V, scale);
	if (loss != NULL)
		*loss = sum;
	return 0;
}
