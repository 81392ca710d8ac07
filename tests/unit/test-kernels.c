/*
 * test-kernels.c: the CPU kernels against naive double-precision references.
 *
 * Gradient checks: every layer has a plain re-implementation of its forward
 * pass here, written and accumulated in double.  The scalar objective is
 * L = sum(y * r) for a fixed random r (the mean cross-entropy for the loss
 * layer), and the numeric derivative is a central difference of L over that
 * double forward with step 1e-5, so it is accurate to about 1e-10 (every
 * layer but softmax is piecewise linear) and what is left in the comparison
 * is the float32 rounding of the kernel under test.  Finite differences of
 * the float32 kernels themselves would mostly measure their rounding.  The
 * float forward is checked against the same reference, which ties the
 * analytic gradients to the kernels' own forward.  Every element is checked
 * with |a - n| / max(|a|, |n|, 1e-3) < 1e-3; the worst error per layer is
 * printed.
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

#include "kernels/cpu/kernels.h"

#define TK_TOL		1e-3
#define TK_FLOOR	1e-3
#define TK_STEP		1e-5
#define TK_MAX		2048

/* Objective of the double references: L(ctx), read from ctx's arrays. */
typedef double	(*tk_objective)(const void *);

/* Everything a layer's reference needs; unused fields stay zero. */
struct tk_ctx {
	double		*x, *w, *b, *r;
	const uint8_t	*labels;
	int		 B, C, H, W, K, kh, kw, pad, in, out;
};

static uint32_t	tk_seed = 12345u;

static float
tk_uniform(void)
{
	tk_seed = tk_seed * 1664525u + 1013904223u;
	return (float)(tk_seed >> 8) / 8388608.0f - 1.0f;
}

static void
tk_fill(float *f, double *d, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		f[i] = tk_uniform();
		if (d != NULL)
			d[i] = f[i];
	}
}

static double
tk_rel(double a, double b)
{
	double	den = fmax(fmax(fabs(a), fabs(b)), TK_FLOOR);

	return fabs(a - b) / den;
}

/* Compare n floats with a double reference; returns the worst error. */
static double
tk_compare(const char *what, const float *got, const double *want, size_t n,
    double tol)
{
	double	worst = 0.0;

	for (size_t i = 0; i < n; i++) {
		double	e = tk_rel(got[i], want[i]);

		if (!(e < tol))
			fail_msg("%s[%zu]: got %.9g, want %.9g (rel %.3g)",
			    what, i, (double)got[i], want[i], e);
		if (e > worst)
			worst = e;
	}
	return worst;
}

/* Central-difference gradient of f with respect to p[0..n-1]. */
static void
tk_numgrad(double *grad, tk_objective f, const void *ctx, double *p,
    size_t n)
{
	for (size_t i = 0; i < n; i++) {
		double	save = p[i], lp, lm;

		p[i] = save + TK_STEP;
		lp = f(ctx);
		p[i] = save - TK_STEP;
		lm = f(ctx);
		p[i] = save;
		grad[i] = (lp - lm) / (2.0 * TK_STEP);
	}
}

/* Numeric gradient of p, compared with the kernel's analytic one. */
static double
tk_gradcheck(const char *what, const float *analytic, tk_objective f,
    const void *ctx, double *p, size_t n)
{
	double	num[TK_MAX];

	assert_true(n <= TK_MAX);
	tk_numgrad(num, f, ctx, p, n);
	return tk_compare(what, analytic, num, n, TK_TOL);
}

static void
tk_report(const char *layer, double worst)
{
	print_message("gradcheck %-10s worst rel error %.3g\n", layer, worst);
}

static void
ref_linear(double *y, const struct tk_ctx *c)
{
	for (int i = 0; i < c->B; i++) {
		for (int o = 0; o < c->out; o++) {
			double	s = c->b[o];

			for (int k = 0; k < c->in; k++)
				s += c->x[i * c->in + k] * c->w[o * c->in + k];
			y[i * c->out + o] = s;
		}
	}
}

