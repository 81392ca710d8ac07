/*
 * tokenwise.c: the per-token layers of the transformer (transformer.h):
 * the token and position embedding, LayerNorm, GELU and the residual add.
 * Each is one pass over its rows, cut into parts of whole rows, or of
 * whole columns where a gradient sums over the rows (the embeddings',
 * LayerNorm's weight and bias): a part adds its columns' rows in order,
 * so the sums are the serial loop's on any number of threads.  LayerNorm
 * takes its statistics in double so that wide rows keep float32's
 * precision.
 */
#include <math.h>
#include <string.h>

#include "kernels/cpu/transformer.h"
#include "kernels/cpu/parts-internal.h"
#include "kernels/cpu/vmath-internal.h"

/* Columns of a part that sums over rows: a cache line's worth at least,
 * and enough rows' worth of work. */
#define TOK_COLS	64

/* Parts of N rows of C floats. */
static int
tok_row_parts(int N, int C)
{
	return kparts((size_t)N * C, KPARTS_GRAIN);
}

/* Parts of C columns summed over N rows. */
static int
tok_col_parts(int N, int C)
{
	return kparts_cols((size_t)N, (size_t)C, TOK_COLS);
}

struct tok_embed {
	float		*out, *dwte, *dwpe;
	const float	*wte, *wpe, *dout;
	const int32_t	*tok;
	int		 N, T, C, parts;
};

static void
embed_fwd_part(void *arg, int part, int thread)
{
	const struct tok_embed *e = arg;
	int	 n1 = (int)kpart_at(e->N, e->parts, part + 1);

	(void)thread;
	for (int n = (int)kpart_at(e->N, e->parts, part); n < n1; n++) {
		float	*o = e->out + (size_t)n * e->C;
		const float *w = e->wte + (size_t)e->tok[n] * e->C;
		const float *p = e->wpe + (size_t)(n % e->T) * e->C;

		for (int c = 0; c < e->C; c++)
			o[c] = w[c] + p[c];
	}
}

void
embed_forward(struct pool *pool, float *out, const int32_t *tok,
    const float *wte, const float *wpe, int B, int T, int C)
{
	struct tok_embed e = { .out = out, .tok = tok, .wte = wte, .wpe = wpe,
	    .N = B * T, .T = T, .C = C, .parts = tok_row_parts(B * T, C) };

	pool_run(pool, e.parts, embed_fwd_part, &e);
}

/* Columns [c0, c1) of every row, rows in order: tokens that repeat add
 * to one row of dwte, in the order the serial loop adds them. */
static void
embed_bwd_part(void *arg, int part, int thread)
{
	const struct tok_embed *e = arg;
	int	 c0 = (int)kpart_at(e->C, e->parts, part);
	int	 c1 = (int)kpart_at(e->C, e->parts, part + 1);

	(void)thread;
	for (int n = 0; n < e->N; n++) {
		const float *d = e->dout + (size_t)n * e->C;
		float	*w = e->dwte + (size_t)e->tok[n] * e->C;
		float	*p = e->dwpe + (size_t)(n % e->T) * e->C;

		for (int c = c0; c < c1; c++) {
			w[c] += d[c];
			p[c] += d[c];
		}
	}
}

void
embed_backward(struct pool *pool, float *dwte, float *dwpe,
    const float *dout, const int32_t *tok, int B, int T, int C)
{
	struct tok_embed e = { .dwte = dwte, .dwpe = dwpe, .dout = dout,
	    .tok = tok, .N = B * T, .T = T, .C = C,
	    .parts = tok_col_parts(B * T, C) };

	pool_run(pool, e.parts, embed_bwd_part, &e);
}

struct tok_ln {
	float		*out, *mean, *rstd, *dx, *dw, *db;
	const float	*x, *w, *b, *dout, *cmean, *crstd;
	int		 N, C, row_parts, col_parts;
};

