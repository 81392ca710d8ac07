/*
 * compressor-fp16.c: dense binary16: the header (method byte, scale
 * exponent e), then every value as fp16(x * 2^e).
 */
#include <math.h>

#include "kernels/cpu/compress.h"
#include "backend/worker/compressor-internal.h"

static size_t
fp16_bound(const struct compressor *c)
{
	return COMP_HEADER + 2 * c->n;
}

static size_t
fp16_encode(struct compressor *c, const float *g, uint8_t *out)
{
	int	e = comp_exponent(compress_absmax(g, NULL, c->n));

	out[0] = (uint8_t)c->ops->type.method;
	out[1] = (uint8_t)(int8_t)e;
	compress_fp16_encode(out + COMP_HEADER, g, c->n, ldexpf(1.0f, e));
	return COMP_HEADER + 2 * c->n;
}

static int
fp16_decode(const struct compressor *c, const uint8_t *p, size_t len,
    float *grad)
{
	float	scale = comp_header(c, p, len);

	if (scale == 0 || len != COMP_HEADER + 2 * c->n)
		return -1;
	compress_fp16_decode_add(grad, p + COMP_HEADER, c->n, scale);
	return 0;
}

const struct comp_method comp_fp16 = {
	.type = { COMPRESS_FP16, 0 },
	.bound = fp16_bound,
	.encode = fp16_encode,
	.decode = fp16_decode,
};