static double
obj_linear(const void *v)
{
	const struct tk_ctx	*c = v;
	double			 y[TK_MAX], L = 0.0;

	ref_linear(y, c);
	for (int i = 0; i < c->B * c->out; i++)
		L += y[i] * c->r[i];
	return L;
}

static void
test_linear_gradcheck(void **state)
{
	enum { B = 3, IN = 5, OUT = 19 };	/* a full span and a tail */
	float		x[B * IN], w[OUT * IN], b[OUT], r[B * OUT], y[B * OUT];
	float		dx[B * IN], dw[OUT * IN] = { 0 }, db[OUT] = { 0 };
	double		xd[B * IN], wd[OUT * IN], bd[OUT], rd[B * OUT];
	double		yd[B * OUT], worst = 0.0;
	struct tk_ctx	c = { .x = xd, .w = wd, .b = bd, .r = rd, .B = B,
			    .in = IN, .out = OUT };

	tk_fill(x, xd, B * IN);
	tk_fill(w, wd, OUT * IN);
	tk_fill(b, bd, OUT);
	tk_fill(r, rd, B * OUT);
	linear_forward(y, x, w, b, B, IN, OUT);
	ref_linear(yd, &c);
	tk_compare("linear y", y, yd, B * OUT, 1e-4);
	linear_backward(dx, dw, db, r, x, w, B, IN, OUT);
	worst = fmax(worst, tk_gradcheck("linear dx", dx, obj_linear, &c, xd,
	    B * IN));
	worst = fmax(worst, tk_gradcheck("linear dw", dw, obj_linear, &c, wd,
	    OUT * IN));
	worst = fmax(worst, tk_gradcheck("linear db", db, obj_linear, &c, bd,
	    OUT));
	tk_report("linear", worst);
}

static double
obj_relu(const void *v)
{
	const struct tk_ctx	*c = v;
	double			 L = 0.0;

	for (int i = 0; i < c->in; i++)
		L += (c->x[i] > 0.0 ? c->x[i] : 0.0) * c->r[i];
	return L;
}

static void
test_relu_gradcheck(void **state)
{
	enum { N = 70 };
	float		x[N], y[N], r[N], dx[N], t[N];
	double		xd[N], rd[N];
	struct tk_ctx	c = { .x = xd, .r = rd, .in = N };

	tk_fill(x, NULL, N);
	tk_fill(r, rd, N);
	for (int i = 0; i < N; i++) {
		/* Keep the 1e-5 steps well away from the kink at 0. */
		if (fabsf(x[i]) < 0.05f)
			x[i] = i % 2 ? 0.5f : -0.5f;
		xd[i] = x[i];
	}
	relu_forward(y, x, N);
	for (int i = 0; i < N; i++)
		assert_true(y[i] == (x[i] > 0.0f ? x[i] : 0.0f));
	relu_backward(dx, r, y, N);
	tk_report("relu", tk_gradcheck("relu dx", dx, obj_relu, &c, xd, N));

	memcpy(t, x, sizeof t);
	relu_forward(t, t, N);
	assert_memory_equal(t, y, sizeof t);
	memcpy(t, r, sizeof t);
	relu_backward(t, t, y, N);
	assert_memory_equal(t, dx, sizeof t);
}

/* Mean cross-entropy of logits c->x[B, C] in double. */
static double
obj_xent(const void *v)
{
	const struct tk_ctx	*c = v;
	double			 L = 0.0;

	for (int i = 0; i < c->B; i++) {
		const double	*l = c->x + i * c->C;
		double		 mx = l[0], s = 0.0;

		for (int j = 1; j < c->C; j++)
			mx = fmax(mx, l[j]);
		for (int j = 0; j < c->C; j++)
			s += exp(l[j] - mx);
		L += log(s) + mx - l[c->labels[i]];
	}
	return L / c->B;
}

