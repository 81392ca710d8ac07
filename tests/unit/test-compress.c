/*
 * test-compress.c: gradient compression, kernels and compressors, against
 * plain references written here.
 *
 * fp16 is checked against a conversion done in double with nearbyint
 * (round half to even), exhaustively one way and on edge cases and random
 * bit patterns the other.  Top-k is checked against a full sort by
 * (magnitude down, index up); the sampled threshold by its count (within
 * 20% of k) and by being a top set (nothing left out is larger than
 * anything taken).  The sparse decoder is fed every truncation and
 * thousands of mutations of a valid buffer, each in a heap block of its
 * exact size, so that under ASan any read past the end aborts.  The
 * multi-rank decode is compared bit for bit with a reference decoder.
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

#include "lib/rng.h"
#include "kernels/cpu/compress.h"
#include "backend/spec/spec.h"
#include "backend/worker/compressor.h"

static struct rng	tc_rng;

static float
tc_gauss(void)
{
	return rng_gauss(&tc_rng);
}

static uint32_t
tc_key(float f)
{
	uint32_t	u;

	memcpy(&u, &f, sizeof u);
	return u & 0x7fffffffu;
}

static float
tc_bits(uint32_t u)
{
	float	f;

	memcpy(&f, &u, sizeof f);
	return f;
}

/* binary16 of f by double arithmetic; nearbyint rounds half to even. */
static uint16_t
ref_f16(float f)
{
	uint16_t	sign = signbit(f) ? 0x8000 : 0;
	double		d = fabs((double)f), q;
	int		e;

	if (isnan(f))
		return sign | 0x7e00 | ((tc_key(f) >> 13) & 0x3ff);
	if (isinf(f))
		return sign | 0x7c00;
	if (d < 0x1p-14)
		return sign | (uint16_t)nearbyint(d * 0x1p24);
	frexp(d, &e);
	e -= 1;
	q = nearbyint(ldexp(d, 10 - e));
	if (q == 2048) {
		q = 1024;
		e++;
	}
	if (e > 15)
		return sign | 0x7c00;
	return sign | (uint16_t)((e + 15) << 10 | ((int)q - 1024));
}

static float
ref_f32(uint16_t h)
{
	int	e = (h >> 10) & 0x1f, m = h & 0x3ff;
	float	f;

	if (e == 0)
		f = (float)ldexp(m, -24);
	else if (e == 31)
		f = m ? NAN : INFINITY;
	else
		f = (float)ldexp(1024 + m, e - 25);
	return (h & 0x8000) ? -f : f;
}

static void
t_fp16(void **state)
{
	static const struct { float f; uint16_t h; } edge[] = {
		{ 0.0f, 0x0000 }, { -0.0f, 0x8000 }, { 1.0f, 0x3c00 },
		{ -2.0f, 0xc000 }, { 65504.0f, 0x7bff }, { 65519.0f, 0x7bff },
		{ 65520.0f, 0x7c00 }, { 1e6f, 0x7c00 }, { -1e30f, 0xfc00 },
		{ INFINITY, 0x7c00 }, { -INFINITY, 0xfc00 },
		{ 0x1p-24f, 0x0001 }, { 0x1p-25f, 0x0000 },
		{ 0x1.8p-25f, 0x0001 }, { 0x1.8p-24f, 0x0002 },
		{ 0x1.4p-24f, 0x0001 }, { 0x3ffp-24f, 0x03ff },
		{ 0x7ffp-25f, 0x0400 }, { 0x1p-14f, 0x0400 },
		{ 1.0f + 0x1p-11f, 0x3c00 }, { 1.0f + 0x3p-11f, 0x3c02 },
		{ 2049.0f, 0x6800 }, { 2051.0f, 0x6802 }, { 1e-40f, 0x0000 },
		{ -0x1p-26f, 0x8000 },
	};
	uint16_t	h;

	for (size_t i = 0; i < sizeof edge / sizeof *edge; i++) {
		assert_int_equal(compress_f16(edge[i].f), edge[i].h);
		assert_int_equal(ref_f16(edge[i].f), edge[i].h);
	}
	h = compress_f16(NAN);
	assert_int_equal(h & 0x7c00, 0x7c00);
	assert_true((h & 0x3ff) != 0);
	assert_true(isnan(compress_f32(h)));
	for (uint32_t v = 0; v < 0x10000; v++) {
		float	a = compress_f32((uint16_t)v), b = ref_f32((uint16_t)v);

		if (isnan(b)) {
			assert_true(isnan(a));
			continue;
		}
		assert_int_equal(tc_key(a) | (signbit(a) ? 1u << 31 : 0),
		    tc_key(b) | (signbit(b) ? 1u << 31 : 0));
		assert_int_equal(compress_f16(a), v);
	}
	rng_seed(&tc_rng, 1, 0);
	for (int i = 0; i < 1000000; i++) {
		uint32_t u = (uint32_t)rng_next(&tc_rng);

		/* Bias toward fp16's range: exponents 100..150. */
		if (i & 1)
			u = (u & 0x807fffffu) | (100u + u % 51) << 23;
		assert_int_equal(compress_f16(tc_bits(u)), ref_f16(tc_bits(u)));
	}
}

