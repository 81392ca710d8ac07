/*
 * rng.h: a small deterministic generator (xoshiro256**, seeded through
 * splitmix64).  Everything random in training draws from one of these, so
 * a run is a function of its seed and a checkpoint can store the state.
 */
#ifndef HUNTER_RNG_H
#define HUNTER_RNG_H

#include <math.h>
#include <stdint.h>

struct rng {
	uint64_t s[4];
};

static inline uint64_t
rng_splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Seed from a value and a stream number, so that (seed, epoch) or
 * (seed, "init") give independent streams. */
static inline void
rng_seed(struct rng *r, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed ^ (stream * 0xd1342543de82ef95ULL);

	for (int i = 0; i < 4; i++)
		r->s[i] = rng_splitmix(&x);
}

static inline uint64_t
rng_next(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t  result = ((s[1] * 5) << 7 | (s[1] * 5) >> 57) * 9;
	uint64_t  t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = (s[3] << 45) | (s[3] >> 19);
	return result;
}

/* Uniform in [0, n), without modulo bias worth mentioning for n < 2^32. */
static inline uint32_t
rng_below(struct rng *r, uint32_t n)
{
	return (uint32_t)(((rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* Uniform float in [0, 1). */
static inline float
rng_float(struct rng *r)
{
	return (float)(rng_next(r) >> 40) * (1.0f / 16777216.0f);
}

/* A standard normal float: Box-Muller's cosine half, from two uniforms
 * (the first taken from (0, 1], so that its log is finite). */
static inline float
rng_gauss(struct rng *r)
{
	float	u = 1.0f - rng_float(r), v = rng_float(r);

	return sqrtf(-2.0f * logf(u)) * cosf(6.28318531f * v);
}

#endif
