/*
 * compressor.c: the compressors of compressor.h, one const descriptor
 * each, and the state a rank keeps between steps (Deep Gradient
 * Compression, Lin et al., ICLR 2018).
 *
 * Wire, per rank:
 *   none		n float32, little-endian (n*4 bytes)
 *   fp16		method byte, scale exponent e (int8), n binary16
 *   topk, threshold	method byte, e, then the sparse format of compress.h
 * Values go out as fp16(x * 2^e), e chosen so the largest |x| sent lands
 * just under 2^15: gradients are small and would otherwise fall into
 * fp16's subnormals or to zero.  A power of two scales exactly.
 *
 * The sparse methods, per step:
 *   clip	(only with error feedback, DGC 3.2) the local gradient's norm to
 *		CLIP_RATIO times the running mean of past (clipped) norms; the
 *		first step only sets the mean, so steady gradients pass as they
 *		are and only a spike is scaled down before it is banked
 *   bank	momentum correction (DGC 3.3): u = m*u + g, v += u;
 *		error feedback alone: v += g; without it: v = g
 *   select	top k of |v|, k = ceil(d n), by radix select or a sampled
 *		threshold, d warmed up from 25% (DGC 3.4)
 *   send	v[idx]; the residual keeps only what fp16 rounding lost
 *		(v[idx] -= sent, exact by Sterbenz), and u[idx] = 0 (momentum
 *		factor masking)
 * Momentum correction needs error feedback and SGD with momentum > 0; the
 * optimizer then runs plain SGD on the decoded sum.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/rng.h"
#include "lib/xmalloc.h"
#include "kernels/cpu/compress.h"
#include "backend/worker/compressor.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the wire format is little-endian and is copied as such"
#endif

#define COMP_WARM	0.25		/* DGC's warm-up starts at 25% */
#define COMP_CLIP_RATIO	4.0		/* 4x the running mean is a spike */
#define COMP_CLIP_KEEP	0.9		/* weight of the past in that mean */
#define COMP_SPAN	16		/* fixed trip counts vectorise at -O2 */
#define COMP_SUM_CHUNK	4096		/* float partial sums, then double */
#define COMP_HEADER	2		/* method byte and scale exponent */
#define COMP_EXP_MAX	126		/* 2^±126 are normal floats */
#define COMP_STREAM	0x636f6d70	/* "comp": the sampling RNG's stream */
#define COMP_MAGIC	0x504d4348u	/* "HCMP" at the head of the state */

struct compressor;

/* A compressor's descriptor; the public part comes first. */
struct comp_ops {
	struct compressor_type	 type;
	size_t	(*bound)(const struct compressor *);
	size_t	(*encode)(struct compressor *, const float *, uint8_t *);
	int	(*decode)(const struct compressor *, const uint8_t *, size_t,
		    float *);
};

struct compressor {
	const struct comp_ops	*ops;
	size_t			 n;
	double			 target;	/* the density after warm-up */
	double			 warmup;	/* epochs */
	double			 density;	/* of the last encode */
	double			 epoch;		/* of the current encode */
	double			 clip_mean;	/* 0 until the first norm */
	int			 ef, mc;
	float			 momentum;
	size_t			 kmax;		/* the most one encode sends */
	/* The residual (or, without error feedback, the selection's input)
	 * and the momentum-correction velocity. */
	float			*v, *u;
	uint32_t		*idx;
	float			*scratch;
	struct rng		 rng;
};

/* The header of the state blob; v and u follow. */
struct comp_state {
	uint32_t	magic, flags;
	uint64_t	n;
	uint64_t	rng[4];
	double		clip_mean;
};

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

static double
comp_warm_density(const struct compressor *c, double epoch)
{
	double	d;

	if (c->target >= COMP_WARM || c->warmup <= 0 || epoch >= c->warmup)
		return c->target;
	if (epoch < 0)
		epoch = 0;
	d = COMP_WARM * pow(c->target / COMP_WARM, epoch / c->warmup);
	return d < c->target ? c->target : d > COMP_WARM ? COMP_WARM : d;
}

static size_t
comp_k(const struct compressor *c, double d)
{
	double	k = ceil(d * (double)c->n);

	return k < 1 ? 1 : k > (double)c->n ? c->n : (size_t)k;
}

/* The exponent e that puts max * 2^e just under 2^15. */
static int
comp_exponent(float max)
{
	int	e;

	if (max == 0)
		return 0;
	frexpf(max, &e);
	e = 15 - e;
	return e < -COMP_EXP_MAX ? -COMP_EXP_MAX : e > COMP_EXP_MAX ?
	    COMP_EXP_MAX : e;
}

