/*
 * matmul.c: the dense layers of the transformer (transformer.h): the
 * projections, stored [in, out] as GPT-2's checkpoints store them, and the
 * output head, which is the token embedding used transposed.  Every FLOP
 * here is one cblas_sgemm; the bias terms are the only other work.
 */
#include <cblas.h>

#include "kernels/cpu/transformer.h"

void
matmul_forward(float *y, const float *x, const float *w, const float *b,
    int N, int C, int OC)
{
	float	 beta = 0.0f;

	if (b != NULL) {
		for (int n = 0; n < N; n++) {
			float *row = y + (size_t)n * OC;

			for (int o = 0; o < OC; o++)
				row[o] = b[o];
		}
		beta = 1.0f;
	}
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, OC, C, 1.0f,
	    x, C, w, OC, beta, y, OC);
}

void
matmul_backward(float *dx, float *dw, float *db, const float *dy,
    const float *x, const float *w, int N, int C, int OC)
{
	if (dx != NULL)
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, C, OC,
		    1.0f, dy, OC, w, OC, 1.0f, dx, C);
	cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, C, OC, N, 1.0f,
	    x, C, dy, OC, 1.0f, dw, OC);
	if (db != NULL) {
		for (int n = 0; n < N; n++) {
			const float *row = dy + (size_t)n * OC;

			for (int o = 0; o < OC; o++)
				db[o] += row[o];
		}
	}
}

void
head_forward(float *logits, const float *x, const float *wte, int N, int C,
    int V)
{
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, V, C, 1.0f,
	    x, C, wte, C, 0.0f, logits, V);
}

void
head_backward(float *dx, float *dwte, const float *dlogits, const float *x,
    const float *wte, int N, int C, int V)
{
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, C, V, 1.0f,
	    dlogits, V, wte, C, 1.0f, dx, C);
	cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, V, C, N, 1.0f,
	    dlogits, V, x, C, 1.0f, dwte, C);
}