static void
test_xent_gradcheck(void **state)
{
	enum { B = 4, C = 7 };
	float		l[B * C], p[B * C], dl[B * C];
	double		ld[B * C];
	uint8_t		labels[B] = { 3, 0, 6, 3 };
	struct tk_ctx	c = { .x = ld, .labels = labels, .B = B, .C = C };
	double		loss;

	tk_fill(l, ld, B * C);
	for (int i = 0; i < B * C; i++) {
		l[i] *= 3.0f;
		ld[i] = l[i];
	}
	loss = softmax_xent_forward(p, l, labels, B, C);
	assert_true(tk_rel(loss / B, obj_xent(&c)) < 1e-6);
	softmax_xent_backward(dl, p, labels, B, C, 1.0f / B);
	tk_report("xent", tk_gradcheck("xent dlogits", dl, obj_xent, &c, ld,
	    B * C));
}

static void
test_xent_stable(void **state)
{
	float	l[9] = { 1000, 0, -1000, 1000, 0, -1000, 1000, 1000, 1000 };
	uint8_t	labels[3] = { 0, 1, 2 };
	float	p[9], dl[9];
	double	loss;

	loss = softmax_xent_forward(p, l, labels, 3, 3);
	assert_true(fabs(loss - (1000.0 + log(3.0))) < 1e-3);
	for (int i = 0; i < 9; i++)
		assert_true(isfinite(p[i]));
	assert_true(p[0] == 1.0f && p[1] == 0.0f && p[2] == 0.0f);
	for (int i = 6; i < 9; i++)
		assert_true(fabsf(p[i] - 1.0f / 3.0f) < 1e-6f);
	softmax_xent_backward(dl, p, labels, 3, 3, 1.0f);
	assert_true(dl[0] == 0.0f && dl[4] == -1.0f && dl[3] == 1.0f);
	assert_true(fabsf(dl[8] + 2.0f / 3.0f) < 1e-6f);
}

static void
test_argmax_correct(void **state)
{
	float	l[12] = { 0.1f, 0.9f, 0.3f,  -1, -2, -3,
			  5, 6, 7,  0.2f, 0.2f, 0.1f };
	uint8_t	labels[4] = { 1, 0, 1, 2 };

	assert_int_equal(argmax_correct(l, labels, 4, 3), 2);
	assert_int_equal(argmax_correct(l, labels, 2, 3), 2);
	labels[2] = 2;
	assert_int_equal(argmax_correct(l, labels, 4, 3), 3);
}

static void
test_linear_accumulate(void **state)
{
	enum { B = 6, IN = 9, OUT = 5 };
	float	x[B * IN], w[OUT * IN], dy[B * OUT];
	float	dx[B * IN], dx1[B * IN], dw[OUT * IN] = { 0 }, db[OUT] = { 0 };
	float	dw1[OUT * IN], db1[OUT];

	tk_fill(x, NULL, B * IN);
	tk_fill(w, NULL, OUT * IN);
	tk_fill(dy, NULL, B * OUT);
	for (int i = 0; i < B * IN; i++)
		dx[i] = NAN;
	linear_backward(dx, dw, db, dy, x, w, B, IN, OUT);
	memcpy(dx1, dx, sizeof dx);
	memcpy(dw1, dw, sizeof dw);
	memcpy(db1, db, sizeof db);
	for (int i = 0; i < B * IN; i++)
		dx[i] = NAN;
	linear_backward(dx, dw, db, dy, x, w, B, IN, OUT);
	assert_memory_equal(dx, dx1, sizeof dx);
	for (int i = 0; i < OUT * IN; i++)
		assert_true(tk_rel(dw[i], 2.0 * dw1[i]) < 1e-6);
	for (int i = 0; i < OUT; i++)
		assert_true(tk_rel(db[i], 2.0 * db1[i]) < 1e-6);
	linear_backward(NULL, dw, NULL, dy, x, w, B, IN, OUT);
	for (int i = 0; i < OUT * IN; i++)
		assert_true(tk_rel(dw[i], 3.0 * dw1[i]) < 1e-6);
}

/* Input pixel (c, iy, ix) of image n, or 0 in the padding. */
static double
ref_pixel(const struct tk_ctx *c, int n, int ch, int iy, int ix)
{
	if (iy < 0 || iy >= c->H || ix < 0 || ix >= c->W)
		return 0.0;
	return c->x[((n * c->C + ch) * c->H + iy) * c->W + ix];
}

