/*
 * test-gpt-kernels.c: the transformer kernels (kernels/cpu/transformer.h)
 * against plain double-precision references written here from the
 * definitions: embedding, LayerNorm, the [in, out] projection, the tied
 * output head, causal attention, GELU (tanh form), the residual add and
 * the vocabulary cross-entropy.
 *
 * Gradient checks, as test-kernels.c does them: the objective is
 * L = sum(y * r) for a fixed random r (the summed cross-entropy for the
 * loss), the numeric derivative is a central difference of L over the
 * double reference (every layer here is smooth, so the step 1e-5 leaves
 * an error near 1e-10), and what remains in the comparison is the float32
 * rounding of the kernel.  The float forward is checked against the same
 * reference.  Elements agree when |a - n| / max(|a|, |n|, 1e-3) < 1e-3.
 * Each kernel also runs with its gradient buffers already holding values,
 * to check that it accumulates (+=) rather than overwrites.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/transformer.h"

#define GK_TOL		1e-3
#define GK_FLOOR	1e-3
#define GK_STEP		1e-5
#define GK_B		2
#define GK_T		5
#define GK_C		8
#define GK_H		2
#define GK_V		11
#define GK_N		(GK_B * GK_T)
#define GK_MAX		(GK_N * 3 * GK_C * 4)

static uint32_t	gk_seed = 2024u;

static float
gk_uniform(void)
{
	gk_seed = gk_seed * 1664525u + 1013904223u;
	return (float)(gk_seed >> 8) / 8388608.0f - 1.0f;
}

static void
gk_fill(float *f, double *d, size_t n, float amp)
{
	for (size_t i = 0; i < n; i++) {
		f[i] = gk_uniform() * amp;
		d[i] = f[i];
	}
}

static double
gk_rel(double a, double n)
{
	double	 m = fmax(fmax(fabs(a), fabs(n)), GK_FLOOR);

	return fabs(a - n) / m;
}

/* The worst relative error of a against the double array n. */
static double
gk_worst(const float *a, const double *n, size_t len)
{
	double	 w = 0;

	for (size_t i = 0; i < len; i++)
		w = fmax(w, gk_rel(a[i], n[i]));
	return w;
}

/* Central differences of L over each element of p[0..n). */
static void
gk_numeric(double (*L)(void), double *p, size_t n, double *out)
{
	for (size_t i = 0; i < n; i++) {
		double	 keep = p[i], up, down;

		p[i] = keep + GK_STEP;
		up = L();
		p[i] = keep - GK_STEP;
		down = L();
		p[i] = keep;
		out[i] = (up - down) / (2 * GK_STEP);
	}
}

/* Check an analytic gradient that was accumulated onto `base`. */
static void
gk_check_grad(const char *what, const float *got, const float *base,
    double (*L)(void), double *p, size_t n)
{
	double	 num[GK_MAX];
	float	 diff[GK_MAX];
	double	 w;

	gk_numeric(L, p, n, num);
	for (size_t i = 0; i < n; i++)
		diff[i] = got[i] - base[i];
	w = gk_worst(diff, num, n);
	printf("  %-18s worst relative error %.2e\n", what, w);
	assert_true(w < GK_TOL);
}

/* A gradient written (add 0) over a buffer of NaNs equals, element for
 * element, the same gradient added (add 1) to zeros. */
static void
gk_check_set(const char *what, const float *set, const float *added,
    size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!(set[i] == added[i]))
			fail_msg("%s written: [%zu] %g, added to 0: %g", what,
			    i, set[i], added[i]);
	printf("  %-18s written as it is added\n", what);
}

/* The shared state of the double references. */
static double	 d_x[GK_MAX], d_w[GK_MAX], d_b[GK_MAX], d_r[GK_MAX];
static double	 d_y[GK_MAX];
static int32_t	 g_tok[GK_N], g_tgt[GK_N];

static double
gk_dot_r(size_t n)
{
	double	 s = 0;

	for (size_t i = 0; i < n; i++)
		s += d_y[i] * d_r[i];
	return s;
}

/* --- embedding: d_w is wte [V, C], d_b is wpe [T, C] --- */

