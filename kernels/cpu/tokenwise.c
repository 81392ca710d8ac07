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

/* Columns of a part that sums over rows, at least: a page of a row, so
 * that a part reads whole pages (a narrow strip of every row's page is
 * more than the prefetchers follow). */
#define TOK_COLS	1024

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

		vadd_span(o, w, p, (size_t)e->C);
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
	size_t	 c0, c1;

	(void)thread;
	kpart_cols((size_t)e->C, e->parts, part, &c0, &c1);
	for (int n = 0; n < e->N; n++) {
		const float *d = e->dout + (size_t)n * e->C + c0;
		float	*w = e->dwte + (size_t)e->tok[n] * e->C + c0;
		float	*p = e->dwpe + (size_t)(n % e->T) * e->C + c0;

		vadd_span(w, w, d, c1 - c0);
		vadd_span(p, p, d, c1 - c0);
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

/* o = (x - m) s w + b over a row of C. */
VMATH_INLINE void
ln_norm_span(float *restrict o, const float *restrict x,
    const float *restrict w, const float *restrict b, float m, float s,
    int C)
{
	int	 c = 0;

	for (; c + VMATH_BLOCK <= C; c += VMATH_BLOCK)
		for (int k = 0; k < VMATH_BLOCK; k++)
			o[c + k] = (x[c + k] - m) * s * w[c + k] + b[c + k];
	for (; c < C; c++)
		o[c] = (x[c] - m) * s * w[c] + b[c];
}

VMATH_CLONES static void
ln_fwd_part(void *arg, int part, int thread)
{
	const struct tok_ln *l = arg;
	int	 C = l->C, n1 = (int)kpart_at(l->N, l->row_parts, part + 1);

	(void)thread;
	for (int n = (int)kpart_at(l->N, l->row_parts, part); n < n1; n++) {
		const float *xr = l->x + (size_t)n * C;
		double	 m = vsum_d(xr, (size_t)C) / C;
		double	 v = vsumsq_d(xr, m, (size_t)C) / C;
		float	 fm = (float)m;
		float	 fs = (float)(1.0 / sqrt(v + LAYERNORM_EPS));

		ln_norm_span(l->out + (size_t)n * C, xr, l->w, l->b, fm, fs, C);
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

/* One row's input gradient, added to dx. */
VMATH_INLINE void
ln_dx_row(float *restrict dx, const float *restrict x,
    const float *restrict d, const float *restrict w, float m, float s,
    int C)
{
	double	 acc[VMATH_BLOCK] = { 0 }, accn[VMATH_BLOCK] = { 0 };
	double	 sum = 0, sumn = 0;
	float	 dm, dnm;
	int	 c = 0;

	/* The mean of dnorm and of dnorm * norm, where dnorm is the
	 * gradient at the normalised value: lanes, then the lanes in order,
	 * then the tail. */
	for (; c + VMATH_BLOCK <= C; c += VMATH_BLOCK)
		for (int k = 0; k < VMATH_BLOCK; k++) {
			float norm = (x[c + k] - m) * s;
			float dn = w[c + k] * d[c + k];

			acc[k] += dn;
			accn[k] += dn * norm;
		}
	for (int k = 0; k < VMATH_BLOCK; k++) {
		sum += acc[k];
		sumn += accn[k];
	}
	for (; c < C; c++) {
		float norm = (x[c] - m) * s, dn = w[c] * d[c];

		sum += dn;
		sumn += dn * norm;
	}
	dm = (float)(sum / C);
	dnm = (float)(sumn / C);
	for (c = 0; c + VMATH_BLOCK <= C; c += VMATH_BLOCK)
		for (int k = 0; k < VMATH_BLOCK; k++) {
			float norm = (x[c + k] - m) * s;
			float dn = w[c + k] * d[c + k];

			dx[c + k] += (dn - dm - norm * dnm) * s;
		}
	for (; c < C; c++) {
		float norm = (x[c] - m) * s, dn = w[c] * d[c];

		dx[c] += (dn - dm - norm * dnm) * s;
	}
}

/* The input gradient of rows of a part. */
VMATH_CLONES static void
ln_bwd_rows(void *arg, int part, int thread)
{
	const struct tok_ln *l = arg;
	size_t	 C = (size_t)l->C;
	int	 n1 = (int)kpart_at(l->N, l->row_parts, part + 1);

	(void)thread;
	for (int n = (int)kpart_at(l->N, l->row_parts, part); n < n1; n++)
		ln_dx_row(l->dx + n * C, l->x + n * C, l->dout + n * C, l->w,
		    l->cmean[n], l->crstd[n], l->C);
}

/* One row's share of the weight's and the bias's gradients, columns
 * [0, n) of it. */
VMATH_INLINE void
ln_wb_span(float *restrict dw, float *restrict db, const float *restrict x,
    const float *restrict d, float m, float s, size_t n)
{
	size_t	 c = 0;

	for (; c + VMATH_BLOCK <= n; c += VMATH_BLOCK)
		for (int k = 0; k < VMATH_BLOCK; k++) {
			db[c + k] += d[c + k];
			dw[c + k] += (x[c + k] - m) * s * d[c + k];
		}
	for (; c < n; c++) {
		db[c] += d[c];
		dw[c] += (x[c] - m) * s * d[c];
	}
}

/* The weight's and the bias's gradients over columns of a part, rows in
 * order. */
VMATH_CLONES static void
ln_bwd_cols(void *arg, int part, int thread)
{
	const struct tok_ln *l = arg;
	size_t	 C = (size_t)l->C, c0, c1;

	(void)thread;
	kpart_cols(C, l->col_parts, part, &c0, &c1);
	for (int n = 0; n < l->N; n++)
		ln_wb_span(l->dw + c0, l->db + c0, l->x + n * C + c0,
		    l->dout + n * C + c0, l->cmean[n], l->crstd[n], c1 - c0);
}

void
layernorm_backward(struct pool *pool, float *dx, float *dw, float *db,
    const float *dout, const float *x, const float *w, const float *mean,
    const float *rstd, int N, int C)
{
	struct tok_ln l = { .dx = dx, .dw = dw, .db = db, .dout = dout,
	    .x = x, .w = w, .cmean = mean, .crstd = rstd, .N = N, .C = C,
	    .row_parts = tok_row_parts(N, C),
	    .col_parts = tok_col_parts(N, C) };
	/* The columns' few parts first, beside the rows' instead of
	 * after them. */
	struct ktask t[2] = {
		{ l.col_parts, ln_bwd_cols, &l },
		{ l.row_parts, ln_bwd_rows, &l },
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

VMATH_CLONES static void
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

/* dx += gelu'(x) dy over n floats. */
VMATH_INLINE void
gelu_bwd_span(float *restrict dx, const float *restrict x,
    const float *restrict dy, size_t n)
{
	size_t	 i = 0;

	for (; i + VMATH_BLOCK <= n; i += VMATH_BLOCK)
		for (int j = 0; j < VMATH_BLOCK; j++)
			dx[i + j] += gelu_grad(x[i + j], dy[i + j]);
	for (; i < n; i++)
		dx[i] += gelu_grad(x[i], dy[i]);
}

VMATH_CLONES static void
gelu_bwd_part(void *arg, int part, int thread)
{
	const struct tok_vec *v = arg;
	size_t	 lo, hi;

	(void)thread;
	tok_span(v, part, &lo, &hi);
	gelu_bwd_span(v->dx + lo, v->x + lo, v->dy + lo, hi - lo);
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
	vadd_span(v->y + i, v->a + i, v->b + i, hi - i);
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
	if (add)
		vadd_span(dst + lo, dst + lo, src + lo, hi - lo);
	else
		memcpy(dst + lo, src + lo, (hi - lo) * sizeof(float));
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