static void
ref_conv(double *y, const struct tk_ctx *c)
{
	int	OH = c->H + 2 * c->pad - c->kh + 1;
	int	OW = c->W + 2 * c->pad - c->kw + 1;
	int	CKK = c->C * c->kh * c->kw;

	for (int n = 0; n < c->B; n++)
	for (int k = 0; k < c->K; k++)
	for (int oy = 0; oy < OH; oy++)
	for (int ox = 0; ox < OW; ox++) {
		double	s = c->b[k];

		for (int ch = 0; ch < c->C; ch++)
		for (int i = 0; i < c->kh; i++)
		for (int j = 0; j < c->kw; j++) {
			s += c->w[k * CKK + (ch * c->kh + i) * c->kw + j] *
			    ref_pixel(c, n, ch, oy + i - c->pad,
			    ox + j - c->pad);
		}
		y[((n * c->K + k) * OH + oy) * OW + ox] = s;
	}
}

static double
obj_conv(const void *v)
{
	const struct tk_ctx	*c = v;
	int			 OH = c->H + 2 * c->pad - c->kh + 1;
	int			 OW = c->W + 2 * c->pad - c->kw + 1;
	int			 n = c->B * c->K * OH * OW;
	double			 y[TK_MAX], L = 0.0;

	ref_conv(y, c);
	for (int i = 0; i < n; i++)
		L += y[i] * c->r[i];
	return L;
}

static void
test_im2col(void **state)
{
	enum { C = 2, H = 4, W = 5, KH = 3, KW = 2, CMAX = C * KH * KW * 64 };
	float		x[C * H * W], cols[CMAX], c2[CMAX], back[C * H * W];
	double		xd[C * H * W];
	struct tk_ctx	c = { .x = xd, .B = 1, .C = C, .H = H, .W = W };

	for (int pad = 0; pad <= 2; pad++) {
		int	OH = H + 2 * pad - KH + 1, OW = W + 2 * pad - KW + 1;
		size_t	nc = conv2d_workspace(C, H, W, KH, KW, pad);
		double	lhs = 0.0, rhs = 0.0;

		assert_true(nc == (size_t)C * KH * KW * OH * OW && nc <= CMAX);
		tk_fill(x, xd, C * H * W);
		tk_fill(c2, NULL, nc);
		im2col(cols, x, C, H, W, KH, KW, pad);
		for (int ch = 0; ch < C; ch++)
		for (int i = 0; i < KH; i++)
		for (int j = 0; j < KW; j++)
		for (int oy = 0; oy < OH; oy++)
		for (int ox = 0; ox < OW; ox++) {
			size_t	at = (((size_t)(ch * KH + i) * KW + j) * OH +
			    oy) * OW + ox;

			assert_true(cols[at] == ref_pixel(&c, 0, ch,
			    oy + i - pad, ox + j - pad));
		}
		/* col2im is the adjoint: <col2im(c2), x> == <c2, im2col(x)>. */
		col2im(back, c2, C, H, W, KH, KW, pad);
		for (int i = 0; i < C * H * W; i++)
			lhs += (double)back[i] * x[i];
		for (size_t i = 0; i < nc; i++)
			rhs += (double)c2[i] * cols[i];
		assert_true(tk_rel(lhs, rhs) < 1e-5);
	}
}

/* Shapes shared by the conv tests: B 2, C 3, 5x6 images, K 4. */
enum { CV_B = 2, CV_C = 3, CV_H = 5, CV_W = 6, CV_K = 4, CV_Y = 512,
    CV_X = CV_B * CV_C * CV_H * CV_W, CV_WS = 1280 };