static double
ref_embed(void)
{
	for (int n = 0; n < GK_N; n++)
		for (int c = 0; c < GK_C; c++)
			d_y[n * GK_C + c] = d_w[g_tok[n] * GK_C + c] +
			    d_b[(n % GK_T) * GK_C + c];
	return gk_dot_r(GK_N * GK_C);
}

static void
t_embed(void **state)
{
	float	 wte[GK_V * GK_C], wpe[GK_T * GK_C], out[GK_N * GK_C];
	float	 r[GK_N * GK_C], dwte[GK_V * GK_C], dwpe[GK_T * GK_C];
	float	 bwte[GK_V * GK_C], bwpe[GK_T * GK_C];

	(void)state;
	for (int n = 0; n < GK_N; n++)
		g_tok[n] = (int32_t)((n * 7 + 3) % GK_V);
	gk_fill(wte, d_w, GK_V * GK_C, 1);
	gk_fill(wpe, d_b, GK_T * GK_C, 1);
	gk_fill(r, d_r, GK_N * GK_C, 1);
	gk_fill(bwte, d_x, GK_V * GK_C, 1);
	gk_fill(bwpe, d_x, GK_T * GK_C, 1);
	memcpy(dwte, bwte, sizeof dwte);
	memcpy(dwpe, bwpe, sizeof dwpe);
	embed_forward(NULL, out, g_tok, wte, wpe, GK_B, GK_T, GK_C);
	ref_embed();
	assert_true(gk_worst(out, d_y, GK_N * GK_C) < 1e-6);
	embed_backward(NULL, dwte, dwpe, r, g_tok, GK_B, GK_T, GK_C);
	gk_check_grad("embed dwte", dwte, bwte, ref_embed, d_w, GK_V * GK_C);
	gk_check_grad("embed dwpe", dwpe, bwpe, ref_embed, d_b, GK_T * GK_C);
}

/* --- LayerNorm over C: d_x [N, C], d_w and d_b [C] --- */

static double
ref_layernorm(void)
{
	for (int n = 0; n < GK_N; n++) {
		const double *x = d_x + n * GK_C;
		double	 m = 0, v = 0;

		for (int c = 0; c < GK_C; c++)
			m += x[c];
		m /= GK_C;
		for (int c = 0; c < GK_C; c++)
			v += (x[c] - m) * (x[c] - m);
		v /= GK_C;
		for (int c = 0; c < GK_C; c++)
			d_y[n * GK_C + c] = (x[c] - m) / sqrt(v + 1e-5) *
			    d_w[c] + d_b[c];
	}
	return gk_dot_r(GK_N * GK_C);
}

static void
t_layernorm(void **state)
{
	float	 x[GK_N * GK_C], w[GK_C], b[GK_C], out[GK_N * GK_C];
	float	 r[GK_N * GK_C], mean[GK_N], rstd[GK_N];
	float	 dx[GK_N * GK_C], dw[GK_C], db[GK_C];
	float	 bx[GK_N * GK_C], bw[GK_C], bb[GK_C];
	double	 junk[GK_MAX];

	(void)state;
	gk_fill(x, d_x, GK_N * GK_C, 2);
	gk_fill(w, d_w, GK_C, 1);
	gk_fill(b, d_b, GK_C, 1);
	gk_fill(r, d_r, GK_N * GK_C, 1);
	gk_fill(bx, junk, GK_N * GK_C, 1);
	gk_fill(bw, junk, GK_C, 1);
	gk_fill(bb, junk, GK_C, 1);
	memcpy(dx, bx, sizeof dx);
	memcpy(dw, bw, sizeof dw);
	memcpy(db, bb, sizeof db);
	layernorm_forward(NULL, out, mean, rstd, x, w, b, GK_N, GK_C);
	ref_layernorm();
	assert_true(gk_worst(out, d_y, GK_N * GK_C) < 1e-4);
	layernorm_backward(NULL, dx, dw, db, r, x, w, mean, rstd, GK_N, GK_C);
	gk_check_grad("layernorm dx", dx, bx, ref_layernorm, d_x, GK_N * GK_C);
	gk_check_grad("layernorm dw", dw, bw, ref_layernorm, d_w, GK_C);
	gk_check_grad("layernorm db", db, bb, ref_layernorm, d_b, GK_C);
}

