/*
 * vmath-internal.h: exp for the kernels' inner loops, written so that
 * the compiler vectorises a loop that calls it (no branches, no calls
 * into libm).  expf and tanhf from libm took a quarter of a GPT training
 * step on the CPU, in GELU alone.
 *
 * vexp(x) is e^x within 4 ulp over [-87, 88] (Cody-Waite reduction by
 * ln 2, then a degree-6 polynomial: the coefficients are the Taylor
 * series', which over |r| <= ln2/2 leave an error under 2^-24); below
 * -87 it is 0, above 88 infinite (a NaN too: it comes out as infinity).
 */
#ifndef HUNTER_VMATH_INTERNAL_H
#define HUNTER_VMATH_INTERNAL_H

#include <stdint.h>
#include <string.h>

static inline float
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

#endif