static void
test_conv_gradcheck(void **state)
{
	static const int	cfg[2][3] = { { 3, 3, 0 }, { 3, 2, 2 } };
	float			x[CV_X], w[CV_K * CV_C * 9], b[CV_K];
	float			r[CV_Y], y[CV_Y], ws[CV_WS], dx[CV_X];
	double			xd[CV_X], wd[CV_K * CV_C * 9], bd[CV_K];
	double			rd[CV_Y], yd[CV_Y], worst = 0.0;

	for (int t = 0; t < 2; t++) {
		struct tk_ctx	c = { .x = xd, .w = wd, .b = bd, .r = rd,
				    .B = CV_B, .C = CV_C, .H = CV_H, .W = CV_W,
				    .K = CV_K, .kh = cfg[t][0], .kw = cfg[t][1],
				    .pad = cfg[t][2] };
		int		kk = c.kh * c.kw, pad = c.pad;
		int		ny = CV_B * CV_K * (CV_H + 2 * pad - c.kh + 1) *
				    (CV_W + 2 * pad - c.kw + 1);
		float		dw[CV_K * CV_C * 9] = { 0 }, db[CV_K] = { 0 };

		assert_true(ny <= CV_Y && conv2d_workspace(CV_C, CV_H, CV_W,
		    c.kh, c.kw, pad) <= CV_WS);
		tk_fill(x, xd, CV_X);
		tk_fill(w, wd, CV_K * CV_C * kk);
		tk_fill(b, bd, CV_K);
		tk_fill(r, rd, ny);
		conv2d_forward(y, x, w, b, ws, CV_B, CV_C, CV_H, CV_W, CV_K,
		    c.kh, c.kw, pad);
		ref_conv(yd, &c);
		tk_compare("conv y", y, yd, ny, 1e-4);
		conv2d_backward(dx, dw, db, r, x, w, ws, CV_B, CV_C, CV_H,
		    CV_W, CV_K, c.kh, c.kw, pad);
		worst = fmax(worst, tk_gradcheck("conv dx", dx, obj_conv, &c,
		    xd, CV_X));
		worst = fmax(worst, tk_gradcheck("conv dw", dw, obj_conv, &c,
		    wd, CV_K * CV_C * kk));
		worst = fmax(worst, tk_gradcheck("conv db", db, obj_conv, &c,
		    bd, CV_K));
	}
	tk_report("conv2d", worst);
}

static void
test_conv_accumulate(void **state)
{
	enum { KH = 3, KW = 3, PAD = 1, NY = CV_B * CV_K * CV_H * CV_W };
	float	x[CV_X], w[CV_K * CV_C * KH * KW], dy[NY], ws[CV_WS];
	float	dx[CV_X], dx1[CV_X], dw[CV_K * CV_C * KH * KW] = { 0 };
	float	dw1[CV_K * CV_C * KH * KW], db[CV_K] = { 0 }, db1[CV_K];

	assert_true(conv2d_workspace(CV_C, CV_H, CV_W, KH, KW, PAD) <= CV_WS);
	tk_fill(x, NULL, CV_X);
	tk_fill(w, NULL, CV_K * CV_C * KH * KW);
	tk_fill(dy, NULL, NY);
	for (int i = 0; i < CV_X; i++)
		dx[i] = NAN;
	for (int i = 0; i < CV_WS; i++)
		ws[i] = NAN;
	conv2d_backward(dx, dw, db, dy, x, w, ws, CV_B, CV_C, CV_H, CV_W,
	    CV_K, KH, KW, PAD);
	memcpy(dx1, dx, sizeof dx);
	memcpy(dw1, dw, sizeof dw);
	memcpy(db1, db, sizeof db);
	for (int i = 0; i < CV_X; i++)
		dx[i] = NAN;
	conv2d_backward(dx, dw, db, dy, x, w, ws, CV_B, CV_C, CV_H, CV_W,
	    CV_K, KH, KW, PAD);
	assert_memory_equal(dx, dx1, sizeof dx);
	for (int i = 0; i < CV_K * CV_C * KH * KW; i++)
		assert_true(tk_rel(dw[i], 2.0 * dw1[i]) < 1e-6);
	for (int i = 0; i < CV_K; i++)
		assert_true(tk_rel(db[i], 2.0 * db1[i]) < 1e-6);
}

