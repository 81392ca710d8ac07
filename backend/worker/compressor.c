/*
 * compressor.c: the table of compression methods (compressor.h; one file
 * each, their descriptor in compressor-internal.h), indexed by enum
 * spec_compress, and the state a rank keeps between steps: made, given
 * to the method, saved and restored.  Whether a method is sparse (its
 * flag) decides the density, error feedback and momentum correction;
 * nothing here asks which method it is.
 *
 * Wire, per rank:
 *   none		n float32, little-endian (n*4 bytes)
 *   fp16		method byte, scale exponent e (int8), n binary16
 *   topk, threshold	method byte, e, then the sparse format of compress.h
 * Values go out as fp16(x * 2^e), e chosen so the largest |x| sent lands
 * just under 2^15: gradients are small and would otherwise fall into
 * fp16's subnormals or to zero.  A power of two scales exactly.
 * A sparse method's warm-up step whose k values would cost more than all
 * n in fp16 goes out as fp16 instead, its method byte or'd with
 * COMP_DENSE.
 * Momentum correction needs error feedback and SGD with momentum > 0; the
 * optimizer then runs plain SGD on the decoded sum.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/rng.h"
#include "lib/xmalloc.h"
#include "backend/worker/compressor-internal.h"

#define COMP_EXP_MAX	126		/* 2^±126 are normal floats */
#define COMP_STREAM	0x636f6d70	/* "comp": the sampling RNG's stream */
#define COMP_MAGIC	0x504d4348u	/* "HCMP" at the head of the state */

extern const struct comp_method comp_none;
extern const struct comp_method comp_fp16;
extern const struct comp_method comp_topk;
extern const struct comp_method comp_threshold;

static const struct comp_method *const comp_methods[] = {
	[COMPRESS_NONE] = &comp_none,
	[COMPRESS_FP16] = &comp_fp16,
	[COMPRESS_TOPK] = &comp_topk,
	[COMPRESS_THRESHOLD] = &comp_threshold,
};

/* The header of the state blob; v and u follow. */
struct comp_state {
	uint32_t	magic, flags;
	uint64_t	n;
	uint64_t	rng[4];
	double		clip_mean;
};

int
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

float
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

struct compressor *
compressor_create(const struct job_spec *job, size_t n, uint64_t seed)
{
	struct compressor	*c = xcalloc(1, sizeof *c);
	unsigned		 method = job->compression.method;
	int			 sparse;

	if (method < sizeof comp_methods / sizeof *comp_methods)
		c->ops = comp_methods[method];
	if (c->ops == NULL || n == 0 || n > UINT32_MAX) {
		fprintf(stderr, "compressor: method %u over %zu floats\n",
		    method, n);
		abort();
	}
	c->n = n;
	sparse = c->ops->type.sparse;
	c->target = sparse ? job->compression.density : 1.0;
	c->warmup = job->compression.warmup_epochs;
	c->warmup_steps = job->compression.warmup_steps;
	c->warm_start = job->compression.warmup_density;
	/* Asked for always; the sparse setup keeps it only where a step
	 * could send all of v in fp16 for fewer bytes. */
	c->warm_fp16 = 1;
	c->density = c->target;
	c->ef = sparse && job->compression.error_feedback;
	c->mc = c->ef && job->compression.momentum_correction &&
	    job->train.optimizer.type == OPTIM_SGD &&
	    job->train.optimizer.momentum > 0;
	c->momentum = c->mc ? (float)job->train.optimizer.momentum : 0.0f;
	rng_seed(&c->rng, seed, COMP_STREAM);
	if (c->ops->setup != NULL)
		c->ops->setup(c);
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
	size_t	len;

	if (cap < c->ops->bound(c)) {
		fprintf(stderr, "compressor: %zu bytes of output, %zu needed\n",
		    cap, c->ops->bound(c));
		abort();
	}
	c->epoch = epoch;
	len = c->ops->encode(c, grad, out);
	c->steps++;
	return len;
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
compressor_decode_parts(struct compressor *c, const uint8_t *const *parts,
    const size_t *lens, int world, float *grad)
{
	memset(grad, 0, c->n * sizeof *grad);
	for (int r = 0; r < world; r++) {
		if (c->ops->decode(c, parts[r], lens[r], grad) != 0)
			return -1;
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

/* The step clock of the warm-up rides in the state only when the warm-up
 * follows it, so other jobs' checkpoints keep their old layout. */
static int
comp_clocked(const struct compressor *c)
{
	return c->warmup_steps > 0;
}

static uint32_t
comp_flags(const struct compressor *c)
{
	return (uint32_t)(c->ef | c->mc << 1 | comp_clocked(c) << 2);
}

size_t
compressor_state_bytes(const struct compressor *c)
{
	return sizeof(struct comp_state) + (comp_clocked(c) ? 8 : 0) +
	    (size_t)(c->ef + c->mc) * c->n * sizeof(float);
}

void
compressor_state_save(const struct compressor *c, uint8_t *out)
{
	struct comp_state	st = {
		.magic = COMP_MAGIC, .flags = comp_flags(c),
		.n = c->n, .clip_mean = c->clip_mean,
	};

	memcpy(st.rng, c->rng.s, sizeof st.rng);
	memcpy(out, &st, sizeof st);
	out += sizeof st;
	if (comp_clocked(c)) {
		memcpy(out, &c->steps, 8);
		out += 8;
	}
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
	if (st.magic != COMP_MAGIC || st.n != c->n || st.flags != comp_flags(c))
		return -1;
	memcpy(c->rng.s, st.rng, sizeof st.rng);
	c->clip_mean = st.clip_mean;
	in += sizeof st;
	if (comp_clocked(c)) {
		memcpy(&c->steps, in, 8);
		in += 8;
	}
	if (c->ef)
		memcpy(c->v, in, c->n * sizeof(float));
	if (c->mc)
		memcpy(c->u, in + (c->ef ? c->n * sizeof(float) : 0),
		    c->n * sizeof(float));
	return 0;
}

int
compressor_state_fold(struct compressor *c, const uint8_t *in, size_t len)
{
	struct comp_state	st;
	const float		*v;

	if (len != compressor_state_bytes(c))
		return -1;
	memcpy(&st, in, sizeof st);
	if (st.magic != COMP_MAGIC || st.n != c->n || st.flags != comp_flags(c))
		return -1;
	in += sizeof st + (comp_clocked(c) ? 8 : 0);
	v = (const float *)(const void *)in;
	/* The blob's floats may be unaligned: read them as bytes. */
	for (size_t i = 0; c->ef && i < c->n; i++) {
		float	 x;

		memcpy(&x, (const uint8_t *)v + i * sizeof x, sizeof x);
		c->v[i] += x;
	}
	in += c->ef ? c->n * sizeof(float) : 0;
	for (size_t i = 0; c->mc && i < c->n; i++) {
		float	 x;

		memcpy(&x, in + i * sizeof x, sizeof x);
		c->u[i] += x;
	}
	return 0;
}