/* Random strictly increasing indices, about density * n of them. */
static size_t
tc_indices(uint32_t *idx, size_t n, double density)
{
	size_t	c = 0;

	for (size_t i = 0; i < n; i++)
		if (rng_float(&tc_rng) < density)
			idx[c++] = (uint32_t)i;
	return c;
}

/* Sparse and dense fp16 codecs on n gaussians / scale, decoded into a
 * vector that already holds values, since decoding adds. */
static void
tc_roundtrip(size_t n, double density, float scale)
{
	float		*x = malloc(n * sizeof *x), *dense = malloc(n * 4), v;
	uint32_t	*idx = malloc(n * sizeof *idx);
	uint8_t		*buf;
	size_t		 cnt, len, j = 0;
	uint16_t	 h;

	for (size_t i = 0; i < n; i++) {
		x[i] = tc_gauss() / scale;
		dense[i] = 1.0f;
	}
	cnt = tc_indices(idx, n, density);
	buf = malloc(compress_sparse_bound(n, cnt));
	len = compress_sparse_encode(buf, idx, x, cnt, scale);
	assert_true(len <= compress_sparse_bound(n, cnt));
	assert_int_equal(compress_sparse_decode_add(dense, n, buf, len,
	    1.0f / scale), (long)len);
	for (size_t i = 0; i < n; i++) {
		if (j == cnt || idx[j] != i) {
			assert_true(dense[i] == 1.0f);
			continue;
		}
		v = ref_f32(ref_f16(x[i] * scale)) / scale;
		assert_true(fabsf(v - x[i]) <=
		    fabsf(x[i]) * 0x1p-11f + 0x1p-25f / scale);
		assert_true(dense[i] == 1.0f + v);
		j++;
	}
	free(buf);

	buf = malloc(2 * n);
	compress_fp16_encode(buf, x, n, scale);
	for (size_t i = 0; i < n; i++)
		dense[i] = 0.5f;
	compress_fp16_decode_add(dense, buf, n, 1.0f / scale);
	for (size_t i = 0; i < n; i++) {
		h = ref_f16(x[i] * scale);
		assert_int_equal(buf[2 * i] | buf[2 * i + 1] << 8, h);
		assert_true(dense[i] == 0.5f + ref_f32(h) / scale);
	}
	free(buf);
	free(idx);
	free(x);
	free(dense);
}

static void
t_sparse_roundtrip(void **state)
{
	static const size_t	ns[] = { 1, 100, 5000, 300000 };
	static const double	ds[] = { 0.001, 0.05, 0.5, 1.0 };
	static const float	scales[] = { 1.0f, 0x1p20f, 0x1p-3f };

	rng_seed(&tc_rng, 2, 0);
	for (size_t a = 0; a < 4; a++)
		for (size_t b = 0; b < 4; b++)
			tc_roundtrip(ns[a], ds[b], scales[(a + b) % 3]);
}

static const float	*tc_sort_x;

static int
tc_by_magnitude(const void *a, const void *b)
{
	uint32_t	i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	uint32_t	ki = tc_key(tc_sort_x[i]), kj = tc_key(tc_sort_x[j]);

	if (ki != kj)
		return ki > kj ? -1 : 1;
	return i < j ? -1 : i > j;
}