static double
obj_pool(const void *v)
{
	const struct tk_ctx	*c = v;
	int			 OH = c->H / 2, OW = c->W / 2;
	double			 L = 0.0;

	for (int q = 0; q < c->B * c->C; q++)
	for (int oy = 0; oy < OH; oy++)
	for (int ox = 0; ox < OW; ox++) {
		const double	*p = c->x + (q * c->H + 2 * oy) * c->W + 2 * ox;
		double		 m = fmax(fmax(p[0], p[1]),
				     fmax(p[c->W], p[c->W + 1]));

		L += m * c->r[(q * OH + oy) * OW + ox];
	}
	return L;
}

static void
test_maxpool_gradcheck(void **state)
{
	enum { B = 2, C = 2, H = 4, W = 6, N = B * C * H * W, NO = N / 4 };
	float		x[N], y[NO], r[NO], dx[N];
	double		xd[N], rd[NO];
	int32_t		am[NO];
	struct tk_ctx	c = { .x = xd, .r = rd, .B = B, .C = C, .H = H,
			    .W = W };

	/* 37 is prime to 96, so the values are distinct and 0.05 apart. */
	for (int i = 0; i < N; i++) {
		x[i] = (float)((i * 37) % N) * 0.05f - 2.0f;
		xd[i] = x[i];
	}
	tk_fill(r, rd, NO);
	maxpool2_forward(y, am, x, B, C, H, W);
	for (int o = 0; o < NO; o++) {
		int	q = o / (NO / (B * C)), a = am[o];
		int	oy = o % (NO / (B * C)) / (W / 2), ox = o % (W / 2);

		assert_true(a / W / 2 == oy && a % W / 2 == ox);
		assert_true(y[o] == x[q * H * W + a]);
	}
	for (int i = 0; i < N; i++)
		dx[i] = NAN;
	maxpool2_backward(dx, r, am, B, C, H, W);
	tk_report("maxpool2", tk_gradcheck("maxpool dx", dx, obj_pool, &c,
	    xd, N));
}

static void
test_sgd_step(void **state)
{
	/* Worked by hand: lr 0.1, mu 0.9, wd 0.1; g1 = (0.5, 1), g2 = (-0.25,
	 * 0.5).  Step 1: g' = (0.6, 0.8) = m, p = (0.94, -2.08).  Step 2:
	 * g' = (-0.156, 0.292), m = (0.384, 1.012), p = (0.9016, -2.1812). */
	float	p[2] = { 1.0f, -2.0f }, m[2] = { 0 }, q[1] = { 1.0f };
	float	g1[2] = { 0.5f, 1.0f }, g2[2] = { -0.25f, 0.5f };

	sgd_step(p, g1, m, 2, 0.1f, 0.9f, 0.1f);
	assert_true(fabsf(p[0] - 0.94f) < 1e-6f && fabsf(p[1] + 2.08f) < 1e-6f);
	sgd_step(p, g2, m, 2, 0.1f, 0.9f, 0.1f);
	assert_true(fabsf(m[0] - 0.384f) < 1e-6f &&
	    fabsf(m[1] - 1.012f) < 1e-6f);
	assert_true(fabsf(p[0] - 0.9016f) < 1e-6f &&
	    fabsf(p[1] + 2.1812f) < 1e-6f);

	/* Without momentum (m NULL): 1 -> 0.94 -> 0.94 + 0.1 * 0.156. */
	sgd_step(q, g1, NULL, 1, 0.1f, 0.0f, 0.1f);
	assert_true(fabsf(q[0] - 0.94f) < 1e-6f);
	sgd_step(q, g2, NULL, 1, 0.1f, 0.0f, 0.1f);
	assert_true(fabsf(q[0] - 0.9556f) < 1e-6f);
}

