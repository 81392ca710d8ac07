/*
 * compress-core.h: what the CPU and GPU compression kernels share, so
 * that kernels/cpu/{select,codec}.c and kernels/cuda/{select,codec}.cu
 * give the same bits: the magnitude key, fp16 rounding, the LEB128
 * varint of the sparse format (compress.h), and the plan of the sampled
 * threshold (its limits, its sample and the strata it draws from).
 *
 * Each piece is a static inline function; under nvcc the ones a kernel
 * needs are __host__ __device__ too.  The sample is drawn on the host on
 * both sides, from the same rng in the same order.
 */
#ifndef HUNTER_COMPRESS_CORE_H
#define HUNTER_COMPRESS_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lib/rng.h"

#ifdef __CUDACC__
#define CMP_HD	static __host__ __device__ __forceinline__
#else
#define CMP_HD	static inline
#endif

#define CMP_BLOCK	64	/* entries per vectorised test in the filters */
#define CMP_SMALL	4096	/* below this a sample says little: top-k */
#define CMP_AIM		2	/* the sampled threshold aims at CMP_AIM * k */
#define CMP_SPILL	4	/* candidates past CMP_SPILL * k raise it */
#define CMP_HITS	32	/* sampled entries wanted above the threshold */
#define CMP_RANK	16	/* and never a rank below this in the sample */
#define CMP_FLOOR	2048	/* candidates kept before raising, at least */
#define CMP_INF		0x7f800000u

CMP_HD uint32_t
cmp_as_u32(float f)
{
#ifdef __CUDA_ARCH__
	return __float_as_uint(f);
#else
	uint32_t	u;

	memcpy(&u, &f, sizeof u);
	return u;
#endif
}

CMP_HD float
cmp_as_float(uint32_t u)
{
#ifdef __CUDA_ARCH__
	return __uint_as_float(u);
#else
	float	f;

	memcpy(&f, &u, sizeof f);
	return f;
#endif
}

/* |x| as its bit pattern, which orders like the magnitude. */
CMP_HD uint32_t
cmp_key(float f)
{
	return cmp_as_u32(f) & 0x7fffffffu;
}

CMP_HD uint16_t
cmp_f16(float f)
{
	uint32_t	u = cmp_as_u32(f), a, sign, h;

	sign = (u >> 16) & 0x8000u;
	a = u & 0x7fffffffu;
	if (a >= CMP_INF)
		h = a > CMP_INF ? 0x7e00u | ((a >> 13) & 0x3ffu) : 0x7c00u;
	else if (a >= 0x477ff000u)		/* 65520 and up round to inf */
		h = 0x7c00u;
	else if (a >= 0x38800000u)		/* normal: 2^-14 and up */
		h = (a - 0x38000000u + 0xfffu + ((a >> 13) & 1u)) >> 13;
	else if (a > 0x33000000u) {		/* subnormal: above 2^-25 */
		uint32_t m = (a & 0x7fffffu) | 0x800000u;
		uint32_t sh = 126u - (a >> 23);

		h = (m + (1u << (sh - 1)) - 1u + ((m >> sh) & 1u)) >> sh;
	} else
		h = 0;
	return (uint16_t)(sign | h);
}

/* A subnormal's m * 2^-24 is exact, so no rounding mode matters. */
CMP_HD float
cmp_f32(uint16_t h)
{
	uint32_t	sign = (uint32_t)(h & 0x8000u) << 16;
	uint32_t	e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
	float		f;

	if (e == 0) {
		f = (float)m * 0x1p-24f;
		return sign ? -f : f;
	}
	if (e == 31)
		return cmp_as_float(sign | CMP_INF | (m << 13) |
		    (m ? 0x400000u : 0));
	return cmp_as_float(sign | ((e + 112u) << 23) | (m << 13));
}

CMP_HD int
cmp_varint_len(uint32_t v)
{
	return 1 + (v >= 1u << 7) + (v >= 1u << 14) + (v >= 1u << 21) +
	    (v >= 1u << 28);
}

CMP_HD uint8_t *
cmp_put_varint(uint8_t *p, uint32_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* A varint of at most 32 bits from [p, end); NULL if cut short or wider. */
CMP_HD const uint8_t *
cmp_get_varint(const uint8_t *p, const uint8_t *end, uint32_t *v)
{
	uint32_t	r = 0;

	for (int sh = 0; sh < 35; sh += 7) {
		uint8_t	b;

		if (p == end)
			return NULL;
		b = *p++;
		if (sh == 28 && b > 0x0f)
			return NULL;
		r |= (uint32_t)(b & 0x7f) << sh;
		if ((b & 0x80) == 0) {
			*v = r;
			return p;
		}
	}
	return NULL;
}

/* Candidates the threshold filter may hold before it raises t. */
static inline size_t
cmp_lim(size_t n, size_t k)
{
	size_t	lim = k < n / CMP_SPILL ? CMP_SPILL * k : n;

	lim = lim > CMP_FLOOR ? lim : CMP_FLOOR;
	return lim < n ? lim : n;
}

/* What the sampled threshold aims at for k of n (n >= CMP_SMALL, k < n):
 * aim candidates, from a sample of s entries (at most n / 100, so
 * compress_scratch_floats holds it), whose rank-th largest is t. */
struct cmp_plan {
	size_t	aim, s, rank;
};

static inline struct cmp_plan
cmp_plan(size_t n, size_t k)
{
	struct cmp_plan	p;

	p.aim = CMP_AIM * k < n ? CMP_AIM * k : n;
	p.s = CMP_HITS * n / p.aim;
	if (p.s > n / 100)
		p.s = n / 100;
	if (p.s < n / 1000)
		p.s = n / 1000;
	p.rank = (p.aim * p.s + n - 1) / n;
	p.rank = p.rank > CMP_RANK ? p.rank : CMP_RANK;
	p.rank = p.rank < p.s ? p.rank : p.s;
	return p;
}

/* The sample's strata: s equal parts of [0, n) in 32.32 fixed point, so
 * that they tile n exactly; each gives one uniform entry, in order. */
struct cmp_strata {
	uint64_t	at, step;
};

static inline struct cmp_strata
cmp_strata(size_t n, size_t s)
{
	struct cmp_strata	st = { 0, ((uint64_t)n << 32) / s };

	return st;
}

static inline uint32_t
cmp_stratum_next(struct cmp_strata *st, struct rng *r)
{
	uint64_t	at = st->at;

	st->at += st->step;
	return (uint32_t)((at >> 32) + rng_below(r,
	    (uint32_t)(((at + st->step) >> 32) - (at >> 32))));
}

#endif
