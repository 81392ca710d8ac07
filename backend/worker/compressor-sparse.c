/*
 * compressor-sparse.c: the pipeline of the sparse methods (topk,
 * threshold; Deep Gradient Compression, Lin et al., ICLR 2018), each of
 * which brings only its selection.  Per step:
 *   clip	(only with error feedback, DGC 3.2) the local gradient's norm to
 *		CLIP_RATIO times the running mean of past (clipped) norms; the
 *		first step only sets the mean, so steady gradients pass as they
 *		are and only a spike is scaled down before it is banked
 *   bank	momentum correction (DGC 3.3): u = m*u + g, v += u;
 *		error feedback alone: v += g; without it: v = g
 *   select	about k of the largest |v|, k = ceil(d n): the method's own;
 *		d warms up (DGC 3.4) from compression.warmup_density (DGC's
 *		25%) to the target, falling exponentially over
 *		warmup_epochs or warmup_steps, whichever ends first; a
 *		step where all of v in fp16 is smaller than k values and
 *		their gaps sends that instead (only a warm-up that starts
 *		above about 2/3 has one)
 *   send	v[idx]; the residual keeps only what fp16 rounding lost
 *		(v[idx] -= sent, exact by Sterbenz), and u[idx] = 0 (momentum
 *		factor masking)
 * Wire: the header (method byte, scale exponent), then the sparse format
 * of kernels/cpu/compress.h.
 */
#include <math.h>
#include <string.h>

#include "lib/xmalloc.h"
#include "kernels/cpu/compress.h"
#include "backend/worker/compressor-internal.h"

#define COMP_CLIP_RATIO	4.0		/* 4x the running mean is a spike */
#define COMP_CLIP_KEEP	0.9		/* weight of the past in that mean */
#define COMP_SUM_CHUNK	4096		/* float partial sums, then double */

static inline void
comp_bank_span(float *restrict u, float *restrict v, const float *restrict g,
    size_t n, float m, float s, int mc, int ef)
{
	if (mc)
		for (size_t i = 0; i < n; i++) {
			u[i] = m * u[i] + s * g[i];
			v[i] += u[i];
		}
	else if (ef)
		for (size_t i = 0; i < n; i++)
			v[i] += s * g[i];
	else
		for (size_t i = 0; i < n; i++)
			v[i] = s * g[i];
}

static void
comp_bank(struct compressor *c, const float *g, float s)
{
	size_t	i;

	for (i = 0; i + COMP_SPAN <= c->n; i += COMP_SPAN)
		comp_bank_span(c->mc ? c->u + i : NULL, c->v + i, g + i,
		    COMP_SPAN, c->momentum, s, c->mc, c->ef);
	comp_bank_span(c->mc ? c->u + i : NULL, c->v + i, g + i, c->n - i,
	    c->momentum, s, c->mc, c->ef);
}

static double
comp_sumsq(const float *g, size_t n)
{
	double	total = 0;
	size_t	i = 0;

	while (i + COMP_SPAN <= n) {
		float	acc[COMP_SPAN] = { 0 }, sum = 0;
		size_t	end = i + COMP_SUM_CHUNK < n ? i + COMP_SUM_CHUNK : n;

		for (; i + COMP_SPAN <= end; i += COMP_SPAN)
			for (size_t j = 0; j < COMP_SPAN; j++)
				acc[j] += g[i + j] * g[i + j];
		for (size_t j = 0; j < COMP_SPAN; j++)
			sum += acc[j];
		total += sum;
	}
	for (; i < n; i++)
		total += (double)g[i] * g[i];
	return total;
}

/* Local gradient clipping: the factor to scale g by (see the top). */
static float
comp_clip(struct compressor *c, const float *g)
{
	double	norm = sqrt(comp_sumsq(g, c->n)), bound;
	float	s = 1.0f;

	if (!isfinite(norm))
		return s;
	bound = COMP_CLIP_RATIO * c->clip_mean;
	if (c->clip_mean > 0 && norm > bound) {
		s = (float)(bound / norm);
		norm = bound;
	}
	c->clip_mean = c->clip_mean > 0 ? COMP_CLIP_KEEP * c->clip_mean +
	    (1 - COMP_CLIP_KEEP) * norm : norm;
	return s;
}

/* Whether a warm-up is set at all. */
static int
comp_warms(const struct compressor *c)
{
	return c->target < c->warm_start && (c->warmup > 0 ||
	    c->warmup_steps > 0);
}

/* The density of this step: warm_start falling exponentially to the
 * target, along the epochs or the steps, whichever is further. */
static double
comp_warm_density(const struct compressor *c, double epoch)
{
	double	p = 0, d;

	if (!comp_warms(c))
		return c->target;
	if (c->warmup > 0 && epoch > 0)
		p = epoch / c->warmup;
	if (c->warmup_steps > 0 && (double)c->steps / c->warmup_steps > p)
		p = (double)c->steps / c->warmup_steps;
	if (p >= 1)
		return c->target;
	d = c->warm_start * pow(c->target / c->warm_start, p);
	return d < c->target ? c->target : d > c->warm_start ? c->warm_start : d;
}