static int
tc_by_index(const void *a, const void *b)
{
	uint32_t	i = *(const uint32_t *)a, j = *(const uint32_t *)b;

	return i < j ? -1 : i > j;
}

/* compress_topk against a sort; kind 0 gaussian, 1 few values (ties, +-0),
 * 2 all equal (many ties past the candidate buffer); 3, 4 and 5, for n of
 * 70001 and k of 1000: 701 loud entries above a crowded bin of 50 values
 * in [8, 8.5), gaussian noise below.  The candidate buffer holds 4375
 * (n / 16; the sampled threshold's limit, 4k, is 4000): 4200 of the bin
 * in 3 (the bin alone fits the buffer, not with the loud ones), 41300 in
 * 4 (not even alone), 3500 in 5 (the two fit, past 4k).  6 and 7 defeat
 * the first guess (compress.h): the entries it samples are loud in 6, so
 * it collects fewer than k, and silent in 7, so it collects past n / 16. */
static void
tc_topk_case(size_t n, size_t k, int kind)
{
	float		*x = malloc(n * sizeof *x);
	uint32_t	*ref = malloc(n * sizeof *ref);
	uint32_t	*idx = malloc(compress_idx_cap(n, k) * sizeof *idx);
	size_t		 want = k < n ? k : n, got;

	for (size_t i = 0; i < n; i++) {
		if (kind == 0)
			x[i] = tc_gauss();
		else if (kind == 1)
			x[i] = 0.25f * (float)((int)rng_below(&tc_rng, 41) -
			    20);
		else if (kind == 2)
			x[i] = -3.0f;
		else if (kind >= 6)	/* the guess's sample: loud, silent */
			x[i] = i % (n / 1024) != 0 || i >= 1024 * (n / 1024) ?
			    tc_gauss() : kind == 6 ? 100.0f + (float)(i % 7) :
			    0.0f;
		else if (i % 100 == 0)
			x[i] = 64.0f + (float)(i % 3);
		else if ((int)(i % 100) <= (kind == 3 ? 6 : kind == 5 ? 5 :
		    59))
			x[i] = (i & 1 ? -1.0f : 1.0f) * (8.0f + 0.01f *
			    (float)(i % 50));
		else
			x[i] = tc_gauss();
		if (kind == 1 && x[i] == 0 && (i & 1))
			x[i] = -0.0f;
		ref[i] = (uint32_t)i;
	}
	tc_sort_x = x;
	qsort(ref, n, sizeof *ref, tc_by_magnitude);
	qsort(ref, want, sizeof *ref, tc_by_index);
	got = compress_topk(idx, x, n, k);
	assert_int_equal(got, want);
	assert_memory_equal(idx, ref, want * sizeof *idx);
	free(x);
	free(ref);
	free(idx);
}

static void
t_topk(void **state)
{
	static const size_t	ns[] = { 1, 10, 1000, 70001 };
	float			x[6] = { 1, NAN, -2, INFINITY, 0, -0.5f };
	uint32_t		idx[6 + 64];

	rng_seed(&tc_rng, 3, 0);
	for (size_t a = 0; a < 4; a++) {
		size_t	n = ns[a];
		size_t	ks[] = { 1, 3, n / 7, n / 2, n - 1, n, n + 5 };

		for (size_t b = 0; b < 7; b++)
			for (int kind = 0; kind < 3; kind++)
				if (ks[b] > 0)
					tc_topk_case(n, ks[b], kind);
	}
	tc_topk_case(70001, 1000, 3);
	tc_topk_case(70001, 1000, 4);
	tc_topk_case(70001, 1000, 5);
	tc_topk_case(70001, 1000, 6);
	tc_topk_case(70001, 1000, 7);
	assert_int_equal(compress_topk(idx, x, 6, 0), 0);
	/* NaN ranks above infinity. */
	assert_int_equal(compress_topk(idx, x, 6, 2), 2);
	assert_int_equal(idx[0], 1);
	assert_int_equal(idx[1], 3);
}