static void
ln_fwd_part(void *arg, int part, int thread)
{
	const struct tok_ln *l = arg;
	int	 C = l->C, n1 = (int)kpart_at(l->N, l->row_parts, part + 1);

	(void)thread;
	for (int n = (int)kpart_at(l->N, l->row_parts, part); n < n1; n++) {
		const float *xr = l->x + (size_t)n * C;
		float	*o = l->out + (size_t)n * C;
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
			o[c] = (xr[c] - fm) * fs * l->w[c] + l->b[c];
		l->mean[n] = fm;
		l->rstd[n] = fs;
	}
}

void
layernorm_forward(struct pool *pool, float *out, float *mean, float *rstd,
    const float *x, const float *w, const float *b, int N, int C)
{
	struct tok_ln l = { .out = out, .mean = mean, .rstd = rstd, .x = x,
	    .w = w, .b = b, .N = N, .C = C, .row_parts = tok_row_parts(N, C) };

	pool_run(pool, l.row_parts, ln_fwd_part, &l);
}

/* The input gradient of rows of a part. */
static void
ln_bwd_rows(void *arg, int part, int thread)
{
	const struct tok_ln *l = arg;
	int	 C = l->C, n1 = (int)kpart_at(l->N, l->row_parts, part + 1);

	(void)thread;
	for (int n = (int)kpart_at(l->N, l->row_parts, part); n < n1; n++) {
		const float *xr = l->x + (size_t)n * C, *d = l->dout +
		    (size_t)n * C;
		float	*dxr = l->dx + (size_t)n * C;
		float	 m = l->cmean[n], s = l->crstd[n], dm, dnm;
		double	 sum = 0, sumn = 0;

		/* The mean of dnorm and of dnorm * norm, where dnorm is the
		 * gradient at the normalised value. */
		for (int c = 0; c < C; c++) {
			float norm = (xr[c] - m) * s, dn = l->w[c] * d[c];

			sum += dn;
			sumn += dn * norm;
		}
		dm = (float)(sum / C);
		dnm = (float)(sumn / C);
		for (int c = 0; c < C; c++) {
			float norm = (xr[c] - m) * s, dn = l->w[c] * d[c];

			dxr[c] += (dn - dm - norm * dnm) * s;
		}
	}
}

/* The weight's and the bias's gradients over columns of a part, rows in
 * order. */
static void
ln_bwd_cols(void *arg, int part, int thread)
{
	const struct tok_ln *l = arg;
	int	 C = l->C, c0 = (int)kpart_at(C, l->col_parts, part);
	int	 c1 = (int)kpart_at(C, l->col_parts, part + 1);

	(void)thread;
	for (int n = 0; n < l->N; n++) {
		const float *xr = l->x + (size_t)n * C, *d = l->dout +
		    (size_t)n * C;
		float	 m = l->cmean[n], s = l->crstd[n];

		for (int c = c0; c < c1; c++) {
			float norm = (xr[c] - m) * s;

			l->db[c] += d[c];
			l->dw[c] += norm * d[c];
		}
	}
}

void
layernorm_backward(struct pool *pool, float *dx, float *dw, float *db,
    const float *dout, const float *x, const float *w, const float *mean,
    const float *rstd, int N, int C)
{
	struct tok_ln l = { .dx = dx, .dw = dw, .db = db, .dout = dout,
	    .x = x, .w = w, .cmean = mean, .crstd = rstd, .N = N, .C = C,
	    .row_parts = tok_row_parts(N, C), .col_parts = tok_col_parts(N, C) };
	struct ktask t[2] = {
		{ l.row_parts, ln_bwd_rows, &l },
		{ l.col_parts, ln_bwd_cols, &l },
	};

	kparts_run(pool, t, 2);
}

struct tok_vec {
	float		*y, *dx, *da, *db;
	const float	*x, *a, *b, *dy;
	size_t		 n;
	int		 parts;
	int		 add;		/* grad_pass: add, not copy */
};

