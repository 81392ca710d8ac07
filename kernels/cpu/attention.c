/*
 * attention.c: causal multi-head self-attention (transformer.h).  Each
 * (batch, head) pair is three GEMMs forward (scores, then probabilities
 * times values) and four backward, on strided views into the fused qkv
 * buffer, so no head is ever copied out.  Only the probabilities are kept
 * between the passes: B*H*T*T floats a layer, the scores being
 * overwritten by their softmax in place.  The full T*T products are
 * computed and the upper triangle masked: at the context lengths trained
 * here the GEMM is faster than a triangular loop.
 */
#include <math.h>
#include <string.h>

#include <cblas.h>

#include "kernels/cpu/transformer.h"

size_t
attention_workspace(int T)
{
	return (size_t)T * T;
}

/* Softmax of row i of a score matrix over j <= i; the rest is zeroed. */
static void
attention_softmax_row(float *row, int i, int T)
{
	float	 max = row[0], sum = 0, inv;

	for (int j = 1; j <= i; j++)
		if (row[j] > max)
			max = row[j];
	for (int j = 0; j <= i; j++) {
		row[j] = expf(row[j] - max);
		sum += row[j];
	}
	inv = 1.0f / sum;
	for (int j = 0; j <= i; j++)
		row[j] *= inv;
	memset(row + i + 1, 0, (size_t)(T - i - 1) * sizeof *row);
}

void
attention_forward(float *out, float *att, const float *qkv, int B, int T,
    int C, int H)
{
	int	 d = C / H, ld = 3 * C;
	float	 scale = 1.0f / sqrtf((float)d);

	for (int b = 0; b < B; b++) {
		for (int h = 0; h < H; h++) {
			const float *q = qkv + (size_t)b * T * ld + h * d;
			const float *k = q + C, *v = q + 2 * C;
			float	*a = att + ((size_t)b * H + h) * T * T;
			float	*o = out + (size_t)b * T * C + h * d;

			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T,
			    T, d, scale, q, ld, k, ld, 0.0f, a, T);
			for (int i = 0; i < T; i++)
				attention_softmax_row(a + (size_t)i * T, i, T);
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans,
			    T, d, T, 1.0f, a, T, v, ld, 0.0f, o, C);
		}
	}
}

void
attention_backward(float *dqkv, const float *dout, const float *qkv,
    const float *att, float *ws, int B, int T, int C, int H)
{
	int	 d = C / H, ld = 3 * C;
	float	 scale = 1.0f / sqrtf((float)d);

	for (int b = 0; b < B; b++) {
		for (int h = 0; h < H; h++) {
			size_t	 off = (size_t)b * T * ld + h * d;
			const float *q = qkv + off, *k = q + C, *v = q + 2 * C;
			float	*dq = dqkv + off, *dk = dq + C, *dv = dq + 2 * C;
			const float *a = att + ((size_t)b * H + h) * T * T;
			const float *dO = dout + (size_t)b * T * C + h * d;

			/* dv += a^T dO; ws = dO v^T, the gradient of the
			 * probabilities. */
			cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T,
			    d, T, 1.0f, a, T, dO, C, 1.0f, dv, ld);
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T,
			    T, d, 1.0f, dO, C, v, ld, 0.0f, ws, T);
			/* Through the softmax, in place: the gradient of the
			 * scaled scores. */
			for (int i = 0; i < T; i++) {
				const float *ar = a + (size_t)i * T;
				float	*wr = ws + (size_t)i * T, dot = 0;

				for (int j = 0; j <= i; j++)
					dot += ar[j] * wr[j];
				for (int j = 0; j <= i; j++)
					wr[j] = ar[j] * (wr[j] - dot) * scale;
				memset(wr + i + 1, 0,
				    (size_t)(T - i - 1) * sizeof *wr);
			}
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans,
			    T, d, T, 1.0f, ws, T, k, ld, 1.0f, dq, ld);
			cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T,
			    d, T, 1.0f, ws, T, q, ld, 1.0f, dk, ld);
		}
	}
}