/* --- projection y = x W + b: d_x [N, C], d_w [C, OC], d_b [OC] --- */

#define GK_OC	12

static double
ref_matmul(void)
{
	for (int n = 0; n < GK_N; n++)
		for (int o = 0; o < GK_OC; o++) {
			double s = d_b[o];

			for (int c = 0; c < GK_C; c++)
				s += d_x[n * GK_C + c] * d_w[c * GK_OC + o];
			d_y[n * GK_OC + o] = s;
		}
	return gk_dot_r(GK_N * GK_OC);
}

static void
t_matmul(void **state)
{
	float	 x[GK_N * GK_C], w[GK_C * GK_OC], b[GK_OC], y[GK_N * GK_OC];
	float	 r[GK_N * GK_OC], dx[GK_N * GK_C], dw[GK_C * GK_OC], db[GK_OC];
	float	 bx[GK_N * GK_C], bw[GK_C * GK_OC], bb[GK_OC];
	double	 junk[GK_MAX];

	(void)state;
	gk_fill(x, d_x, GK_N * GK_C, 1);
	gk_fill(w, d_w, GK_C * GK_OC, 1);
	gk_fill(b, d_b, GK_OC, 1);
	gk_fill(r, d_r, GK_N * GK_OC, 1);
	gk_fill(bx, junk, GK_N * GK_C, 1);
	gk_fill(bw, junk, GK_C * GK_OC, 1);
	gk_fill(bb, junk, GK_OC, 1);
	memcpy(dx, bx, sizeof dx);
	memcpy(dw, bw, sizeof dw);
	memcpy(db, bb, sizeof db);
	matmul_forward(NULL, y, x, w, b, GK_N, GK_C, GK_OC);
	ref_matmul();
	assert_true(gk_worst(y, d_y, GK_N * GK_OC) < 1e-5);
	matmul_backward(NULL, dx, 1, dw, db, r, x, w, GK_N, GK_C, GK_OC);
	gk_check_grad("matmul dx", dx, bx, ref_matmul, d_x, GK_N * GK_C);
	gk_check_grad("matmul dw", dw, bw, ref_matmul, d_w, GK_C * GK_OC);
	gk_check_grad("matmul db", db, bb, ref_matmul, d_b, GK_OC);
	/* Without a bias the output is x W alone. */
	matmul_forward(NULL, y, x, w, NULL, GK_N, GK_C, GK_OC);
	memset(d_b, 0, GK_OC * sizeof *d_b);
	ref_matmul();
	assert_true(gk_worst(y, d_y, GK_N * GK_OC) < 1e-5);
	for (int i = 0; i < GK_N * GK_C; i++) {
		bx[i] = NAN;
		dx[i] = 0;
	}
	matmul_backward(NULL, bx, 0, dw, NULL, r, x, w, GK_N, GK_C, GK_OC);
	matmul_backward(NULL, dx, 1, dw, NULL, r, x, w, GK_N, GK_C, GK_OC);
	gk_check_set("matmul dx", bx, dx, GK_N * GK_C);
}

/* --- tied head: logits = x wte^T: d_x [N, C], d_w [V, C] --- */

static double
ref_head(void)
{
	for (int n = 0; n < GK_N; n++)
		for (int v = 0; v < GK_V; v++) {
			double s = 0;

			for (int c = 0; c < GK_C; c++)
				s += d_x[n * GK_C + c] * d_w[v * GK_C + c];
			d_y[n * GK_V + v] = s;
		}
	return gk_dot_r(GK_N * GK_V);
}