/* Kinds of data for the threshold: gaussian, lognormal (heavy tail),
 * mostly zeros, one loud layer in front, magnitudes rising along x. */
static float
tc_sample(int kind, size_t i, size_t n)
{
	float	g = tc_gauss();

	switch (kind) {
	case 0:
		return g;
	case 1:
		return copysignf(expf(3.0f * tc_gauss()), g);
	case 2:
		return rng_float(&tc_rng) < 0.9f ? 0.0f : g;
	case 3:
		return i < n / 10 ? 100.0f * g : g;
	default:
		return g * (float)(i + 1) / (float)n;
	}
}

/* One threshold selection: count within 20% of k, indices in range and
 * increasing, and a top set.  Returns how far the count is off, |c-k|/k. */
static double
tc_threshold_once(const float *x, size_t n, size_t k, struct rng *r,
    float *scratch, uint8_t *taken)
{
	uint32_t	*idx = malloc(compress_idx_cap(n, k) * sizeof *idx);
	uint32_t	 low = UINT32_MAX, high = 0;
	size_t		 c = compress_threshold(idx, x, n, k, r, scratch);

	assert_true(5 * (c > k ? c - k : k - c) <= k);
	memset(taken, 0, n);
	for (size_t j = 0; j < c; j++) {
		assert_true(idx[j] < n);
		assert_true(j == 0 || idx[j] > idx[j - 1]);
		taken[idx[j]] = 1;
		if (tc_key(x[idx[j]]) < low)
			low = tc_key(x[idx[j]]);
	}
	for (size_t i = 0; i < n; i++)
		if (!taken[i] && tc_key(x[i]) > high)
			high = tc_key(x[i]);
	assert_true(low >= high);
	free(idx);
	return fabs((double)c - (double)k) / (double)k;
}

static void
t_threshold(void **state)
{
	static const size_t	ns[] = { 5000, 100000, 1 << 20 };
	static const double	ds[] = { 0.001, 0.01, 0.1, 0.3 };
	double			worst = 0;
	struct rng		r;

	rng_seed(&tc_rng, 4, 0);
	for (size_t a = 0; a < 3; a++)
		for (int kind = 0; kind < 5; kind++) {
			size_t	 n = ns[a], k;
			float	*x = malloc(n * sizeof *x);
			float	*scratch = malloc(compress_scratch_floats(n) *
			    sizeof *scratch);
			uint8_t	*taken = malloc(n);

			rng_seed(&r, a, (uint64_t)kind);
			for (size_t i = 0; i < n; i++)
				x[i] = tc_sample(kind, i, n);
			for (size_t b = 0; b < 4; b++)
				for (int rep = 0; rep < 3; rep++) {
					k = (size_t)ceil(ds[b] * (double)n);
					worst = fmax(worst, tc_threshold_once(x,
					    n, k, &r, scratch, taken));
				}
			free(x);
			free(scratch);
			free(taken);
		}
	print_message("threshold: worst count off k by %.1f%%\n",
	    100 * worst);
}

static struct job_spec
tc_job(enum spec_compress method, double density, int ef, int mc,
    int warmup)
{
	struct job_spec	j;

	spec_job_defaults(&j);
	j.train.optimizer.type = OPTIM_SGD;
	j.train.optimizer.momentum = 0.9;
	j.compression.method = method;
	j.compression.density = density;
	j.compression.error_feedback = ef;
	j.compression.momentum_correction = mc;
	j.compression.warmup_epochs = warmup;
	return j;
}

/* One step as a world of one: encode g into buf, decode it into sent. */
static size_t
tc_step(struct compressor *c, const float *g, double epoch, uint8_t *buf,
    float *sent)
{
	size_t	len = compressor_encode(c, g, epoch, buf,
	    compressor_max_bytes(c));

	assert_true(len <= compressor_max_bytes(c));
	assert_int_equal(compressor_decode(c, buf, &len, 1, sent), 0);
	return len;
}

/* T steps; sum of what was sent + the residual against the sum of the
 * gradients (or, with momentum correction, of the velocities). */
