/*
 * activation.c: ReLU, softmax with cross-entropy, and the accuracy count.
 *
 * ReLU and its backward may run in place, so their pointers are not
 * restrict.  They work in fixed spans of ACTIVATION_SPAN floats because
 * GCC's -O2 vectorises only loops whose trip count is a known multiple of
 * the vector width.  Softmax subtracts the row maximum before
 * exponentiating, so logits in the thousands neither overflow nor lose the
 * loss, and the loss is log-sum-exp minus the label's logit, summed in
 * double across the batch.
 */

#include <math.h>

#include "kernels/cpu/kernels.h"

#define ACTIVATION_SPAN	16

/*
 * The spans copy their inputs to a local array before writing, so that they
 * stay correct in place while the compiler sees no overlap to guard.
 */
static inline void
activation_relu_span(float *y, const float *x, size_t n)
{
	float	t[ACTIVATION_SPAN];

	for (size_t i = 0; i < n; i++)
		t[i] = x[i];
	for (size_t i = 0; i < n; i++)
		y[i] = t[i] > 0.0f ? t[i] : 0.0f;
}

static inline void
activation_relu_back_span(float *dx, const float *dy, const float *y,
    size_t n)
{
	float	g[ACTIVATION_SPAN], t[ACTIVATION_SPAN];

	for (size_t i = 0; i < n; i++) {
		g[i] = dy[i];
		t[i] = y[i];
	}
	for (size_t i = 0; i < n; i++)
		dx[i] = t[i] > 0.0f ? g[i] : 0.0f;
}

void
relu_forward(float *y, const float *x, size_t n)
{
	size_t	i = 0;

	for (; i + ACTIVATION_SPAN <= n; i += ACTIVATION_SPAN)
		activation_relu_span(y + i, x + i, ACTIVATION_SPAN);
	activation_relu_span(y + i, x + i, n - i);
}

void
relu_backward(float *dx, const float *dy, const float *y, size_t n)
{
	size_t	i = 0;

	for (; i + ACTIVATION_SPAN <= n; i += ACTIVATION_SPAN) {
		activation_relu_back_span(dx + i, dy + i, y + i,
		    ACTIVATION_SPAN);
	}
	activation_relu_back_span(dx + i, dy + i, y + i, n - i);
}

/* Index of the first maximum of row[0..C-1]. */
static int
activation_row_argmax(const float *row, int C)
{
	int	best = 0;

	for (int j = 1; j < C; j++) {
		if (row[j] > row[best])
			best = j;
	}
	return best;
}

/*
 * One row: probs = exp(l - max) / sum; returns the loss,
 * log(sum) - (l[label] - max), in double.  p may alias l.
 */
static double
activation_softmax_row(float *p, const float *l, int label, int C)
{
	float	mx = l[activation_row_argmax(l, C)];
	float	ly = l[label];
	double	sum = 0.0;
	float	inv;

	for (int j = 0; j < C; j++) {
		p[j] = expf(l[j] - mx);
		sum += p[j];
	}
	inv = (float)(1.0 / sum);
	for (int j = 0; j < C; j++)
		p[j] *= inv;
	return log(sum) - ((double)ly - (double)mx);
}

double
softmax_xent_forward(float *probs, const float *logits,
    const uint8_t *labels, int B, int C)
{
	double	loss = 0.0;

	for (int i = 0; i < B; i++) {
		loss += activation_softmax_row(probs + (size_t)i * C,
		    logits + (size_t)i * C, labels[i], C);
	}
	return loss;
}

void
softmax_xent_backward(float *dlogits, const float *probs,
    const uint8_t *labels, int B, int C, float scale)
{
	for (int i = 0; i < B; i++) {
		float		*d = dlogits + (size_t)i * C;
		const float	*p = probs + (size_t)i * C;
		int		 y = labels[i];
		float		 py = p[y];

		for (int j = 0; j < C; j++)
			d[j] = p[j] * scale;
		d[y] = (py - 1.0f) * scale;
	}
}

int
argmax_correct(const float *logits, const uint8_t *labels, int B, int C)
{
	int	n = 0;

	for (int i = 0; i < B; i++) {
		if (activation_row_argmax(logits + (size_t)i * C, C) ==
		    labels[i])
			n++;
	}
	return n;
}
