/*
 * cuda-kernels.h: the GPU twins of kernels/cpu/kernels.h and
 * kernels/cpu/compress.h, callable from C.  Same semantics as the CPU
 * versions: row-major layouts, parameter gradients (dw, db) ACCUMULATED,
 * input gradients (dx) OVERWRITTEN.  Every pointer here is a DEVICE
 * pointer unless it says host; every call is queued on the given stream
 * (NULL is the default stream) and returns without waiting, except the
 * few that give a host value back (they say so) and so synchronize that
 * stream.  As on the CPU, callers own every buffer: the selection and the
 * codecs take a workspace of the size their *_workspace() gives (device
 * memory, 256-byte aligned as cudaMalloc returns it).
 *
 * Errors are values: each call returns 0, or -1 with the reason, which
 * names the file and line of the failing call, in cuda_last_error()
 * (per thread).  Launches are checked at once; a fault inside a kernel
 * surfaces at the next synchronizing call, as CUDA reports it.
 *
 * Exactness against the CPU (tests/unit/test-cuda.c checks each):
 *   selection, codecs, relu, softmax-xent backward, the bias gradient,
 *   sgd and adamw: the same bits (no FMA contraction: __fmul_rn and
 *   __fadd_rn where the CPU multiplies then adds);
 *   linear (cuBLAS SGEMM, full FP32, no TF32) and softmax-xent forward
 *   (CUDA's expf) within the tolerances the test states.
 * The transformer's twins (kernels/cpu/transformer.h) keep that family's
 * convention instead: input gradients ACCUMULATED too.  The same bits as
 * the CPU: the embedding (its backward sorts, no atomics), the residual
 * add, GELU, the projections' bias gradient; LayerNorm but in a rare last
 * bit of a row's mean or deviation (double sums in another order); cuBLAS
 * (the projections, the head, attention's products), attention's
 * softmaxes (float sums in another order, CUDA's expf) and the vocabulary
 * cross-entropy (CUDA's expf) within the tolerances test-cuda-gpt states.
 * Every one is deterministic: the same inputs give the same bits.
 *
 * Top-k and threshold take ties exactly as the CPU: the k-th largest key
 * and its tie quota are found first, and keys equal to it are taken in
 * index order while the quota lasts, so the lower index wins.  The one
 * difference: a row of logits holding NaN may give another argmax.
 */
#ifndef HUNTER_CUDA_KERNELS_H
#define HUNTER_CUDA_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rng;

/* Why the last call of this thread failed: "kernels/cuda/linear.cu:57:
 * cublasSgemm(...): CUBLAS_STATUS_EXECUTION_FAILED". */
const char	*cuda_last_error(void);
/* Record a failure of what at file:line for cuda_last_error; returns -1. */
int		 cuda_fail(const char *file, int line, const char *what,
		    const char *why);

/* Evaluate a CUDA runtime call; on failure record it and return -1 from
 * the calling function (llm.c's cudaCheck, without the exit). */
#define CUDA_CHECK(call) do {						\
	cudaError_t cuda_check_e_ = (call);				\
	if (cuda_check_e_ != cudaSuccess) {				\
		(void)cudaGetLastError();				\
		return cuda_fail(__FILE__, __LINE__, #call,		\
		    cudaGetErrorString(cuda_check_e_));			\
	}								\
} while (0)

/* Layers, losses, optimizers (kernels.h). */

/* y[B,out] = x[B,in] w[out,in]^T + b (b may be NULL).  cuBLAS keeps one
 * handle per thread, made on first use on the thread's current device. */
int	cuda_linear_forward(float *y, const float *x, const float *w,
	    const float *b, int B, int in, int out, cudaStream_t);
/* dx = dy w (skipped when NULL); dw += dy^T x; db += column sums of dy. */
int	cuda_linear_backward(float *dx, float *dw, float *db, const float *dy,
	    const float *x, const float *w, int B, int in, int out,
	    cudaStream_t);
/* Make this thread's cuBLAS handle now, on the current device, rather
 * than at the first GEMM (loading cuBLAS on first use): 0, or -1 with
 * *oom = 1 when the device had no memory for it. */
int	cuda_blas_init(int *oom);
/* A stream is going away: if this thread's handle is on s, put it back
 * on the default stream. */
void	cuda_blas_detach(cudaStream_t s);
/* Destroy this thread's cuBLAS handle (before a thread ends). */
void	cuda_blas_release(void);

int	cuda_relu_forward(float *y, const float *x, size_t n, cudaStream_t);
int	cuda_relu_backward(float *dx, const float *dy, const float *y,
	    size_t n, cudaStream_t);

/* probs[B,C]; *loss (device double, may be NULL) gets the SUM of the B
 * losses, each computed and summed in double.  labels: device bytes. */
int	cuda_softmax_xent_forward(float *probs, double *loss,
	    const float *logits, const uint8_t *labels, int B, int C,
	    cudaStream_t);
int	cuda_softmax_xent_backward(float *dlogits, const float *probs,
	    const uint8_t *labels, int B, int C, float scale, cudaStream_t);
/* *correct (device int, overwritten) = rows whose first argmax is the
 * label. */
int	cuda_argmax_correct(int *correct, const float *logits,
	    const uint8_t *labels, int B, int C, cudaStream_t);

/* PyTorch's SGD (m may be NULL when mu == 0) and AdamW, as kernels.h. */
int	cuda_sgd_step(float *p, const float *g, float *m, size_t n, float lr,
	    float mu, float wd, cudaStream_t);
int	cuda_adamw_step(float *p, const float *g, float *m, float *v,
	    size_t n, float lr, float beta1, float beta2, float eps, float wd,
	    long t, cudaStream_t);