static void
tc_feedback(enum spec_compress method, int mc)
{
	const size_t		 n = 20000, steps = 60;
	struct job_spec		 job = tc_job(method, 0.01, 1, mc, 0);
	struct compressor	*c = compressor_create(&job, n, 7);
	uint8_t			*buf = malloc(compressor_max_bytes(c));
	float			*g = malloc(n * 4), *sent = malloc(n * 4);
	float			*u = calloc(n, sizeof *u);
	double			*want = calloc(n, sizeof *want);
	double			*got = calloc(n, sizeof *got);
	const float		*v, *vel;

	assert_int_equal(compressor_owns_momentum(c), mc);
	rng_seed(&tc_rng, 5, (uint64_t)mc);
	for (size_t t = 0; t < steps; t++) {
		for (size_t i = 0; i < n; i++)
			g[i] = 1e-3f * tc_gauss();
		if (mc) {
			vel = compressor_velocity(c);
			for (size_t i = 0; i < n; i++)
				u[i] = 0.9f * vel[i] + g[i];
		}
		for (size_t i = 0; i < n; i++)
			want[i] += mc ? u[i] : g[i];
		tc_step(c, g, 1.0, buf, sent);
		for (size_t i = 0; i < n; i++) {
			got[i] += sent[i];
			if (mc && sent[i] != 0)
				assert_true(compressor_velocity(c)[i] == 0);
		}
	}
	v = compressor_residual(c);
	for (size_t i = 0; i < n; i++)
		assert_true(fabs(got[i] + v[i] - want[i]) <=
		    1e-6 * (1 + fabs(want[i])));
	compressor_free(c);
	free(buf);
	free(g);
	free(sent);
	free(u);
	free(want);
	free(got);
}

static void
t_error_feedback(void **state)
{
	const size_t		 n = 20000;
	struct job_spec		 job = tc_job(COMPRESS_TOPK, 0.01, 1, 0, 0);
	struct compressor	*c;
	float			*g = malloc(n * 4), *sent = malloc(n * 4);
	float			*before = malloc(n * sizeof *before);
	uint8_t			*buf;
	double			 norm = 0, usual = 1e-3 * sqrt((double)n);

	tc_feedback(COMPRESS_TOPK, 0);
	tc_feedback(COMPRESS_THRESHOLD, 0);
	tc_feedback(COMPRESS_TOPK, 1);
	tc_feedback(COMPRESS_THRESHOLD, 1);

	/* A spike 100x the usual norm is banked clipped to 4x the mean. */
	c = compressor_create(&job, n, 7);
	buf = malloc(compressor_max_bytes(c));
	rng_seed(&tc_rng, 6, 0);
	for (int t = 0; t < 6; t++) {
		for (size_t i = 0; i < n; i++)
			g[i] = (t == 5 ? 0.1f : 1e-3f) * tc_gauss();
		memcpy(before, compressor_residual(c), n * sizeof *before);
		tc_step(c, g, 1.0, buf, sent);
	}
	for (size_t i = 0; i < n; i++) {
		double d = (double)compressor_residual(c)[i] + sent[i] -
		    before[i];

		norm += d * d;
	}
	assert_true(sqrt(norm) > 3.5 * usual && sqrt(norm) < 4.5 * usual);
	compressor_free(c);
	free(buf);
	free(before);

	/* Without error feedback nothing is kept, and SGD keeps momentum;
	 * AdamW never hands its moments over. */
	job = tc_job(COMPRESS_TOPK, 0.01, 0, 1, 0);
	c = compressor_create(&job, n, 7);
	assert_null(compressor_residual(c));
	assert_int_equal(compressor_owns_momentum(c), 0);
	compressor_free(c);
	job = tc_job(COMPRESS_TOPK, 0.01, 1, 1, 0);
	job.train.optimizer.type = OPTIM_ADAMW;
	c = compressor_create(&job, n, 7);
	assert_int_equal(compressor_owns_momentum(c), 0);
	compressor_free(c);
	free(g);
	free(sent);
}

/* Decode a copy of buf[0..len) held in a block of exactly len bytes;
 * on failure dense must be untouched. */
