/*
 * conv.c: stride-1 2-D convolution by im2col and GEMM, and 2x2 max-pool.
 *
 * For each image the input is unrolled into cols[C*kh*kw, OH*OW] (row
 * (c*kh + i)*kw + j holds x[c, oy+i-pad, ox+j-pad], zero outside the
 * image), so the forward pass is y_b[K, OH*OW] = w[K, C*kh*kw] * cols + b,
 * dw += dy_b * cols^T, and dx is col2im of w^T * dy_b.  One workspace of
 * C*kh*kw*OH*OW floats serves both directions: the backward pass uses it
 * first for cols (dw) and then for their gradient (dx).  Images are done
 * one after another in order, which keeps the accumulation into dw and db
 * deterministic.  The bias fill and the bias-gradient sums work in spans of
 * CONV_SPAN floats, since GCC's -O2 vectorises only loops whose trip count
 * is a known multiple of the vector width.
 */

#include <string.h>

#include <cblas.h>

#include "kernels/cpu/kernels.h"

#define CONV_SPAN	16

/* Every element of row[0..n) set to v. */
static void
conv_fill(float *row, float v, int n)
{
	int	p = 0;

	for (; p + CONV_SPAN <= n; p += CONV_SPAN) {
		for (int e = 0; e < CONV_SPAN; e++)
			row[p + e] = v;
	}
	for (; p < n; p++)
		row[p] = v;
}

/*
 * Sum of row[0..n), as CONV_SPAN interleaved partial sums added up at the
 * end: a fixed order, so deterministic, and one the compiler can vectorise.
 */
static float
conv_sum(const float *row, int n)
{
	float	acc[CONV_SPAN] = { 0 }, s = 0.0f;
	int	p = 0;

	for (; p + CONV_SPAN <= n; p += CONV_SPAN) {
		for (int e = 0; e < CONV_SPAN; e++)
			acc[e] += row[p + e];
	}
	for (int e = 0; e < CONV_SPAN; e++)
		s += acc[e];
	for (; p < n; p++)
		s += row[p];
	return s;
}

/*
 * Output columns ox whose input column ox + j - pad lies inside [0, W):
 * [*lo, *hi), empty when *lo == *hi.
 */
static void
conv_valid_span(int *lo, int *hi, int j, int W, int OW, int pad)
{
	int	a = pad - j, z = W + pad - j;

	if (a < 0)
		a = 0;
	if (z > OW)
		z = OW;
	if (z < a)
		z = a;
	*lo = a;
	*hi = z;
}

size_t
conv2d_workspace(int C, int H, int W, int kh, int kw, int pad)
{
	size_t	OH = (size_t)(H + 2 * pad - kh + 1);
	size_t	OW = (size_t)(W + 2 * pad - kw + 1);

	return (size_t)C * kh * kw * OH * OW;
}

/*
 * Geometry of one unrolled row: kernel tap (i, j) over an H x W plane
 * padded by pad, giving OH x OW outputs.
 */
struct conv_tap {
	int	i, j, H, W, OH, OW, pad;
};

/* Fill one cols row, dst[OH*OW], from the plane xc for tap t. */
static void
conv_im2col_row(float *restrict dst, const float *restrict xc,
    const struct conv_tap *t)
{
	int	lo, hi;

	conv_valid_span(&lo, &hi, t->j, t->W, t->OW, t->pad);
	for (int oy = 0; oy < t->OH; oy++) {
		float	*d = dst + (size_t)oy * t->OW;
		int	 iy = oy + t->i - t->pad;

		if (iy < 0 || iy >= t->H) {
			memset(d, 0, t->OW * sizeof *d);
			continue;
		}
		memset(d, 0, lo * sizeof *d);
		memcpy(d + lo, xc + (size_t)iy * t->W + lo + t->j - t->pad,
		    (hi - lo) * sizeof *d);
		memset(d + hi, 0, (t->OW - hi) * sizeof *d);
	}
}

/* Add one cols row, src[OH*OW], into the plane dc for tap t. */
static void
conv_col2im_row(float *restrict dc, const float *restrict src,
    const struct conv_tap *t)
{
	int	lo, hi;

	conv_valid_span(&lo, &hi, t->j, t->W, t->OW, t->pad);
	for (int oy = 0; oy < t->OH; oy++) {
		const float	*s = src + (size_t)oy * t->OW;
		float		*d;
		int		 iy = oy + t->i - t->pad;

		if (iy < 0 || iy >= t->H)
			continue;
		d = dc + (size_t)iy * t->W + t->j - t->pad;
		for (int ox = lo; ox < hi; ox++)
			d[ox] += s[ox];
	}
}