/* Part i's span [*lo, *hi) of v->n floats. */
static void
tok_span(const struct tok_vec *v, int part, size_t *lo, size_t *hi)
{
	*lo = kpart_at(v->n, v->parts, part);
	*hi = kpart_at(v->n, v->parts, part + 1);
}

/* An element-wise pass over v->n floats, in parts of whole spans. */
static void
tok_run(struct pool *pool, struct tok_vec *v, pool_fn *fn)
{
	v->parts = kparts(v->n, KPARTS_GRAIN);
	pool_run(pool, v->parts, fn, v);
}

static void
gelu_fwd_part(void *arg, int part, int thread)
{
	const struct tok_vec *v = arg;
	size_t	 lo, hi;

	(void)thread;
	tok_span(v, part, &lo, &hi);
	gelu_span(v->y + lo, v->x + lo, hi - lo);
}

void
gelu_forward(struct pool *pool, float *y, const float *x, size_t n)
{
	struct tok_vec v = { .y = y, .x = x, .n = n };

	tok_run(pool, &v, gelu_fwd_part);
}

static void
gelu_bwd_part(void *arg, int part, int thread)
{
	const struct tok_vec *v = arg;
	float	*restrict dx = v->dx;
	const float *restrict x = v->x, *restrict dy = v->dy;
	size_t	 i, hi;

	(void)thread;
	tok_span(v, part, &i, &hi);
	for (; i + VMATH_BLOCK <= hi; i += VMATH_BLOCK)
		for (int j = 0; j < VMATH_BLOCK; j++)
			dx[i + j] += gelu_grad(x[i + j], dy[i + j]);
	for (; i < hi; i++)
		dx[i] += gelu_grad(x[i], dy[i]);
}

void
gelu_backward(struct pool *pool, float *dx, const float *x, const float *dy,
    size_t n)
{
	struct tok_vec v = { .dx = dx, .x = x, .dy = dy, .n = n };

	tok_run(pool, &v, gelu_bwd_part);
}

static void
residual_fwd_part(void *arg, int part, int thread)
{
	const struct tok_vec *v = arg;
	size_t	 i, hi;

	(void)thread;
	tok_span(v, part, &i, &hi);
	for (; i < hi; i++)
		v->y[i] = v->a[i] + v->b[i];
}

void
residual_forward(struct pool *pool, float *out, const float *a,
    const float *b, size_t n)
{
	struct tok_vec v = { .y = out, .a = a, .b = b, .n = n };

	tok_run(pool, &v, residual_fwd_part);
}

/* dst[lo, hi) += src, or = src. */
static void
tok_pass(float *dst, const float *src, size_t lo, size_t hi, int add)
{
	if (!add) {
		memcpy(dst + lo, src + lo, (hi - lo) * sizeof(float));
		return;
	}
	for (size_t i = lo; i < hi; i++)
		dst[i] += src[i];
}

static void
residual_bwd_part(void *arg, int part, int thread)
{
	const struct tok_vec *v = arg;
	size_t	 lo, hi;

	(void)thread;
	tok_span(v, part, &lo, &hi);
	if (v->da != NULL)
		tok_pass(v->da, v->dy, lo, hi, 1);
	if (v->db != NULL)
		tok_pass(v->db, v->dy, lo, hi, 1);
}

void
residual_backward(struct pool *pool, float *da, float *db, const float *dout,
    size_t n)
{
	struct tok_vec v = { .da = da, .db = db, .dy = dout, .n = n };

	tok_run(pool, &v, residual_bwd_part);
}

static void
grad_pass_part(void *arg, int part, int thread)
{
	const struct tok_vec *v = arg;
	size_t	 lo, hi;

	(void)thread;
	tok_span(v, part, &lo, &hi);
	tok_pass(v->da, v->dy, lo, hi, v->add);
}

void
grad_pass(struct pool *pool, float *dst, const float *src, size_t n, int add)
{
	struct tok_vec v = { .da = dst, .dy = src, .n = n, .add = add };

	tok_run(pool, &v, grad_pass_part);
}