static long
tc_decode(const uint8_t *buf, size_t len, size_t n)
{
	uint8_t	*copy = malloc(len ? len : 1);
	float	*dense = calloc(n, sizeof *dense);
	long	 r;

	memcpy(copy, buf, len);
	r = compress_sparse_decode_add(dense, n, copy, len, 1.0f);
	assert_true(r <= (long)len);
	for (size_t i = 0; r < 0 && i < n; i++)
		assert_true(dense[i] == 0);
	free(copy);
	free(dense);
	return r;
}

static void
t_malformed(void **state)
{
	static const uint8_t	ok[] = { 3, 1, 4, 4, 0, 0x3c, 0, 0x40, 0,
	    0xc0 };
	static const uint8_t	range[] = { 2, 1, 8, 0, 0x3c, 0, 0x3c };
	static const uint8_t	same[] = { 2, 1, 0, 0, 0x3c, 0, 0x3c };
	static const uint8_t	wide[] = { 1, 0xff, 0xff, 0xff, 0xff, 0x1f,
	    0, 0x3c };
	static const uint8_t	cut[] = { 1, 0x80 };
	static const uint8_t	many[] = { 0xe8, 0x07, 1, 1, 1, 0, 0 };
	static const uint8_t	shy[] = { 1, 0x80, 0x01, 0x3c };
	static const uint8_t	wider[] = { 1, 0x80, 0x01, 0, 0x3c };
	struct job_spec		job = tc_job(COMPRESS_TOPK, 0.1, 1, 0, 0);
	struct compressor	*c = compressor_create(&job, 10, 1);
	uint8_t			mut[sizeof ok + 4];
	float			grad[10];
	size_t			len;

	assert_int_equal(tc_decode(ok, sizeof ok, 10), (long)sizeof ok);
	for (size_t l = 0; l < sizeof ok; l++)
		assert_int_equal(tc_decode(ok, l, 10), -1);
	assert_int_equal(tc_decode(ok, sizeof ok, 9), -1);
	assert_int_equal(tc_decode(range, sizeof range, 9), -1);
	assert_int_equal(tc_decode(range, sizeof range, 10), 7);
	assert_int_equal(tc_decode(same, sizeof same, 10), -1);
	assert_int_equal(tc_decode(wide, sizeof wide, 10), -1);
	assert_int_equal(tc_decode(cut, sizeof cut, 10), -1);
	assert_int_equal(tc_decode(many, sizeof many, 2000), -1);
	assert_int_equal(tc_decode(ok, sizeof ok, 2), -1);
	assert_int_equal(tc_decode(shy, sizeof shy, 200), -1);
	assert_int_equal(tc_decode(wider, 5, 200), 5);

	/* Mutations and cuts of a valid buffer: never past the end. */
	rng_seed(&tc_rng, 8, 0);
	for (int i = 0; i < 20000; i++) {
		memcpy(mut, ok, sizeof ok);
		mut[sizeof ok] = mut[sizeof ok + 1] = 0;
		for (int m = 0; m < 1 + (int)rng_below(&tc_rng, 3); m++)
			mut[rng_below(&tc_rng, sizeof mut)] =
			    (uint8_t)rng_next(&tc_rng);
		tc_decode(mut, rng_below(&tc_rng, sizeof mut + 1), 10);
	}

	/* The compressor's framing: method byte, exponent, exact length. */
	mut[0] = COMPRESS_TOPK;
	mut[1] = 0;
	memcpy(mut + 2, ok, sizeof ok);
	len = sizeof ok + 2;
	assert_int_equal(compressor_decode(c, mut, &len, 1, grad), 0);
	assert_true(grad[1] == 1.0f && grad[5] == 2.0f && grad[9] == -2.0f);
	len = sizeof ok + 1;
	assert_int_equal(compressor_decode(c, mut, &len, 1, grad), -1);
	mut[len] = 0;
	len = sizeof ok + 3;
	assert_int_equal(compressor_decode(c, mut, &len, 1, grad), -1);
	len = sizeof ok + 2;
	mut[0] = COMPRESS_FP16;
	assert_int_equal(compressor_decode(c, mut, &len, 1, grad), -1);
	mut[0] = COMPRESS_TOPK;
	mut[1] = 127;
	assert_int_equal(compressor_decode(c, mut, &len, 1, grad), -1);
	len = 1;
	assert_int_equal(compressor_decode(c, mut, &len, 1, grad), -1);
	compressor_free(c);
	job.compression.method = COMPRESS_NONE;
	c = compressor_create(&job, 10, 1);
	len = 39;
	assert_int_equal(compressor_decode(c, mut, &len, 1, grad), -1);
	compressor_free(c);
	job.compression.method = COMPRESS_FP16;
	c = compressor_create(&job, 4, 1);
	len = 10;
	mut[0] = COMPRESS_FP16;
	mut[1] = 0;
	assert_int_equal(compressor_decode(c, mut, &len, 1, grad), 0);
	len = 9;
	assert_int_equal(compressor_decode(c, mut, &len, 1, grad), -1);
	compressor_free(c);
}