static void
test_adamw_step(void **state)
{
	/*
	 * Element 0 sees a constant gradient 0.5, so mhat = 0.5 and vhat =
	 * 0.25 at every t and each step is p = p (1 - lr wd) - lr 0.5 /
	 * (0.5 + eps): 1 -> 0.9890000002 -> 0.9780110004 -> 0.9670329896.
	 * Element 1 has a changing gradient and is checked against the
	 * formula in double.
	 */
	const double	want0[3] = { 0.9890000002, 0.9780110004,
			    0.9670329896 };
	const float	gs[3] = { 0.3f, -0.7f, 0.2f };
	const double	lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-8, wd = 0.1;
	float		p[2] = { 1.0f, -0.5f }, m[2] = { 0 }, v[2] = { 0 };
	double		p1 = -0.5, m1 = 0.0, v1 = 0.0;

	for (int t = 1; t <= 3; t++) {
		float	g[2] = { 0.5f, gs[t - 1] };
		double	mh, vh;

		adamw_step(NULL, p, g, m, v, 2, lr, b1, b2, eps, wd, t);
		m1 = b1 * m1 + (1 - b1) * g[1];
		v1 = b2 * v1 + (1 - b2) * g[1] * g[1];
		mh = m1 / (1 - pow(b1, t));
		vh = v1 / (1 - pow(b2, t));
		p1 -= lr * (mh / (sqrt(vh) + eps) + wd * p1);
		assert_true(fabs(p[0] - want0[t - 1]) < 1e-6);
		assert_true(fabs(p[1] - p1) < 1e-6);
	}
}

/*
 * Both optimizers over 37 elements (two full spans and a tail), three steps
 * with changing gradients, against their formulas in double.
 */
static void
test_optim_long(void **state)
{
	enum { N = 37 };
	const double	lr = 0.01, mu = 0.9, b1 = 0.9, b2 = 0.999, eps = 1e-8;
	const double	wd = 0.1;
	float		p[3][N], g[N], m[2][N] = { { 0 } }, v[N] = { 0 };
	double		pd[3][N], md[2][N] = { { 0 } }, vd[N] = { 0 };

	tk_fill(p[0], pd[0], N);
	memcpy(p[1], p[0], sizeof p[0]);
	memcpy(p[2], p[0], sizeof p[0]);
	memcpy(pd[1], pd[0], sizeof pd[0]);
	memcpy(pd[2], pd[0], sizeof pd[0]);
	for (int t = 1; t <= 3; t++) {
		tk_fill(g, NULL, N);
		sgd_step(p[0], g, NULL, N, lr, 0.0f, wd);
		sgd_step(p[1], g, m[0], N, lr, mu, wd);
		adamw_step(NULL, p[2], g, m[1], v, N, lr, b1, b2, eps, wd, t);
		for (int i = 0; i < N; i++) {
			double	mh, vh;

			pd[0][i] -= lr * (g[i] + wd * pd[0][i]);
			md[0][i] = mu * md[0][i] + g[i] + wd * pd[1][i];
			pd[1][i] -= lr * md[0][i];
			md[1][i] = b1 * md[1][i] + (1 - b1) * g[i];
			vd[i] = b2 * vd[i] + (1 - b2) * g[i] * g[i];
			mh = md[1][i] / (1 - pow(b1, t));
			vh = vd[i] / (1 - pow(b2, t));
			pd[2][i] -= lr * (mh / (sqrt(vh) + eps) +
			    wd * pd[2][i]);
		}
		for (int k = 0; k < 3; k++) {
			for (int i = 0; i < N; i++)
				assert_true(fabs(p[k][i] - pd[k][i]) < 1e-6);
		}
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_linear_gradcheck),
		cmocka_unit_test(test_linear_accumulate),
		cmocka_unit_test(test_relu_gradcheck),
		cmocka_unit_test(test_xent_gradcheck),
		cmocka_unit_test(test_xent_stable),
		cmocka_unit_test(test_argmax_correct),
		cmocka_unit_test(test_im2col),
		cmocka_unit_test(test_conv_gradcheck),
		cmocka_unit_test(test_conv_accumulate),
		cmocka_unit_test(test_maxpool_gradcheck),
		cmocka_unit_test(test_sgd_step),
		cmocka_unit_test(test_adamw_step),
		cmocka_unit_test(test_optim_long),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
