/*
 * compressor-none.c: no compression: n float32 as they are, summed in
 * spans of COMP_SPAN.
 */
#include <string.h>

#include "backend/worker/compressor-internal.h"

static size_t
none_bound(const struct compressor *c)
{
	return c->n * sizeof(float);
}

static size_t
none_encode(struct compressor *c, const float *g, uint8_t *out)
{
	memcpy(out, g, c->n * sizeof(float));
	return c->n * sizeof(float);
}

static int
none_decode(const struct compressor *c, const uint8_t *p, size_t len,
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

const struct comp_method comp_none = {
	.type = { COMPRESS_NONE, 0 },
	.bound = none_bound,
	.encode = none_encode,
	.decode = none_decode,
};