static uint32_t
ref_varint(const uint8_t **p)
{
	uint32_t	v = 0;

	for (int sh = 0;; sh += 7) {
		uint8_t b = *(*p)++;

		v |= (uint32_t)(b & 0x7f) << sh;
		if (!(b & 0x80))
			return v;
	}
}

/* Add one rank's part into sum, read by a plain reference decoder. */
static void
ref_decode(float *sum, size_t n, const uint8_t *p, size_t len,
    enum spec_compress method)
{
	float		f;
	uint32_t	count, at = 0, gaps[4096];
	const uint8_t	*vals;

	if (method == COMPRESS_NONE) {
		for (size_t i = 0; i < n; i++) {
			memcpy(&f, p + 4 * i, 4);
			sum[i] += f;
		}
		return;
	}
	f = ldexpf(1.0f, -(int8_t)p[1]);
	p += 2;
	if (method == COMPRESS_FP16) {
		for (size_t i = 0; i < n; i++)
			sum[i] += f * ref_f32((uint16_t)(p[2 * i] |
			    p[2 * i + 1] << 8));
		return;
	}
	count = ref_varint(&p);
	assert_true(count <= 4096);
	for (uint32_t j = 0; j < count; j++)
		gaps[j] = ref_varint(&p);
	vals = p;
	for (uint32_t j = 0; j < count; j++) {
		at += gaps[j];
		sum[at] += f * ref_f32((uint16_t)(vals[2 * j] |
		    vals[2 * j + 1] << 8));
	}
}

static void
t_ranks(void **state)
{
	enum { WORLD = 3 };
	const size_t		 n = 30011;

	rng_seed(&tc_rng, 9, 0);
	for (int m = COMPRESS_NONE; m <= COMPRESS_THRESHOLD; m++) {
		struct job_spec	   job = tc_job(m, 0.02, 1, 1, 1);
		struct compressor *c[WORLD];
		size_t		   max, lens[WORLD], off = 0;
		uint8_t		  *all;
		float		  *g = malloc(n * sizeof *g), *ref, *out[WORLD];

		ref = calloc(n, sizeof *ref);
		for (int r = 0; r < WORLD; r++)
			c[r] = compressor_create(&job, n, 100 + (uint64_t)r);
		max = compressor_max_bytes(c[0]);
		all = malloc(WORLD * max);
		for (int r = 0; r < WORLD; r++) {
			for (size_t i = 0; i < n; i++)
				g[i] = 1e-4f * tc_gauss() * (r + 1);
			lens[r] = compressor_encode(c[r], g, 2.0, all + off,
			    max);
			ref_decode(ref, n, all + off, lens[r], m);
			off += lens[r];
		}
		for (int r = 0; r < WORLD; r++) {
			out[r] = malloc(n * sizeof *out[r]);
			for (int rep = 0; rep < 2; rep++) {
				memset(out[r], 0x7f, n * sizeof *out[r]);
				assert_int_equal(compressor_decode(c[r], all,
				    lens, WORLD, out[r]), 0);
				assert_memory_equal(out[r], ref, n * 4);
			}
		}
		for (int r = 0; r < WORLD; r++) {
			compressor_free(c[r]);
			free(out[r]);
		}
		free(all);
		free(g);
		free(ref);
	}
}

