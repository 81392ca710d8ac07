/*
 * matmul.cu: the dense layers of the transformer on the GPU (matmul.c's
 * twins): the projections, weights stored [in, out] as GPT-2's
 * checkpoints store them, and the output head, the token embedding used
 * transposed.  Every product is one cuBLAS SGEMM in full FP32 (linear.cu's
 * handle); the bias terms are linear.cu's kernels, so the bias gradient is
 * the CPU's bits.
 */
#include "kernels/cuda/cuda-internal.cuh"

using namespace hk;

int
cuda_matmul_forward(float *y, const float *x, const float *w, const float *b,
    int N, int C, int OC, cudaStream_t s)
{
	float	 beta = 0.0f;

	if (N <= 0 || OC <= 0)
		return 0;
	if (b != nullptr) {
		if (bias_rows(y, b, N, OC, s) != 0)
			return -1;
		beta = 1.0f;
	}
	return gemm(s, false, false, N, OC, C, 1.0f, x, C, w, OC, beta, y, OC);
}

int
cuda_matmul_backward(float *dx, float *dw, float *db, const float *dy,
    const float *x, const float *w, int N, int C, int OC, cudaStream_t s)
{
	if (N <= 0 || C <= 0 || OC <= 0)
		return 0;
	/* dx += dy w^T; dw += x^T dy. */
	if (dx != nullptr && gemm(s, false, true, N, C, OC, 1.0f, dy, OC, w,
	    OC, 1.0f, dx, C) != 0)
		return -1;
	if (gemm(s, true, false, C, OC, N, 1.0f, x, C, dy, OC, 1.0f, dw,
	    OC) != 0)
		return -1;
	return db != nullptr ? bias_grad(db, dy, N, OC, s) : 0;
}

int
cuda_head_forward(float *logits, const float *x, const float *wte, int N,
    int C, int V, cudaStream_t s)
{
	return gemm(s, false, true, N, V, C, 1.0f, x, C, wte, C, 0.0f, logits,
	    V);
}

int
cuda_head_backward(float *dx, float *dwte, const float *dlogits,
    const float *x, const float *wte, int N, int C, int V, cudaStream_t s)
{
	if (N <= 0 || C <= 0 || V <= 0)
		return 0;
	/* dx += dlogits wte; dwte += dlogits^T x. */
	if (gemm(s, false, false, N, C, V, 1.0f, dlogits, V, wte, C, 1.0f, dx,
	    C) != 0)
		return -1;
	return gemm(s, true, false, V, C, N, 1.0f, dlogits, V, x, C, 1.0f,
	    dwte, C);
}
