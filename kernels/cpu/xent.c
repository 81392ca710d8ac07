/*
 * xent.c: softmax cross-entropy over the vocabulary (transformer.h),
 * fused with its gradient.  The logits of a batch are the largest buffer a
 * language model has (N*V: 25.7M floats for GPT-2's vocabulary at 512
 * tokens), so the probabilities are never stored beside them: each row is
 * turned into its gradient in place, in the pass that takes its loss.
 * The rows are cut into parts; each part sums its rows' losses in order
 * and the parts' sums are added in part order, so the loss has the same
 * bits on any number of threads.  The exponentials are vexp's, their sum
 * a row in lanes of double (vmath-internal.h): libm's expf and a serial
 * sum were a tenth of a GPT-2 124M step.
 */
#include <math.h>
#include <string.h>

#include "kernels/cpu/transformer.h"
#include "kernels/cpu/parts-internal.h"
#include "kernels/cpu/vmath-internal.h"

struct xent_job {
	float		*logits;
	const int32_t	*target;
	int		 N, V, parts;
	float		 scale;
	double		 loss[KPARTS_MAX];
};

/* The sum of e^(row[v] - max) over the row, in double: lanes, then the
 * lanes in order, then the tail. */
VMATH_INLINE double
xent_sum(const float *row, int V, float max)
{
	double	 acc[VMATH_BLOCK] = { 0 }, sum = 0;
	int	 v = 0;

	for (; v + VMATH_BLOCK <= V; v += VMATH_BLOCK)
		for (int k = 0; k < VMATH_BLOCK; k++)
			acc[k] += vexp(row[v + k] - max);
	for (int k = 0; k < VMATH_BLOCK; k++)
		sum += acc[k];
	for (; v < V; v++)
		sum += vexp(row[v] - max);
	return sum;
}

/* row[v] = e^(row[v] - max) * inv * scale over the row. */
VMATH_INLINE void
xent_grad(float *row, int V, float max, float inv, float scale)
{
	int	 v = 0;

	for (; v + VMATH_BLOCK <= V; v += VMATH_BLOCK)
		for (int k = 0; k < VMATH_BLOCK; k++)
			row[v + k] = vexp(row[v + k] - max) * inv * scale;
	for (; v < V; v++)
		row[v] = vexp(row[v] - max) * inv * scale;
}

VMATH_CLONES static void
xent_part(void *arg, int part, int thread)
{
	struct xent_job *x = arg;
	int	 V = x->V, n1 = (int)kpart_at(x->N, x->parts, part + 1);
	double	 loss = 0;

	(void)thread;
	for (int n = (int)kpart_at(x->N, x->parts, part); n < n1; n++) {
		float	*row = x->logits + (size_t)n * V, max;
		double	 sum;
		int	 y = x->target[n];

		if (y < 0) {
			if (x->scale != 0)
				memset(row, 0, (size_t)V * sizeof *row);
			continue;
		}
		max = vmax_span(row, (size_t)V);
		sum = xent_sum(row, V, max);
		loss += log(sum) - (row[y] - max);
		if (x->scale == 0)
			continue;
		/* One more exp a logit is cheaper than a second N*V buffer
		 * of probabilities. */
		xent_grad(row, V, max, (float)(1.0 / sum), x->scale);
		row[y] -= x->scale;
	}
	x->loss[part] = loss;
}

double
vocab_xent(struct pool *pool, float *logits, const int32_t *target, int N,
    int V, float scale)
{
	struct xent_job x = { .logits = logits, .target = target, .N = N,
	    .V = V, .scale = scale,
	    .parts = kparts((size_t)N * V, KPARTS_GRAIN * 4) };
	double	 loss = 0;

	pool_run(pool, x.parts, xent_part, &x);
	for (int i = 0; i < x.parts; i++)
		loss += x.loss[i];
	return loss;
}