static void
t_bytes(void **state)
{
	const size_t		 n = 1 << 20;
	struct job_spec		 job = tc_job(COMPRESS_TOPK, 0.001, 1, 1, 2);
	struct compressor	*c = compressor_create(&job, n, 1);
	float			*g = malloc(n * sizeof *g);
	float			*sent = malloc(n * sizeof *sent);
	uint8_t			*buf = malloc(compressor_max_bytes(c));
	size_t			 len;

	rng_seed(&tc_rng, 10, 0);
	for (size_t i = 0; i < n; i++)
		g[i] = tc_gauss();
	len = tc_step(c, g, 2.5, buf, sent);
	assert_true(compressor_density(c) == 0.001);
	assert_true(len < n * 4 / 100);
	print_message("topk at 0.001: %zu bytes for %zu floats\n", len, n);
	len = tc_step(c, g, 0.0, buf, sent);
	assert_true(compressor_density(c) == 0.25);
	assert_true(len > n / 4);
	tc_step(c, g, 1.0, buf, sent);
	assert_true(fabs(compressor_density(c) - 0.25 * sqrt(0.004)) < 1e-12);
	compressor_free(c);
	free(buf);

	for (int m = COMPRESS_NONE; m <= COMPRESS_THRESHOLD; m++) {
		job = tc_job(m, 0.1, 1, 0, 1);
		c = compressor_create(&job, n, 2);
		buf = malloc(compressor_max_bytes(c));
		len = tc_step(c, g, 0.0, buf, sent);
		if (m == COMPRESS_NONE)
			assert_int_equal(len, n * 4);
		if (m == COMPRESS_FP16)
			assert_int_equal(len, n * 2 + 2);
		assert_int_equal(compressor_type(c)->method, m);
		assert_int_equal(compressor_type(c)->sparse,
		    m == COMPRESS_TOPK || m == COMPRESS_THRESHOLD);
		compressor_free(c);
		free(buf);
	}
	free(g);
	free(sent);
}

/* A compressor restored from its state continues bit for bit. */
static void
t_state(void **state)
{
	const size_t		 n = 50000;
	struct job_spec		 job;
	struct compressor	*a, *b;
	float			*g = malloc(n * 4), *sent = malloc(n * 4);
	uint8_t			*blob, *blob2, *out[2];
	size_t			 max, len[2];

	job = tc_job(COMPRESS_THRESHOLD, 0.01, 1, 1, 1);
	a = compressor_create(&job, n, 11);
	max = compressor_max_bytes(a);
	out[0] = malloc(max);
	out[1] = malloc(max);
	rng_seed(&tc_rng, 12, 0);
	for (int t = 0; t < 5; t++) {
		for (size_t i = 0; i < n; i++)
			g[i] = 1e-3f * tc_gauss();
		tc_step(a, g, 0.1 * t, out[0], sent);
	}
	blob = malloc(compressor_state_bytes(a));
	blob2 = malloc(compressor_state_bytes(a));
	compressor_state_save(a, blob);
	b = compressor_create(&job, n, 999);
	assert_int_equal(compressor_state_load(b, blob,
	    compressor_state_bytes(a) - 1), -1);
	assert_int_equal(compressor_state_load(b, blob,
	    compressor_state_bytes(a)), 0);
	for (int t = 5; t < 10; t++) {
		for (size_t i = 0; i < n; i++)
			g[i] = 1e-3f * tc_gauss();
		len[0] = compressor_encode(a, g, 0.1 * t, out[0], max);
		len[1] = compressor_encode(b, g, 0.1 * t, out[1], max);
		assert_int_equal(len[0], len[1]);
		assert_memory_equal(out[0], out[1], len[0]);
	}
	compressor_state_save(a, blob);
	compressor_state_save(b, blob2);
	assert_memory_equal(blob, blob2, compressor_state_bytes(a));
	compressor_free(a);
	compressor_free(b);
	free(blob);
	free(blob2);
	free(out[0]);
	free(out[1]);
	free(g);
	free(sent);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_fp16),
		cmocka_unit_test(t_sparse_roundtrip),
		cmocka_unit_test(t_topk),
		cmocka_unit_test(t_threshold),
		cmocka_unit_test(t_error_feedback),
		cmocka_unit_test(t_malformed),
		cmocka_unit_test(t_ranks),
		cmocka_unit_test(t_bytes),
		cmocka_unit_test(t_state),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
