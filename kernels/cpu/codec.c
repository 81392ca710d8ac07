/*
 * codec.c: fp16 conversion, the scale's absmax, and the sparse and dense
 * fp16 codecs (formats in compress.h); the rounding and the varint are
 * kernels/compress-core.h's, which the CUDA twin (kernels/cuda/codec.cu)
 * shares.
 *
 * fp16 rounds to nearest even in integer arithmetic.  Built with F16C
 * (-mf16c) the dense codec converts eight at a time in hardware, which
 * gives the same bits for every float, NaN payloads included.
 */
#include <string.h>
#if defined(__F16C__) && defined(__AVX__)
#include <immintrin.h>
#endif

#include "kernels/compress-core.h"
#include "kernels/cpu/compress.h"

uint16_t
compress_f16(float f)
{
	return cmp_f16(f);
}

float
compress_f32(uint16_t h)
{
	return cmp_f32(h);
}

float
compress_absmax(const float *x, const uint32_t *idx, size_t m)
{
	uint32_t	best = 0, key;

	if (idx != NULL)
		for (size_t j = 0; j < m; j++) {
			key = cmp_key(x[idx[j]]);
			key = key < CMP_INF ? key : 0;
			best = key > best ? key : best;
		}
	else
		for (size_t j = 0; j < m; j++) {
			key = cmp_key(x[j]);
			key = key < CMP_INF ? key : 0;
			best = key > best ? key : best;
		}
	return cmp_as_float(best);
}

size_t
compress_sparse_bound(size_t n, size_t count)
{
	size_t	w = 1;

	for (size_t v = n; v >= 0x80; v >>= 7)
		w++;
	return 5 + count * (w + 2);
}

size_t
compress_sparse_encode(uint8_t *out, const uint32_t *idx, const float *x,
    size_t count, float scale)
{
	uint8_t		*p = cmp_put_varint(out, (uint32_t)count);
	uint32_t	 prev = 0;

	for (size_t j = 0; j < count; j++) {
		p = cmp_put_varint(p, idx[j] - prev);
		prev = idx[j];
	}
	for (size_t j = 0; j < count; j++) {
		uint16_t h = cmp_f16(x[idx[j]] * scale);

		p[2 * j] = (uint8_t)h;
		p[2 * j + 1] = (uint8_t)(h >> 8);
	}
	return (size_t)(p - out) + 2 * count;
}

long
compress_sparse_decode_add(float *dense, size_t n, const uint8_t *buf,
    size_t len, float scale)
{
	const uint8_t	*end = buf + len, *p, *q, *vals;
	uint32_t	 count, gap;
	uint64_t	 at = 0;

	if ((p = cmp_get_varint(buf, end, &count)) == NULL)
		return -1;
	if (count > n || count > (size_t)(end - p) / 3)
		return -1;
	q = p;
	for (uint32_t j = 0; j < count; j++) {
		if ((q = cmp_get_varint(q, end, &gap)) == NULL)
			return -1;
		if ((j > 0 && gap == 0) || (at += gap) >= n)
			return -1;
	}
	if ((size_t)(end - q) / 2 < count)
		return -1;
	vals = q;
	at = 0;
	for (uint32_t j = 0; j < count; j++) {
		p = cmp_get_varint(p, end, &gap);
		at += gap;
		dense[at] += cmp_f32((uint16_t)(vals[2 * j] |
		    vals[2 * j + 1] << 8)) * scale;
	}
	return (long)(vals + 2 * (size_t)count - buf);
}

void
compress_fp16_encode(uint8_t *out, const float *x, size_t n, float scale)
{
	size_t	i = 0;

#if defined(__F16C__) && defined(__AVX__)
	__m256	s = _mm256_set1_ps(scale);

	for (; i + 8 <= n; i += 8)
		_mm_storeu_si128((__m128i *)(out + 2 * i), _mm256_cvtps_ph(
		    _mm256_mul_ps(_mm256_loadu_ps(x + i), s),
		    _MM_FROUND_TO_NEAREST_INT));
#endif
	for (; i < n; i++) {
		uint16_t h = cmp_f16(x[i] * scale);

		out[2 * i] = (uint8_t)h;
		out[2 * i + 1] = (uint8_t)(h >> 8);
	}
}

void
compress_fp16_decode_add(float *dense, const uint8_t *in, size_t n,
    float scale)
{
	size_t	i = 0;

#if defined(__F16C__) && defined(__AVX__)
	__m256	s = _mm256_set1_ps(scale);

	for (; i + 8 <= n; i += 8)
		_mm256_storeu_ps(dense + i, _mm256_add_ps(
		    _mm256_loadu_ps(dense + i), _mm256_mul_ps(_mm256_cvtph_ps(
		    _mm_loadu_si128((const __m128i *)(in + 2 * i))), s)));
#endif
	for (; i < n; i++)
		dense[i] += cmp_f32((uint16_t)(in[2 * i] |
		    in[2 * i + 1] << 8)) * scale;
}