static size_t
comp_k(const struct compressor *c, double d)
{
	double	k = ceil(d * (double)c->n);

	return k < 1 ? 1 : k > (double)c->n ? c->n : (size_t)k;
}

/* Whether k values cost at least as much as all n in fp16: each sent
 * value is 2 bytes and a gap of about n / k, 1 to 3 LEB128 bytes. */
static int
comp_dense_pays(const struct compressor *c, size_t k)
{
	double	gap = (double)c->n / (double)k;
	double	each = 2.0 + (gap < 128 ? 1 : gap < 16384 ? 2 : 3);

	return c->warm_fp16 && each * (double)k >= 2.0 * (double)c->n;
}

/* The largest k of any step (the warm-up's start, or the target), the
 * selection's indices, the residual and the velocity. */
void
comp_sparse_setup(struct compressor *c)
{
	c->kmax = comp_k(c, comp_warms(c) ? c->warm_start : c->target);
	/* Dense fp16 steps only where the densest step would pay for it. */
	c->warm_fp16 = c->warm_fp16 && comp_dense_pays(c, c->kmax);
	c->idx = xmalloc(compress_idx_cap(c->n, c->kmax) * sizeof *c->idx);
	c->v = xmalloc_aligned(c->n * sizeof *c->v);
	memset(c->v, 0, c->n * sizeof *c->v);
	if (c->mc) {
		c->u = xmalloc_aligned(c->n * sizeof *c->u);
		memset(c->u, 0, c->n * sizeof *c->u);
	}
}

size_t
comp_sparse_bound(const struct compressor *c)
{
	size_t	sparse = COMP_HEADER + compress_sparse_bound(c->n, c->kmax);

	return c->warm_fp16 && sparse < COMP_HEADER + 2 * c->n ?
	    COMP_HEADER + 2 * c->n : sparse;
}

/* A step of the warm-up sent whole in fp16 (its method byte's top bit
 * set): what rounding lost stays in the residual, and the velocity is
 * masked everywhere, as if every index had been selected. */
static size_t
comp_dense_encode(struct compressor *c, uint8_t *out)
{
	int	e = comp_exponent(compress_absmax(c->v, NULL, c->n));
	float	scale = ldexpf(1.0f, e), inv = ldexpf(1.0f, -e);

	out[0] = (uint8_t)(c->ops->type.method | COMP_DENSE);
	out[1] = (uint8_t)(int8_t)e;
	compress_fp16_encode(out + COMP_HEADER, c->v, c->n, scale);
	for (size_t i = 0; c->ef && i < c->n; i++)
		c->v[i] -= compress_f32(compress_f16(c->v[i] * scale)) * inv;
	if (c->mc)
		memset(c->u, 0, c->n * sizeof *c->u);
	return COMP_HEADER + 2 * c->n;
}

size_t
comp_sparse_encode(struct compressor *c, const float *g, uint8_t *out)
{
	size_t	 k, cnt, len;
	float	 s = c->ef ? comp_clip(c, g) : 1.0f, scale, inv;
	int	 e;

	c->density = comp_warm_density(c, c->epoch);
	k = comp_k(c, c->density);
	comp_bank(c, g, s);
	if (comp_dense_pays(c, k)) {
		c->density = 1;
		return comp_dense_encode(c, out);
	}
	cnt = c->ops->select(c, k);
	e = comp_exponent(compress_absmax(c->v, c->idx, cnt));
	scale = ldexpf(1.0f, e);
	inv = ldexpf(1.0f, -e);
	out[0] = (uint8_t)c->ops->type.method;
	out[1] = (uint8_t)(int8_t)e;
	len = COMP_HEADER + compress_sparse_encode(out + COMP_HEADER, c->idx,
	    c->v, cnt, scale);
	for (size_t j = 0; c->ef && j < cnt; j++) {
		uint32_t i = c->idx[j];

		c->v[i] -= compress_f32(compress_f16(c->v[i] * scale)) * inv;
		if (c->mc)
			c->u[i] = 0;
	}
	return len;
}

int
comp_sparse_decode(const struct compressor *c, const uint8_t *p, size_t len,
    float *grad)
{
	float	scale;
	long	used;

	if (len == COMP_HEADER + 2 * c->n && c->warm_fp16 && len > 0 &&
	    p[0] == (c->ops->type.method | COMP_DENSE)) {
		uint8_t	hdr[COMP_HEADER] = { (uint8_t)c->ops->type.method, p[1] };

		if ((scale = comp_header(c, hdr, COMP_HEADER)) == 0)
			return -1;
		compress_fp16_decode_add(grad, p + COMP_HEADER, c->n, scale);
		return 0;
	}
	if ((scale = comp_header(c, p, len)) == 0)
		return -1;
	used = compress_sparse_decode_add(grad, c->n, p + COMP_HEADER,
	    len - COMP_HEADER, scale);
	return used >= 0 && (size_t)used == len - COMP_HEADER ? 0 : -1;
}
