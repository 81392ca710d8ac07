/*
 * linear.c: the fully connected layer, y = x w^T + b, and its backward.
 *
 * All the arithmetic that scales with B*in*out is one cblas_sgemm per
 * product; the rest (bias broadcast, bias-gradient reduction) is plain
 * work over contiguous rows, so that it stays a small fraction of a step.
 * The reduction runs in fixed spans of LINEAR_SPAN floats because GCC's -O2
 * vectorises only loops whose trip count is a known multiple of the vector
 * width.  Nothing here allocates or starts threads, and every reduction
 * runs in a fixed order, so the same inputs always give the same bits.
 */

#include <string.h>

#include <cblas.h>

#include "kernels/cpu/kernels.h"

#define LINEAR_SPAN	16

/* Copy the bias into every row of y, so the GEMM can add onto it. */
static void
linear_broadcast_bias(float *restrict y, const float *restrict b, int B,
    int out)
{
	for (int i = 0; i < B; i++)
		memcpy(y + (size_t)i * out, b, (size_t)out * sizeof *y);
}

static inline void
linear_add_span(float *restrict d, const float *restrict s, int n)
{
	for (int j = 0; j < n; j++)
		d[j] += s[j];
}

/* db[j] += sum over rows of dy[i, j], rows taken in order. */
static void
linear_reduce_bias(float *restrict db, const float *restrict dy, int B,
    int out)
{
	for (int i = 0; i < B; i++) {
		const float	*row = dy + (size_t)i * out;
		int		 j = 0;

		for (; j + LINEAR_SPAN <= out; j += LINEAR_SPAN)
			linear_add_span(db + j, row + j, LINEAR_SPAN);
		linear_add_span(db + j, row + j, out - j);
	}
}

void
linear_forward(float *y, const float *x, const float *w, const float *b,
    int B, int in, int out)
{
	float	beta = 0.0f;

	if (B <= 0 || in <= 0 || out <= 0)
		return;
	if (b != NULL) {
		linear_broadcast_bias(y, b, B, out);
		beta = 1.0f;
	}
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, out, in,
	    1.0f, x, in, w, in, beta, y, out);
}

void
linear_backward(float *dx, float *dw, float *db, const float *dy,
    const float *x, const float *w, int B, int in, int out)
{
	if (B <= 0 || in <= 0 || out <= 0)
		return;
	if (dx != NULL) {
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, in,
		    out, 1.0f, dy, out, w, in, 0.0f, dx, in);
	}
	if (dw != NULL) {
		cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, out, in,
		    B, 1.0f, dy, out, x, in, 1.0f, dw, in);
	}
	if (db != NULL)
		linear_reduce_bias(db, dy, B, out);
}
