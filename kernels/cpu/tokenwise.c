/*
 * tokenwise.c: the per-token layers of the transformer (transformer.h):
 * the token and position embedding, LayerNorm, GELU and the residual add.
 * Each is one pass over its rows; LayerNorm takes its statistics in double
 * so that wide rows keep float32's precision.
 */
#include <math.h>
#include <string.h>

#include "kernels/cpu/transformer.h"
#include "kernels/cpu/vmath-internal.h"

void
embed_forward(float *out, const int32_t *tok, const float *wte,
    const float *wpe, int B, int T, int C)
{
	for (int b = 0; b < B; b++) {
		for (int t = 0; t < T; t++) {
			float	*o = out + ((size_t)b * T + t) * C;
			const float *e = wte + (size_t)tok[b * T + t] * C;
			const float *p = wpe + (size_t)t * C;

			for (int c = 0; c < C; c++)
				o[c] = e[c] + p[c];
		}
	}
}

void
embed_backward(float *dwte, float *dwpe, const float *dout,
    const int32_t *tok, int B, int T, int C)
{
	for (int b = 0; b < B; b++) {
		for (int t = 0; t < T; t++) {
			const float *d = dout + ((size_t)b * T + t) * C;
			float	*e = dwte + (size_t)tok[b * T + t] * C;
			float	*p = dwpe + (size_t)t * C;

			for (int c = 0; c < C; c++) {
				e[c] += d[c];
				p[c] += d[c];
			}
		}
	}
}

void
layernorm_forward(float *out, float *mean, float *rstd, const float *x,
    const float *w, const float *b, int N, int C)
{
	for (int n = 0; n < N; n++) {
		const float *xr = x + (size_t)n * C;
		float	*o = out + (size_t)n * C;
		double	 m = 0, v = 0;
		float	 fm, fs;

		for (int c = 0; c < C; c++)
			m += xr[c];
		m /= C;
		for (int c = 0; c < C; c++)
			v += (xr[c] - m) * (xr[c] - m);
		v /= C;
		fm = (float)m;
		fs = (float)(1.0 / sqrt(v + LAYERNORM_EPS));
		for (int c = 0; c < C; c++)
			o[c] = (xr[c] - fm) * fs * w[c] + b[c];
		mean[n] = fm;
		rstd[n] = fs;
	}
}

void
layernorm_backward(float *dx, float *dw, float *db, const float *dout,
    const float *x, const float *w, const float *mean, const float *rstd,
    int N, int C)
{
	for (int n = 0; n < N; n++) {
		const float *xr = x + (size_t)n * C, *d = dout + (size_t)n * C;
		float	*dxr = dx + (size_t)n * C;
		float	 m = mean[n], s = rstd[n], dm, dnm;
		double	 sum = 0, sumn = 0;

		/* The mean of dnorm and of dnorm * norm, where dnorm is the
		 * gradient at the normalised value. */
		for (int c = 0; c < C; c++) {
			float norm = (xr[c] - m) * s, dn = w[c] * d[c];

			sum += dn;
			sumn += dn * norm;
		}
		dm = (float)(sum / C);
		dnm = (float)(sumn / C);
		for (int c = 0; c < C; c++) {
			float norm = (xr[c] - m) * s, dn = w[c] * d[c];

			db[c] += d[c];
			dw[c] += norm * d[c];
			dxr[c] += (dn - dm - norm * dnm) * s;
		}
	}
}

/* sqrt(2 / pi), the constant of GELU's tanh form. */
#define GELU_K	0.7978845608028654f

/*
 * The loops below run in blocks of GELU_BLOCK with a fixed trip count,
 * which GCC vectorises at -O2 (its cheapest cost model takes only loops
 * that need no remainder), then a scalar tail.
 */
#define GELU_BLOCK	8

/*
 * 0.5 (1 + tanh u) is the logistic function of 2u, so GELU is x / (1 +
 * e^(-2u)): no 1 + tanh to cancel where tanh is near -1 (x < -2), which
 * would lose half of float's digits there.
 */
static inline float
gelu_sig(float v)
{
	float	 u = GELU_K * (v + 0.044715f * v * v * v);

	return 1.0f / (1.0f + vexp(-2.0f * u));
}

static inline float
gelu_one(float v)
{
	return v * gelu_sig(v);
}

static inline float
gelu_grad(float v, float d)
{
	float	 s = gelu_sig(v);
	float	 du = GELU_K * (1.0f + 3.0f * 0.044715f * v * v);

	return (s + 2.0f * v * s * (1.0f - s) * du) * d;
}

void
gelu_forward(float *restrict y, const float *restrict x, size_t n)
{
	size_t	 i = 0;

	for (; i + GELU_BLOCK <= n; i += GELU_BLOCK)
		for (int j = 0; j < GELU_BLOCK; j++)
			y[i + j] = gelu_one(x[i + j]);
	for (; i < n; i++)
		y[i] = gelu_one(x[i]);
}

void
gelu_backward(float *restrict dx, const float *restrict x,
    const float *restrict dy, size_t n)
{
	size_t	 i = 0;

	for (; i + GELU_BLOCK <= n; i += GELU_BLOCK)
		for (int j = 0; j < GELU_BLOCK; j++)
			dx[i + j] += gelu_grad(x[i + j], dy[i + j]);
	for (; i < n; i++)
		dx[i] += gelu_grad(x[i], dy[i]);
}

void
residual_forward(float *out, const float *a, const float *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = a[i] + b[i];
}

void
residual_backward(float *da, float *db, const float *dout, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		da[i] += dout[i];
		db[i] += dout[i];
	}
}