static void
t_head(void **state)
{
	float	 x[GK_N * GK_C], wte[GK_V * GK_C], y[GK_N * GK_V];
	float	 r[GK_N * GK_V], dx[GK_N * GK_C], dw[GK_V * GK_C];
	float	 bx[GK_N * GK_C], bw[GK_V * GK_C];
	double	 junk[GK_MAX];

	(void)state;
	gk_fill(x, d_x, GK_N * GK_C, 1);
	gk_fill(wte, d_w, GK_V * GK_C, 1);
	gk_fill(r, d_r, GK_N * GK_V, 1);
	gk_fill(bx, junk, GK_N * GK_C, 1);
	gk_fill(bw, junk, GK_V * GK_C, 1);
	memcpy(dx, bx, sizeof dx);
	memcpy(dw, bw, sizeof dw);
	head_forward(NULL, y, x, wte, GK_N, GK_C, GK_V);
	ref_head();
	assert_true(gk_worst(y, d_y, GK_N * GK_V) < 1e-5);
	head_backward(NULL, dx, 1, dw, r, x, wte, GK_N, GK_C, GK_V);
	gk_check_grad("head dx", dx, bx, ref_head, d_x, GK_N * GK_C);
	gk_check_grad("head dwte", dw, bw, ref_head, d_w, GK_V * GK_C);
	for (int i = 0; i < GK_N * GK_C; i++) {
		bx[i] = NAN;
		dx[i] = 0;
	}
	head_backward(NULL, bx, 0, dw, r, x, wte, GK_N, GK_C, GK_V);
	head_backward(NULL, dx, 1, dw, r, x, wte, GK_N, GK_C, GK_V);
	gk_check_set("head dx", bx, dx, GK_N * GK_C);
}

/*
 * --- causal attention: qkv [B, T, 3C] in ga_x, out in ga_y ---
 *
 * Its own shapes, so that a context longer than the kernel's block of
 * queries (32 at this T) runs the tiling: T = 70 is two whole blocks and
 * a part one.
 */

static int	 ga_B, ga_T, ga_C, ga_H;
static double	*ga_x, *ga_y, *ga_r;

/* Row i of head h of sample b, into ga_y; s is T doubles of scratch. */
static void
ref_attention_row(int b, int h, int i, double *s)
{
	int	 T = ga_T, C = ga_C, d = C / ga_H, ld = 3 * C;
	const double *base = ga_x + (size_t)b * T * ld + h * d;
	const double *q = base + (size_t)i * ld;
	double	 max = -1e300, sum = 0;

	for (int j = 0; j <= i; j++) {
		const double *k = base + (size_t)j * ld + C;

		s[j] = 0;
		for (int c = 0; c < d; c++)
			s[j] += q[c] * k[c];
		s[j] /= sqrt((double)d);
		max = fmax(max, s[j]);
	}
	for (int j = 0; j <= i; j++)
		sum += (s[j] = exp(s[j] - max));
	for (int c = 0; c < d; c++) {
		double	 o = 0;

		for (int j = 0; j <= i; j++)
			o += s[j] / sum * base[(size_t)j * ld + 2 * C + c];
		ga_y[(size_t)(b * T + i) * C + h * d + c] = o;
	}
}

static double
ref_attention(void)
{
	double	*s = malloc((size_t)ga_T * sizeof *s), dot = 0;

	for (int b = 0; b < ga_B; b++)
		for (int h = 0; h < ga_H; h++)
			for (int i = 0; i < ga_T; i++)
				ref_attention_row(b, h, i, s);
	free(s);
	for (int i = 0; i < ga_B * ga_T * ga_C; i++)
		dot += ga_y[i] * ga_r[i];
	return dot;
}

/* One shape: the output against the reference, the gradient against
 * central differences, accumulated onto values already there. */