/* The decode scale 2^-e of a header, or 0 when it is not this method's. */
static float
comp_header(const struct compressor *c, const uint8_t *p, size_t len)
{
	int	e;

	if (len < COMP_HEADER || p[0] != (uint8_t)c->ops->type.method)
		return 0;
	e = (int8_t)p[1];
	if (e < -COMP_EXP_MAX || e > COMP_EXP_MAX)
		return 0;
	return ldexpf(1.0f, -e);
}

static size_t
comp_none_bound(const struct compressor *c)
{
	return c->n * sizeof(float);
}

static size_t
comp_none_encode(struct compressor *c, const float *g, uint8_t *out)
{
	memcpy(out, g, c->n * sizeof(float));
	return c->n * sizeof(float);
}

static int
comp_none_decode(const struct compressor *c, const uint8_t *p, size_t len,
    float *grad)
{
	size_t	i;
	float	f[COMP_SPAN];

	if (len != c->n * sizeof(float))
		return -1;
	for (i = 0; i + COMP_SPAN <= c->n; i += COMP_SPAN) {
		memcpy(f, p + i * sizeof(float), sizeof f);
		for (size_t j = 0; j < COMP_SPAN; j++)
			grad[i + j] += f[j];
	}
	for (; i < c->n; i++) {
		memcpy(f, p + i * sizeof(float), sizeof(float));
		grad[i] += f[0];
	}
	return 0;
}

static size_t
comp_fp16_bound(const struct compressor *c)
{
	return COMP_HEADER + 2 * c->n;
}

static size_t
comp_fp16_encode(struct compressor *c, const float *g, uint8_t *out)
{
	int	e = comp_exponent(compress_absmax(g, NULL, c->n));

	out[0] = COMPRESS_FP16;
	out[1] = (uint8_t)(int8_t)e;
	compress_fp16_encode(out + COMP_HEADER, g, c->n, ldexpf(1.0f, e));
	return COMP_HEADER + 2 * c->n;
}

static int
comp_fp16_decode(const struct compressor *c, const uint8_t *p, size_t len,
    float *grad)
{
	float	scale = comp_header(c, p, len);

	if (scale == 0 || len != COMP_HEADER + 2 * c->n)
		return -1;
	compress_fp16_decode_add(grad, p + COMP_HEADER, c->n, scale);
	return 0;
}

static size_t
comp_sparse_bound(const struct compressor *c)
{
	return COMP_HEADER + compress_sparse_bound(c->n, c->kmax);
}

