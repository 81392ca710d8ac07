/*
 * vmath-internal.h: the kernels' inner loops, written so that the
 * compiler vectorises them at -O2: exp (no branches, no calls into libm;
 * expf and tanhf from libm took a quarter of a GPT training step on the
 * CPU, in GELU alone), GELU, and spans of adds and sums in blocks of a
 * fixed length.  Lanes change no bits where each element is its own sum
 * (an add, GELU); where they sum across elements (vsum_d), the lanes are
 * added in order, so the result is the same every time.
 *
 * vexp(x) is e^x within 4 ulp over [-87, 88] (Cody-Waite reduction by
 * ln 2, then a degree-6 polynomial: the coefficients are the Taylor
 * series', which over |r| <= ln2/2 leave an error under 2^-24); below
 * -87 it is 0, above 88 infinite (a NaN too: it comes out as infinity).
 */
#ifndef HUNTER_VMATH_INTERNAL_H
#define HUNTER_VMATH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * The part functions whose loops these are go out in three builds, for
 * AVX-512, AVX2 and the baseline, the best one picked when the program
 * loads (GCC's target_clones, an ifunc): the baseline's SSE2 is a
 * quarter of what the machines we run on have.  The bits are the same in
 * each: ISO C does not contract a * b + c into a fused multiply-add, and
 * the rest is IEEE's operations, lane for lane.  VMATH_INLINE makes a
 * helper part of the clone that calls it.
 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define VMATH_CLONES	__attribute__((target_clones("avx512f", "avx2", \
			    "default")))
#else
#define VMATH_CLONES
#endif
#define VMATH_INLINE	static inline __attribute__((always_inline))

VMATH_INLINE float
vexp(float x)
{
	float	 n, r, p, s;
	int32_t	 k;
	uint32_t bits, mag;

	/* Round to nearest by adding and taking away 1.5 * 2^23; |x| is
	 * far below 2^22 in every use, and the exponent is clamped below
	 * as an integer: a float clamp would be a branch the compiler may
	 * not vectorise, since a float compare can trap. */
	/* |x| at most 104 (e^x is already 0 or infinite in a float), so
	 * that n converts to an int: a clamp on the bits, in integers, since
	 * a float compare may trap and would keep the loop from vectorising. */
	memcpy(&bits, &x, sizeof bits);
	mag = bits & 0x7fffffffu;
	bits = mag > 0x42d00000u ? (bits & 0x80000000u) | 0x42d00000u : bits;
	memcpy(&x, &bits, sizeof x);
	n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
	r = x - n * 0.693359375f;		/* ln 2, high part */
	r = r + n * 2.12194440e-4f;		/* and the rest of it */
	p = 1.0f / 720.0f;
	p = p * r + 1.0f / 120.0f;
	p = p * r + 1.0f / 24.0f;
	p = p * r + 1.0f / 6.0f;
	p = p * r + 0.5f;
	p = p * r + 1.0f;
	p = p * r + 1.0f;
	k = (int32_t)n;
	k = k < -126 ? -127 : k;		/* underflow: 0 */
	k = k > 127 ? 128 : k;			/* overflow: inf */
	bits = (uint32_t)(k + 127) << 23;
	memcpy(&s, &bits, sizeof s);
	return p * s;
}

/* sqrt(2 / pi), the constant of GELU's tanh form. */
#define GELU_K	0.7978845608028654f

/*
 * Loops over these run in blocks of VMATH_BLOCK with a fixed trip count,
 * which GCC vectorises at -O2 (its cheapest cost model takes only loops
 * that need no remainder), then a scalar tail.
 */
#define VMATH_BLOCK	16

/*
 * GELU, GPT-2's tanh form.  0.5 (1 + tanh u) is the logistic function of
 * 2u, so GELU is x / (1 + e^(-2u)): no 1 + tanh to cancel where tanh is
 * near -1 (x < -2), which would lose half of float's digits there.
 */
VMATH_INLINE float
gelu_sig(float v)
{
	float	 u = GELU_K * (v + 0.044715f * v * v * v);

	return 1.0f / (1.0f + vexp(-2.0f * u));
}

VMATH_INLINE float
gelu_one(float v)
{
	return v * gelu_sig(v);
}

/* gelu'(v) dy. */
VMATH_INLINE float
gelu_grad(float v, float d)
{
	float	 s = gelu_sig(v);
	float	 du = GELU_K * (1.0f + 3.0f * 0.044715f * v * v);

	return (s + 2.0f * v * s * (1.0f - s) * du) * d;
}

/* d[i] = a[i] + b[i] over n floats; d may be a or b. */
VMATH_INLINE void
vadd_span(float *d, const float *a, const float *b, size_t n)
{
	size_t	 i = 0;

	for (; i + VMATH_BLOCK <= n; i += VMATH_BLOCK) {
		float	 t[VMATH_BLOCK];

		for (int j = 0; j < VMATH_BLOCK; j++)
			t[j] = a[i + j] + b[i + j];
		for (int j = 0; j < VMATH_BLOCK; j++)
			d[i + j] = t[j];
	}
	for (; i < n; i++)
		d[i] = a[i] + b[i];
}

/* The maximum of x[0..n), n at least 1: exact, whatever the order. */
VMATH_INLINE float
vmax_span(const float *x, size_t n)
{
	float	 m[VMATH_BLOCK], r = x[0];
	size_t	 i = 1;

	if (n >= VMATH_BLOCK) {
		for (int k = 0; k < VMATH_BLOCK; k++)
			m[k] = x[k];
		for (i = VMATH_BLOCK; i + VMATH_BLOCK <= n; i += VMATH_BLOCK)
			for (int k = 0; k < VMATH_BLOCK; k++)
				m[k] = x[i + k] > m[k] ? x[i + k] : m[k];
		r = m[0];
		for (int k = 1; k < VMATH_BLOCK; k++)
			r = m[k] > r ? m[k] : r;
	}
	for (; i < n; i++)
		r = x[i] > r ? x[i] : r;
	return r;
}

/* The sum of x[0..n) in double: VMATH_BLOCK lanes, then the lanes in
 * order, then the tail. */
VMATH_INLINE double
vsum_d(const float *x, size_t n)
{
	double	 acc[VMATH_BLOCK] = { 0 }, s = 0;
	size_t	 i = 0;

	for (; i + VMATH_BLOCK <= n; i += VMATH_BLOCK)
		for (int j = 0; j < VMATH_BLOCK; j++)
			acc[j] += x[i + j];
	for (int j = 0; j < VMATH_BLOCK; j++)
		s += acc[j];
	for (; i < n; i++)
		s += x[i];
	return s;
}

/* The sum of (x - m)^2 over x[0..n), in double, as vsum_d. */
VMATH_INLINE double
vsumsq_d(const float *x, double m, size_t n)
{
	double	 acc[VMATH_BLOCK] = { 0 }, s = 0;
	size_t	 i = 0;

	for (; i + VMATH_BLOCK <= n; i += VMATH_BLOCK)
		for (int j = 0; j < VMATH_BLOCK; j++)
			acc[j] += (x[i + j] - m) * (x[i + j] - m);
	for (int j = 0; j < VMATH_BLOCK; j++)
		s += acc[j];
	for (; i < n; i++)
		s += (x[i] - m) * (x[i] - m);
	return s;
}

/* g[i] = gelu'(x[i]) d[i] over n floats; g may be x. */
VMATH_INLINE void
gelu_grad_span(float *g, const float *x, const float *d, size_t n)
{
	size_t	 i = 0;

	for (; i + VMATH_BLOCK <= n; i += VMATH_BLOCK) {
		float	 t[VMATH_BLOCK];

		for (int j = 0; j < VMATH_BLOCK; j++)
			t[j] = gelu_grad(x[i + j], d[i + j]);
		for (int j = 0; j < VMATH_BLOCK; j++)
			g[i + j] = t[j];
	}
	for (; i < n; i++)
		g[i] = gelu_grad(x[i], d[i]);
}

/* y = GELU(x) over n floats. */
VMATH_INLINE void
gelu_span(float *restrict y, const float *restrict x, size_t n)
{
	size_t	 i = 0;

	for (; i + VMATH_BLOCK <= n; i += VMATH_BLOCK)
		for (int j = 0; j < VMATH_BLOCK; j++)
			y[i + j] = gelu_one(x[i + j]);
	for (; i < n; i++)
		y[i] = gelu_one(x[i]);
}

#endif