static void
gk_attention_case(int B, int T, int C, int H)
{
	size_t	 nq = (size_t)B * T * 3 * C, no = (size_t)B * T * C;
	float	*qkv = malloc(nq * 4), *dqkv = malloc(nq * 4);
	float	*base = malloc(nq * 4), *out = malloc(no * 4);
	float	*r = malloc(no * 4), *stats = malloc((size_t)B * H * T * 2 * 4);
	float	*ws = malloc(attention_workspace(T, C / H, 1) * 4);
	double	*junk = malloc(nq * sizeof *junk);
	double	*num = malloc(nq * sizeof *num);
	double	 w = 0;

	ga_B = B, ga_T = T, ga_C = C, ga_H = H;
	ga_x = malloc(nq * sizeof *ga_x);
	ga_y = malloc(no * sizeof *ga_y);
	ga_r = malloc(no * sizeof *ga_r);
	gk_fill(qkv, ga_x, nq, 2);
	gk_fill(r, ga_r, no, 1);
	gk_fill(base, junk, nq, 1);
	memcpy(dqkv, base, nq * 4);
	attention_forward(NULL, out, stats, ws, qkv, B, T, C, H);
	ref_attention();
	/* Relative to at least 1% of the values' range: an output is a
	 * weighted mean of values in [-2, 2], and near 0 the float sums
	 * of a head of 20 over 37 keys leave 1.5e-7 of it. */
	for (size_t i = 0; i < no; i++)
		w = fmax(w, fabs(out[i] - ga_y[i]) / fmax(fabs(ga_y[i]), 1e-2));
	printf("  attention B%d T%d C%d H%d: out worst relative error %.2e\n",
	    B, T, C, H, w);
	assert_true(w < 1e-4);
	w = 0;
	attention_backward(NULL, dqkv, 1, r, qkv, stats, ws, B, T, C, H);
	gk_numeric(ref_attention, ga_x, nq, num);
	for (size_t i = 0; i < nq; i++)
		w = fmax(w, gk_rel(dqkv[i] - base[i], num[i]));
	printf("  attention dqkv     worst relative error %.2e\n", w);
	assert_true(w < GK_TOL);
	for (size_t i = 0; i < nq; i++) {
		base[i] = NAN;
		dqkv[i] = 0;
	}
	attention_backward(NULL, base, 0, r, qkv, stats, ws, B, T, C, H);
	attention_backward(NULL, dqkv, 1, r, qkv, stats, ws, B, T, C, H);
	gk_check_set("attention dqkv", base, dqkv, nq);
	free(qkv); free(dqkv); free(base); free(out); free(r); free(stats);
	free(ws); free(junk); free(num); free(ga_x); free(ga_y); free(ga_r);
}

static void
t_attention(void **state)
{
	(void)state;
	/* Its memory grows with T, not T * T: at 1024 its scratch (heads
	 * of 64) is 40% of one head's T * T probabilities, at 4096 a
	 * tenth. */
	assert_true(attention_workspace(1024, 64, 1) * 5 / 2 <= 1024 * 1024);
	assert_true(attention_workspace(4096, 64, 1) * 10 <= 4096 * 4096);
	gk_attention_case(GK_B, GK_T, GK_C, GK_H);
	gk_attention_case(1, 70, 8, 2);
	/* Heads of 20 and 37 keys: the transposes' 16 x 16 tiles and both
	 * their tails. */
	gk_attention_case(1, 37, 40, 2);
}

/* --- GELU, tanh form: d_x [N * C] --- */

static double
ref_gelu(void)
{
	for (int i = 0; i < GK_N * GK_C; i++) {
		double v = d_x[i];

		d_y[i] = 0.5 * v * (1 + tanh(sqrt(2 / M_PI) *
		    (v + 0.044715 * v * v * v)));
	}
	return gk_dot_r(GK_N * GK_C);
}

static void
t_gelu(void **state)
{
	float	 x[GK_N * GK_C], y[GK_N * GK_C], r[GK_N * GK_C];
	float	 dx[GK_N * GK_C], base[GK_N * GK_C];
	double	 junk[GK_MAX];

	(void)state;
	gk_fill(x, d_x, GK_N * GK_C, 3);
	gk_fill(r, d_r, GK_N * GK_C, 1);
	gk_fill(base, junk, GK_N * GK_C, 1);
	memcpy(dx, base, sizeof dx);
	gelu_forward(NULL, y, x, GK_N * GK_C);
	ref_gelu();
	assert_true(gk_worst(y, d_y, GK_N * GK_C) < 1e-5);
	gelu_backward(NULL, dx, x, r, GK_N * GK_C);
	gk_check_grad("gelu dx", dx, base, ref_gelu, d_x, GK_N * GK_C);
	/* Far out: 0 below (an exp far past a float's range, once an
	 * int conversion out of range), x above. */
	{
		float	 far[2] = { -3000.0f, 3000.0f }, out[2];

		gelu_forward(NULL, out, far, 2);
		assert_true(out[0] == 0.0f && out[1] == 3000.0f);
	}
}