static size_t
comp_sparse_encode(struct compressor *c, const float *g, uint8_t *out)
{
	size_t	 k, cnt, len;
	float	 s = c->ef ? comp_clip(c, g) : 1.0f, scale, inv;
	int	 e;

	c->density = comp_warm_density(c, c->epoch);
	k = comp_k(c, c->density);
	comp_bank(c, g, s);
	if (c->ops->type.method == COMPRESS_TOPK)
		cnt = compress_topk(c->idx, c->v, c->n, k);
	else
		cnt = compress_threshold(c->idx, c->v, c->n, k, &c->rng,
		    c->scratch);
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

static int
comp_sparse_decode(const struct compressor *c, const uint8_t *p, size_t len,
    float *grad)
{
	float	scale = comp_header(c, p, len);
	long	used;

	if (scale == 0)
		return -1;
	used = compress_sparse_decode_add(grad, c->n, p + COMP_HEADER,
	    len - COMP_HEADER, scale);
	return used >= 0 && (size_t)used == len - COMP_HEADER ? 0 : -1;
}

static const struct comp_ops comp_table[] = {
	{ { "none", COMPRESS_NONE },
	  comp_none_bound, comp_none_encode, comp_none_decode },
	{ { "fp16", COMPRESS_FP16 },
	  comp_fp16_bound, comp_fp16_encode, comp_fp16_decode },
	{ { "topk", COMPRESS_TOPK },
	  comp_sparse_bound, comp_sparse_encode, comp_sparse_decode },
	{ { "threshold", COMPRESS_THRESHOLD },
	  comp_sparse_bound, comp_sparse_encode, comp_sparse_decode },
};

struct compressor *
compressor_create(const struct job_spec *job, size_t n, uint64_t seed)
{
	struct compressor	*c = xcalloc(1, sizeof *c);
	size_t			 ntab = sizeof comp_table / sizeof *comp_table;
	int			 sparse;

	for (size_t i = 0; i < ntab; i++)
		if (comp_table[i].type.method == job->compression.method)
			c->ops = &comp_table[i];
	if (c->ops == NULL || n == 0 || n > UINT32_MAX) {
		fprintf(stderr, "compressor: method %d over %zu floats\n",
		    (int)job->compression.method, n);
		abort();
	}
	c->n = n;
	sparse = c->ops->encode == comp_sparse_encode;
	c->target = sparse ? job->compression.density : 1.0;
	c->warmup = job->compression.warmup_epochs;
	c->density = c->target;
	c->ef = sparse && job->compression.error_feedback;
	c->mc = c->ef && job->compression.momentum_correction &&
	    job->train.optimizer.type == OPTIM_SGD &&
	    job->train.optimizer.momentum > 0;
	c->momentum = c->mc ? (float)job->train.optimizer.momentum : 0.0f;
	rng_seed(&c->rng, seed, COMP_STREAM);
	if (!sparse)
		return c;

	c->kmax = comp_k(c, c->warmup > 0 && c->target < COMP_WARM ?
	    COMP_WARM : c->target);
	c->idx = xmalloc(compress_idx_cap(n, c->kmax) * sizeof *c->idx);
	if (c->ops->type.method == COMPRESS_THRESHOLD) {
		c->scratch = xmalloc(compress_scratch_floats(n) *
		    sizeof *c->scratch);
		c->kmax += c->kmax / 5;		/* lands within 20% */
		c->kmax = c->kmax < n ? c->kmax : n;
	}
	c->v = xmalloc_aligned(n * sizeof *c->v);
	memset(c->v, 0, n * sizeof *c->v);
	if (c->mc) {
		c->u = xmalloc_aligned(n * sizeof *c->u);
		memset(c->u, 0, n * sizeof *c->u);
	}
	return c;
}

void
compressor_free(struct compressor *c)
{
	if (c == NULL)
		return;
	free(c->v);
	free(c->u);
	free(c->idx);
	free(c->scratch);
	free(c);
}

const struct compressor_type *
compressor_type(const struct compressor *c)
{
	return &c->ops->type;
}

size_t
compressor_max_bytes(const struct compressor *c)
{
	return c->ops->bound(c);
}

size_t
compressor_encode(struct compressor *c, const float *grad, double epoch,
    uint8_t *out, size_t cap)
{
	if (cap < c->ops->bound(c)) {
		fprintf(stderr, "compressor: %zu bytes of output, %zu needed\n",
		    cap, c->ops->bound(c));
		abort();
	}
	c->epoch = epoch;
	return c->ops->encode(c, grad, out);
}

int
compressor_decode(struct compressor *c, const uint8_t *all,
    const size_t *lens, int world, float *grad)
{
	memset(grad, 0, c->n * sizeof *grad);
	for (int r = 0; r < world; r++) {
		if (c->ops->decode(c, all, lens[r], grad) != 0)
			return -1;
		all += lens[r];
	}
	return 0;
}

int
compressor_owns_momentum(const struct compressor *c)
{
	return c->mc;
}

double
compressor_density(const struct compressor *c)
{
	return c->density;
}

const float *
compressor_residual(const struct compressor *c)
{
	return c->ef ? c->v : NULL;
}

const float *
compressor_velocity(const struct compressor *c)
{
	return c->u;
}

size_t
compressor_state_bytes(const struct compressor *c)
{
	return sizeof(struct comp_state) +
	    (size_t)(c->ef + c->mc) * c->n * sizeof(float);
}

void
compressor_state_save(const struct compressor *c, uint8_t *out)
{
	struct comp_state	st = {
		.magic = COMP_MAGIC, .flags = (uint32_t)(c->ef | c->mc << 1),
		.n = c->n, .clip_mean = c->clip_mean,
	};

	memcpy(st.rng, c->rng.s, sizeof st.rng);
	memcpy(out, &st, sizeof st);
	out += sizeof st;
	if (c->ef)
		memcpy(out, c->v, c->n * sizeof(float));
	if (c->mc)
		memcpy(out + (c->ef ? c->n * sizeof(float) : 0), c->u,
		    c->n * sizeof(float));
}

int
compressor_state_load(struct compressor *c, const uint8_t *in, size_t len)
{
	struct comp_state	st;

	if (len != compressor_state_bytes(c))
		return -1;
	memcpy(&st, in, sizeof st);
	if (st.magic != COMP_MAGIC || st.n != c->n ||
	    st.flags != (uint32_t)(c->ef | c->mc << 1))
		return -1;
	memcpy(c->rng.s, st.rng, sizeof st.rng);
	c->clip_mean = st.clip_mean;
	in += sizeof st;
	if (c->ef)
		memcpy(c->v, in, c->n * sizeof(float));
	if (c->mc)
		memcpy(c->u, in + (c->ef ? c->n * sizeof(float) : 0),
		    c->n * sizeof(float));
	return 0;
}