/* The transformer (transformer.h; shapes and semantics there). */

int	cuda_embed_forward(float *out, const int32_t *tok, const float *wte,
	    const float *wpe, int B, int T, int C, cudaStream_t);
/* Bytes of workspace for cuda_embed_backward of N = B * T tokens below V. */
size_t	cuda_embed_backward_workspace(int N, int V);
int	cuda_embed_backward(float *dwte, float *dwpe, const float *dout,
	    const int32_t *tok, int B, int T, int C, int V, void *ws,
	    cudaStream_t);
int	cuda_layernorm_forward(float *out, float *mean, float *rstd,
	    const float *x, const float *w, const float *b, int N, int C,
	    cudaStream_t);
int	cuda_layernorm_backward(float *dx, float *dw, float *db,
	    const float *dout, const float *x, const float *w,
	    const float *mean, const float *rstd, int N, int C, cudaStream_t);
/* y[N,OC] = x[N,C] w[C,OC] + b (b may be NULL); the backward as
 * matmul_backward (dx, db skipped when NULL). */
int	cuda_matmul_forward(float *y, const float *x, const float *w,
	    const float *b, int N, int C, int OC, cudaStream_t);
int	cuda_matmul_backward(float *dx, float *dw, float *db, const float *dy,
	    const float *x, const float *w, int N, int C, int OC, cudaStream_t);
int	cuda_head_forward(float *logits, const float *x, const float *wte,
	    int N, int C, int V, cudaStream_t);
int	cuda_head_backward(float *dx, float *dwte, const float *dlogits,
	    const float *x, const float *wte, int N, int C, int V,
	    cudaStream_t);
/* att[B,H,T,T] as on the CPU; the backward takes
 * cuda_attention_workspace(B, T, H) BYTES of scratch (max(B, H) T T
 * floats: the CPU's loop over heads runs here a batch at a time). */
size_t	cuda_attention_workspace(int B, int T, int H);
int	cuda_attention_forward(float *out, float *att, const float *qkv, int B,
	    int T, int C, int H, cudaStream_t);
int	cuda_attention_backward(float *dqkv, const float *dout,
	    const float *qkv, const float *att, float *ws, int B, int T, int C,
	    int H, cudaStream_t);
int	cuda_gelu_forward(float *y, const float *x, size_t n, cudaStream_t);
int	cuda_gelu_backward(float *dx, const float *x, const float *dy,
	    size_t n, cudaStream_t);
int	cuda_residual_forward(float *out, const float *a, const float *b,
	    size_t n, cudaStream_t);
/* da += dout; db += dout; either may be NULL (skipped). */
int	cuda_residual_backward(float *da, float *db, const float *dout,
	    size_t n, cudaStream_t);
/* Bytes of workspace for cuda_vocab_xent of N rows. */
size_t	cuda_vocab_xent_workspace(int N);
/* vocab_xent: *loss (device double, may be NULL) gets the summed loss of
 * the rows whose target is not negative; scale not 0 overwrites logits
 * with the gradient. */
int	cuda_vocab_xent(float *logits, double *loss, const int32_t *target,
	    int N, int V, float scale, void *ws, cudaStream_t);

/* Gradient compression (compress.h; formats there). */

/* Bytes of workspace for cuda_compress_topk/threshold over n floats. */
size_t	cuda_select_workspace(size_t n);
/* Exactly min(k, n) indices of the largest |x|, ascending, the same set
 * as compress_topk.  idx holds min(k, n) entries.  Does not wait. */
int	cuda_compress_topk(uint32_t *idx, const float *x, size_t n, size_t k,
	    void *ws, cudaStream_t);
/*
 * compress_threshold on the GPU: the same sample (drawn from the host
 * rng r, which advances exactly as on the CPU), the same threshold, the
 * same raises, hence the same indices; *count (host) gets their number.
 * idx holds compress_idx_cap(n, k) entries, as on the CPU.  Waits.
 */
int	cuda_compress_threshold(uint32_t *idx, size_t *count, const float *x,
	    size_t n, size_t k, struct rng *r, void *ws, cudaStream_t);
/* *out (device float) = compress_absmax(x, idx, m); idx may be NULL. */
int	cuda_compress_absmax(float *out, const float *x, const uint32_t *idx,
	    size_t m, cudaStream_t);

/* Bytes of workspace for cuda_sparse_encode of count entries. */
size_t	cuda_sparse_encode_workspace(size_t count);
/* compress_sparse_encode: out (compress_sparse_bound bytes) gets the
 * same bytes; *bytes (host) their number.  Waits. */
int	cuda_sparse_encode(uint8_t *out, size_t *bytes, const uint32_t *idx,
	    const float *x, size_t count, float scale, void *ws, cudaStream_t);
/* Bytes of workspace for cuda_sparse_decode_add of len bytes into n. */
size_t	cuda_sparse_decode_workspace(size_t n, size_t len);
/* compress_sparse_decode_add: *used (host) = bytes consumed, or -1 (and
 * dense untouched) for any buffer the CPU refuses.  Waits. */
int	cuda_sparse_decode_add(float *dense, size_t n, const uint8_t *buf,
	    size_t len, float scale, long *used, void *ws, cudaStream_t);

/* Dense fp16, the same bytes and sums as the CPU. */
int	cuda_fp16_encode(uint8_t *out, const float *x, size_t n, float scale,
	    cudaStream_t);
int	cuda_fp16_decode_add(float *dense, const uint8_t *in, size_t n,
	    float scale, cudaStream_t);

#ifdef __cplusplus
}
#endif

#endif