/* --- residual: a = d_x, b = d_w --- */

static double
ref_residual(void)
{
	for (int i = 0; i < GK_N * GK_C; i++)
		d_y[i] = d_x[i] + d_w[i];
	return gk_dot_r(GK_N * GK_C);
}

static void
t_residual(void **state)
{
	float	 a[GK_N * GK_C], b[GK_N * GK_C], y[GK_N * GK_C], r[GK_N * GK_C];
	float	 da[GK_N * GK_C], db[GK_N * GK_C], ba[GK_N * GK_C];
	float	 bb[GK_N * GK_C];
	double	 junk[GK_MAX];

	(void)state;
	gk_fill(a, d_x, GK_N * GK_C, 1);
	gk_fill(b, d_w, GK_N * GK_C, 1);
	gk_fill(r, d_r, GK_N * GK_C, 1);
	gk_fill(ba, junk, GK_N * GK_C, 1);
	gk_fill(bb, junk, GK_N * GK_C, 1);
	memcpy(da, ba, sizeof da);
	memcpy(db, bb, sizeof db);
	residual_forward(NULL, y, a, b, GK_N * GK_C);
	ref_residual();
	assert_true(gk_worst(y, d_y, GK_N * GK_C) < 1e-6);
	residual_backward(NULL, da, db, r, GK_N * GK_C);
	gk_check_grad("residual da", da, ba, ref_residual, d_x, GK_N * GK_C);
	gk_check_grad("residual db", db, bb, ref_residual, d_w, GK_N * GK_C);
}

/* --- vocabulary cross-entropy: d_x is logits [N, V] --- */

static double
ref_xent(void)
{
	double	 loss = 0;

	for (int n = 0; n < GK_N; n++) {
		const double *l = d_x + n * GK_V;
		double	 max = l[0], sum = 0;

		if (g_tgt[n] < 0)
			continue;
		for (int v = 1; v < GK_V; v++)
			max = fmax(max, l[v]);
		for (int v = 0; v < GK_V; v++)
			sum += exp(l[v] - max);
		loss += log(sum) - (l[g_tgt[n]] - max);
	}
	return loss;
}

static void
t_xent(void **state)
{
	float	 logits[GK_N * GK_V], keep[GK_N * GK_V], zero[GK_N * GK_V];
	double	 loss, ref;

	(void)state;
	for (int n = 0; n < GK_N; n++)
		g_tgt[n] = n == 3 ? -1 : (int32_t)((n * 5 + 1) % GK_V);
	gk_fill(logits, d_x, GK_N * GK_V, 4);
	memcpy(keep, logits, sizeof keep);
	memset(zero, 0, sizeof zero);
	ref = ref_xent();
	/* scale 0: the loss only, the logits untouched. */
	loss = vocab_xent(NULL, logits, g_tgt, GK_N, GK_V, 0);
	assert_true(fabs(loss - ref) / ref < 1e-6);
	assert_memory_equal(logits, keep, sizeof keep);
	loss = vocab_xent(NULL, logits, g_tgt, GK_N, GK_V, 1.0f);
	printf("  xent loss %.9f, reference %.9f\n", loss, ref);
	assert_true(fabs(loss - ref) / ref < 1e-6);
	gk_check_grad("xent dlogits", logits, zero, ref_xent, d_x, GK_N * GK_V);
	/* A row left out has no gradient at all. */
	for (int v = 0; v < GK_V; v++)
		assert_true(logits[3 * GK_V + v] == 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_embed),
		cmocka_unit_test(t_layernorm),
		cmocka_unit_test(t_matmul),
		cmocka_unit_test(t_head),
		cmocka_unit_test(t_attention),
		cmocka_unit_test(t_gelu),
		cmocka_unit_test(t_residual),
		cmocka_unit_test(t_xent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
