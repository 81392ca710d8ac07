/*
 * matmul-internal.h: the transformer's GEMMs (matmul.c), shared with the
 * kernels that make their own (attention.c): one cblas_sgemm whose time
 * is counted for transformer_gemm_seconds(), and a GEMM cut into parts
 * of whole rows or whole columns of its result.
 *
 * A part is a GEMM of its own, one BLAS thread (the caller holds OpenBLAS
 * to one thread while the pool runs: model.c).  An element of the result
 * is the same dot product, over the same blocks of the inner dimension,
 * whichever part it falls in; and since the cut depends on the shape
 * alone, the same calls are made on any number of threads.
 */
#ifndef HUNTER_MATMUL_INTERNAL_H
#define HUNTER_MATMUL_INTERNAL_H

#include "kernels/cpu/parts-internal.h"

/* Rows (or columns) of a GEMM's part, at least: below this OpenBLAS's
 * packing and call overheads start to show (a tenth lost at 128). */
#define KGEMM_GRAIN	128
/* Multiply-adds of a GEMM's part, about: 1.5 ms of one thread here. */
#define KGEMM_WORK	(1 << 27)

/* C[M,N] = alpha op(A)[M,K] op(B)[K,N] + beta C, row-major; ta and tb
 * say whether A and B are transposed. */
void	kgemm(int ta, int tb, int M, int N, int K, float alpha,
	    const float *A, int lda, const float *B, int ldb, float beta,
	    float *C, int ldc);

/* A GEMM to cut into parts. */
struct kgemm_job {
	int		 ta, tb, M, N, K, lda, ldb, ldc;
	float		 alpha, beta;
	const float	*A, *B;
	float		*C;
	int		 rows;		/* cut by rows of C, else by columns */
	int		 parts;
};

/* Cut g (its GEMM filled in) by its longer side; the task that runs it. */
struct ktask kgemm_plan(struct kgemm_job *g);
/* Part i of g: rows [*r0, *r1) and columns [*c0, *c1) of C. */
void	kgemm_range(const struct kgemm_job *g, int i, int *r0, int *r1,
	    int *c0, int *c1);
/* The GEMM of that block. */
void	kgemm_block(const struct kgemm_job *g, int r0, int r1, int c0, int c1);

#endif
