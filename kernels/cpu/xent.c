/*
 * xent.c: softmax cross-entropy over the vocabulary (transformer.h),
 * fused with its gradient.  The logits of a batch are the largest buffer a
 * language model has (N*V: 25.7M floats for GPT-2's vocabulary at 512
 * tokens), so the probabilities are never stored beside them: each row is
 * turned into its gradient in place, in the pass that takes its loss.
 * The rows are cut into parts; each part sums its rows' losses in order
 * and the parts' sums are added in part order, so the loss has the same
 * bits on any number of threads.
 */
#include <math.h>
#include <string.h>

#include "kernels/cpu/transformer.h"
#include "kernels/cpu/parts-internal.h"

struct xent_job {
	float		*logits;
	const int32_t	*target;
	int		 N, V, parts;
	float		 scale;
	double		 loss[KPARTS_MAX];
};

static void
xent_part(void *arg, int part, int thread)
{
	struct xent_job *x = arg;
	int	 V = x->V, n1 = (int)kpart_at(x->N, x->parts, part + 1);
	double	 loss = 0;

	(void)thread;
	for (int n = (int)kpart_at(x->N, x->parts, part); n < n1; n++) {
		float	*row = x->logits + (size_t)n * V;
		float	 max = row[0];
		double	 sum = 0;
		int	 y = x->target[n];

		if (y < 0) {
			if (x->scale != 0)
				memset(row, 0, (size_t)V * sizeof *row);
			continue;
		}
		for (int v = 1; v < V; v++)
			if (row[v] > max)
				max = row[v];
		for (int v = 0; v < V; v++)
			sum += expf(row[v] - max);
		loss += log(sum) - (row[y] - max);
		if (x->scale == 0)
			continue;
		/* One more exp a logit is cheaper than a second N*V
		 * buffer of probabilities. */
		{
			float inv = (float)(1.0 / sum);

			for (int v = 0; v < V; v++)
				row[v] = expf(row[v] - max) * inv * x->scale;
			row[y] -= x->scale;
		}
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
