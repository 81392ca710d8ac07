/*
 * xent.c: softmax cross-entropy over the vocabulary (transformer.h),
 * fused with its gradient.  The logits of a batch are the largest buffer a
 * language model has (N*V: 25.7M floats for GPT-2's vocabulary at 512
 * tokens), so the probabilities are never stored beside them: each row is
 * turned into its gradient in place, in the pass that takes its loss.
 */
#include <math.h>
#include <string.h>

#include "kernels/cpu/transformer.h"

double
vocab_xent(float *logits, const int32_t *target, int N, int V, float scale)
{
	double	 loss = 0;

	for (int n = 0; n < N; n++) {
		float	*row = logits + (size_t)n * V;
		float	 max = row[0];
		double	 sum = 0;
		int	 y = target[n];

		if (y < 0) {
			if (scale != 0)
				memset(row, 0, (size_t)V * sizeof *row);
			continue;
		}
		for (int v = 1; v < V; v++)
			if (row[v] > max)
				max = row[v];
		for (int v = 0; v < V; v++)
			sum += expf(row[v] - max);
		loss += log(sum) - (row[y] - max);
		if (scale == 0)
			continue;
		/* One more exp a logit is cheaper than a second N*V
		 * buffer of probabilities. */
		{
			float inv = (float)(1.0 / sum);

			for (int v = 0; v < V; v++)
				row[v] = expf(row[v] - max) * inv * scale;
			row[y] -= scale;
		}
	}
	return loss;
}