void
im2col(float *cols, const float *x, int C, int H, int W, int kh, int kw,
    int pad)
{
	struct conv_tap	t = { .H = H, .W = W, .pad = pad,
			    .OH = H + 2 * pad - kh + 1,
			    .OW = W + 2 * pad - kw + 1 };
	size_t		P = (size_t)t.OH * t.OW;

	for (int c = 0; c < C; c++) {
		for (t.i = 0; t.i < kh; t.i++) {
			for (t.j = 0; t.j < kw; t.j++) {
				conv_im2col_row(cols, x + (size_t)c * H * W,
				    &t);
				cols += P;
			}
		}
	}
}

void
col2im(float *dx, const float *cols, int C, int H, int W, int kh, int kw,
    int pad)
{
	struct conv_tap	t = { .H = H, .W = W, .pad = pad,
			    .OH = H + 2 * pad - kh + 1,
			    .OW = W + 2 * pad - kw + 1 };
	size_t		P = (size_t)t.OH * t.OW;

	memset(dx, 0, (size_t)C * H * W * sizeof *dx);
	for (int c = 0; c < C; c++) {
		for (t.i = 0; t.i < kh; t.i++) {
			for (t.j = 0; t.j < kw; t.j++) {
				conv_col2im_row(dx + (size_t)c * H * W, cols,
				    &t);
				cols += P;
			}
		}
	}
}

void
conv2d_forward(float *y, const float *x, const float *w, const float *b,
    float *ws, int B, int C, int H, int W, int K, int kh, int kw, int pad)
{
	int	OH = H + 2 * pad - kh + 1, OW = W + 2 * pad - kw + 1;
	int	P = OH * OW, CKK = C * kh * kw;

	for (int n = 0; n < B; n++) {
		float	*yb = y + (size_t)n * K * P;
		float	 beta = 0.0f;

		im2col(ws, x + (size_t)n * C * H * W, C, H, W, kh, kw, pad);
		if (b != NULL) {
			for (int k = 0; k < K; k++)
				conv_fill(yb + (size_t)k * P, b[k], P);
			beta = 1.0f;
		}
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, K, P,
		    CKK, 1.0f, w, CKK, ws, P, beta, yb, P);
	}
}

void
conv2d_backward(float *dx, float *dw, float *db, const float *dy,
    const float *x, const float *w, float *ws, int B, int C, int H, int W,
    int K, int kh, int kw, int pad)
{
	int	OH = H + 2 * pad - kh + 1, OW = W + 2 * pad - kw + 1;
	int	P = OH * OW, CKK = C * kh * kw;

	for (int n = 0; n < B; n++) {
		const float	*dyb = dy + (size_t)n * K * P;

		if (dw != NULL) {
			im2col(ws, x + (size_t)n * C * H * W, C, H, W, kh, kw,
			    pad);
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, K,
			    CKK, P, 1.0f, dyb, P, ws, P, 1.0f, dw, CKK);
		}
		if (db != NULL) {
			for (int k = 0; k < K; k++)
				db[k] += conv_sum(dyb + (size_t)k * P, P);
		}
		if (dx != NULL) {
			cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans,
			    CKK, P, K, 1.0f, w, CKK, dyb, P, 0.0f, ws, P);
			col2im(dx + (size_t)n * C * H * W, ws, C, H, W, kh, kw,
			    pad);
		}
	}
}

void
maxpool2_forward(float *y, int32_t *argmax, const float *x, int B, int C,
    int H, int W)
{
	int	OH = H / 2, OW = W / 2;

	for (size_t q = 0; q < (size_t)B * C; q++) {
		const float	*xp = x + q * H * W;
		float		*yp = y + q * OH * OW;
		int32_t		*ap = argmax + q * OH * OW;

		for (int oy = 0; oy < OH; oy++) {
			for (int ox = 0; ox < OW; ox++) {
				int32_t	at = 2 * oy * W + 2 * ox;
				int32_t	c[3] = { at + 1, at + W, at + W + 1 };
				int32_t	best = at;

				for (int e = 0; e < 3; e++) {
					if (xp[c[e]] > xp[best])
						best = c[e];
				}
				yp[oy * OW + ox] = xp[best];
				ap[oy * OW + ox] = best;
			}
		}
	}
}

void
maxpool2_backward(float *dx, const float *dy, const int32_t *argmax, int B,
    int C, int H, int W)
{
	size_t	plane = (size_t)H * W, out = (size_t)(H / 2) * (W / 2);

	memset(dx, 0, (size_t)B * C * plane * sizeof *dx);
	for (size_t q = 0; q < (size_t)B * C; q++) {
		float		*dp = dx + q * plane;
		const float	*gp = dy + q * out;
		const int32_t	*ap = argmax + q * out;

		for (size_t o = 0; o < out; o++)
			dp[ap[o]] += gp[o];
	}
}
