/*
 * select.c: selection of the large entries of a gradient, exact top-k and
 * the sampled threshold (compress.h); the codecs are in codec.c, and what
 * both share with their CUDA twins in kernels/compress-core.h.
 *
 * Selection compares keys, the bit pattern of |x|, as integers.  Exact
 * top-k is a radix select: a histogram of the top 11 key bits finds the
 * bin that holds the k-th largest key; when that bin and everything above
 * it fit in the index buffer they are collected in one pass and the rest
 * of the work runs over those candidates only, otherwise two more
 * histogram passes (11 and 9 bits) pin the key down.  The buffer holds a
 * sixteenth of n for this (CMP_TOPK_DIV): an error-feedback residual
 * crowds the boundary bin (each entry grows until it is sent), and in the
 * mlp's exchange, 270K floats at k = 270, the bin passed the 2048 of the
 * sampled threshold's limit so often that the full-length histogram
 * passes took a seventh of a rank's step.  A last pass emits
 * the indices in order, taking keys equal to the k-th only while the tie
 * quota lasts, so the lower index wins.
 *
 * The sampled threshold reads one random entry from each of s equal
 * strata and aims at 2k candidates (but never above the sample's 16th
 * largest: fewer sampled hits say little), so that an unlucky sample
 * rarely lands below 0.8k and costs a second pass.  The filters compare
 * 64 keys at a time into a bit mask (SSE2 where there is one) and append
 * only the set bits.  If the candidates pass max(4k, 2048) mid-pass, the
 * threshold is raised to the one that would have kept the pace of the aim
 * on the prefix, but never past the prefix's own k-th largest (a loud
 * layer in front must not push it past the global k-th), and the
 * candidates so far are filtered again, so one pass still suffices.  An
 * overshoot is then cut to the top k of the candidates.
 *
 * Exact top-k of a small k first guesses: the 16th largest key of 1024
 * entries, one every n / 1024, or the one that aims at 4k candidates
 * where that is lower, and one collecting pass.  When it gathers at
 * least k and at most n / 16 they are the candidates, and the histogram
 * pass is spared; otherwise (a sample that lands badly) the histogram
 * runs as above.  The result is the same either way: the top k of the
 * candidates, ties to the lower index.  On the mlp's 270K floats at
 * k = 270 the selection took 0.091 ms with the histogram, 0.03-0.05 ms
 * so.
 */
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "kernels/compress-core.h"
#include "kernels/cpu/compress.h"

#define CMP_KEYS	1024	/* a boundary bin this small is copied out */
#define CMP_TOPK_DIV	16	/* top-k collects up to n / 16 candidates */
#define CMP_GUESS	1024	/* entries the first guess samples */
#define CMP_GUESS_MIN	(16 * CMP_GUESS)	/* and the n it starts at */
#define CMP_GUESS_AIM	4	/* candidates it aims at, times k */
#define CMP_GUESS_RANK	16	/* but never above the sample's 16th */

/* The k-th largest key of a set, and how many keys equal to it the top k
 * take (the rest are above it). */
struct cmp_kth {
	uint32_t	key;
	size_t		ties;
};

/* The candidates top-k collects in one pass, at most: the threshold's
 * limit, or a sixteenth of n where that is more. */
static size_t
cmp_topk_lim(size_t n, size_t k)
{
	size_t	lim = cmp_lim(n, k);

	return lim > n / CMP_TOPK_DIV ? lim : n / CMP_TOPK_DIV;
}

size_t
compress_idx_cap(size_t n, size_t k)
{
	return cmp_topk_lim(n, k) + CMP_BLOCK;
}

size_t
compress_scratch_floats(size_t n)
{
	return n / 100 + 1;
}

/* Histogram of the key bits at sh (nb bins) of those keys whose bits
 * under pmask equal prefix; the keys are keys[j] as given, or those of
 * x[idx[j]], or of x[j]. */
static void
cmp_hist(uint32_t *hist, uint32_t nb, uint32_t sh, uint32_t pmask,
    uint32_t prefix, const float *x, const uint32_t *idx,
    const uint32_t *keys, size_t m)
{
	uint32_t	key;

	memset(hist, 0, nb * sizeof *hist);
	if (keys != NULL)
		for (size_t j = 0; j < m; j++) {
			key = keys[j];
			hist[(key >> sh) & (nb - 1)] += (key & pmask) == prefix;
		}
	else if (idx != NULL)
		for (size_t j = 0; j < m; j++) {
			key = cmp_key(x[idx[j]]);
			hist[(key >> sh) & (nb - 1)] += (key & pmask) == prefix;
		}
	else
		for (size_t j = 0; j < m; j++) {
			key = cmp_key(x[j]);
			hist[(key >> sh) & (nb - 1)] += (key & pmask) == prefix;
		}
}

/* Copy out the keys whose bits under pmask equal prefix; keys needs room
 * for their count + 1. */
static size_t
cmp_gather(uint32_t *keys, const float *x, const uint32_t *idx, size_t m,
    uint32_t pmask, uint32_t prefix)
{
	size_t		c = 0;
	uint32_t	key;

	for (size_t j = 0; j < m; j++) {
		key = cmp_key(x[idx != NULL ? idx[j] : j]);
		keys[c] = key;
		c += (key & pmask) == prefix;
	}
	return c;
}

/*
 * Radix select over x[0..m), or x[idx[0..m)]; 1 <= k <= m.  Three levels
 * of 11, 11 and 9 bits; once the boundary bin is small its keys are
 * copied out and the later levels count only those.
 */
static struct cmp_kth
cmp_kth(const float *x, const uint32_t *idx, size_t m, size_t k)
{
	static const uint32_t	shift[3] = { 20, 9, 0 };
	static const uint32_t	bins[3] = { 2048, 2048, 512 };
	uint32_t		hist[2048], keys[CMP_KEYS + 1];
	uint32_t		prefix = 0, pmask = 0, b;
	const uint32_t		*kp = NULL;
	size_t			need = k, above;

	for (int l = 0; l < 3; l++) {
		cmp_hist(hist, bins[l], shift[l], pmask, prefix, x, idx, kp, m);
		above = 0;
		for (b = bins[l] - 1; above + hist[b] < need; b--)
			above += hist[b];
		need -= above;
		prefix |= b << shift[l];
		pmask |= (bins[l] - 1) << shift[l];
		if (kp == NULL && l < 2 && hist[b] <= CMP_KEYS) {
			m = cmp_gather(keys, x, idx, m, pmask, prefix);
			kp = keys;
		}
	}
	return (struct cmp_kth){ prefix, need };
}

/* Bit j set when the key of x[j] is >= t, j < m <= 64, t <= 2^31: as
 * 32-bit words, t - 1 - key then has its top bit set (t = 0 wraps and
 * passes everything). */
static inline uint64_t
cmp_mask_tail(const float *x, size_t m, uint32_t t)
{
	uint64_t	bits = 0;

	for (size_t j = 0; j < m; j++)
		bits |= (uint64_t)((t - 1u - cmp_key(x[j])) >> 31) << j;
	return bits;
}

#if defined(__SSE2__)
/* Four keys against t - 1, as signed words: key > t - 1. */
static inline __m128i
cmp_gt4(const float *x, __m128i lim)
{
	return _mm_cmpgt_epi32(_mm_and_si128(_mm_set1_epi32(0x7fffffff),
	    _mm_loadu_si128((const __m128i *)x)), lim);
}

/* Sixteen of them, packed down to bytes for one movemask. */
static inline uint64_t
cmp_mask16(const float *x, __m128i lim)
{
	return (uint16_t)_mm_movemask_epi8(_mm_packs_epi16(
	    _mm_packs_epi32(cmp_gt4(x, lim), cmp_gt4(x + 4, lim)),
	    _mm_packs_epi32(cmp_gt4(x + 8, lim), cmp_gt4(x + 12, lim))));
}
#endif

/* cmp_mask_tail over a whole block. */
static inline uint64_t
cmp_mask(const float *x, uint32_t t)
{
#if defined(__SSE2__)
	const __m128i	lim = _mm_set1_epi32((int32_t)(t - 1u));

	return cmp_mask16(x, lim) | cmp_mask16(x + 16, lim) << 16 |
	    cmp_mask16(x + 32, lim) << 32 | cmp_mask16(x + 48, lim) << 48;
#else
	return cmp_mask_tail(x, CMP_BLOCK, t);
#endif
}

/* Append base + j for every set bit j. */
static inline size_t
cmp_bits(uint32_t *idx, size_t c, uint64_t bits, size_t base)
{
	for (; bits != 0; bits &= bits - 1)
		idx[c++] = (uint32_t)(base + (size_t)__builtin_ctzll(bits));
	return c;
}

/* Append every i in [0, n) whose key is >= t. */
static size_t
cmp_collect(uint32_t *idx, const float *x, size_t n, uint32_t t)
{
	size_t	c = 0, i;

	for (i = 0; i + CMP_BLOCK <= n; i += CMP_BLOCK)
		c = cmp_bits(idx, c, cmp_mask(x + i, t), i);
	return cmp_bits(idx, c, cmp_mask_tail(x + i, n - i, t), i);
}

/* Keep, in place and in order, the idx[0..m) whose key is >= t. */
static size_t
cmp_keep(uint32_t *idx, const float *x, size_t m, uint32_t t)
{
	size_t	c = 0;

	for (size_t j = 0; j < m; j++) {
		uint32_t i = idx[j];

		idx[c] = i;
		c += cmp_key(x[i]) >= t;
	}
	return c;
}

/* The top k of idx[0..m), in place, given the k-th; idx needs room for
 * k + 1 (the store runs ahead of the count). */
static size_t
cmp_emit(uint32_t *idx, const float *x, size_t m, struct cmp_kth kth)
{
	size_t	c = 0, ties = kth.ties;

	for (size_t j = 0; j < m; j++) {
		uint32_t i = idx[j], key = cmp_key(x[i]);
		size_t	 eq = key == kth.key;
		size_t	 take = (key > kth.key) | (eq & (ties != 0));

		ties -= eq & take;
		idx[c] = i;
		c += take;
	}
	return c;
}

/* cmp_emit over the set bits of one block of x. */
static inline size_t
cmp_emit_bits(uint32_t *idx, size_t c, const float *x, uint64_t bits,
    size_t base, struct cmp_kth *kth)
{
	for (; bits != 0; bits &= bits - 1) {
		size_t	 i = base + (size_t)__builtin_ctzll(bits);
		uint32_t key = cmp_key(x[i]);
		size_t	 eq = key == kth->key;
		size_t	 take = (key > kth->key) | (eq & (kth->ties != 0));

		kth->ties -= eq & take;
		idx[c] = (uint32_t)i;
		c += take;
	}
	return c;
}

/* Append every i in [0, n) whose key is >= t while they are at most
 * lim; SIZE_MAX once they are more (idx needs room for lim + CMP_BLOCK). */
static size_t
cmp_collect_upto(uint32_t *idx, const float *x, size_t n, uint32_t t,
    size_t lim)
{
	size_t	c = 0, i;

	for (i = 0; i + CMP_BLOCK <= n; i += CMP_BLOCK) {
		c = cmp_bits(idx, c, cmp_mask(x + i, t), i);
		if (c > lim)
			return SIZE_MAX;
	}
	c = cmp_bits(idx, c, cmp_mask_tail(x + i, n - i, t), i);
	return c > lim ? SIZE_MAX : c;
}

/* The sampled guess (see the top): the candidates at or above the
 * CMP_GUESS_RANK-th largest key of the strided sample, when they are at
 * least k and fit, else 0 and the histogram decides. */
static size_t
cmp_topk_guess(uint32_t *idx, const float *x, size_t n, size_t k)
{
	float		 sample[CMP_GUESS];
	size_t		 lim = cmp_topk_lim(n, k), aim = CMP_GUESS_AIM * k, r, m;

	if (n < CMP_GUESS_MIN || aim > lim)
		return 0;
	for (size_t j = 0; j < CMP_GUESS; j++)
		sample[j] = x[j * (n / CMP_GUESS)];
	r = (aim * CMP_GUESS + n - 1) / n;
	r = r < CMP_GUESS_RANK ? CMP_GUESS_RANK : r;
	m = cmp_collect_upto(idx, x, n, cmp_kth(sample, NULL, CMP_GUESS,
	    r).key, lim);
	if (m == SIZE_MAX || m < k)
		return 0;
	return cmp_emit(idx, x, m, cmp_kth(x, idx, m, k));
}

size_t
compress_topk(uint32_t *idx, const float *x, size_t n, size_t k)
{
	uint32_t	hist[4][2048] = { { 0 } }, b;
	size_t		above = 0, m = 0, i;
	struct cmp_kth	kth;

	if (k >= n) {
		for (i = 0; i < n; i++)
			idx[i] = (uint32_t)i;
		return n;
	}
	if (k == 0)
		return 0;
	if ((m = cmp_topk_guess(idx, x, n, k)) != 0)
		return m;
	/* Four histograms, so that runs of one bin do not wait on each
	 * other's increments. */
	for (i = 0; i + 4 <= n; i += 4) {
		hist[0][cmp_key(x[i]) >> 20]++;
		hist[1][cmp_key(x[i + 1]) >> 20]++;
		hist[2][cmp_key(x[i + 2]) >> 20]++;
		hist[3][cmp_key(x[i + 3]) >> 20]++;
	}
	for (; i < n; i++)
		hist[0][cmp_key(x[i]) >> 20]++;
	for (b = 0; b < 2048; b++)
		hist[0][b] += hist[1][b] + hist[2][b] + hist[3][b];
	for (b = 2047; above + hist[0][b] < k; b--)
		above += hist[0][b];
	if (above + hist[0][b] <= cmp_topk_lim(n, k)) {
		m = cmp_collect(idx, x, n, b << 20);
		return cmp_emit(idx, x, m, cmp_kth(x, idx, m, k));
	}
	kth = cmp_kth(x, NULL, n, k);
	for (i = 0; i + CMP_BLOCK <= n; i += CMP_BLOCK)
		m = cmp_emit_bits(idx, m, x, cmp_mask(x + i, kth.key), i, &kth);
	return cmp_emit_bits(idx, m, x, cmp_mask_tail(x + i, n - i, kth.key),
	    i, &kth);
}

size_t
compress_threshold(uint32_t *idx, const float *x, size_t n, size_t k,
    struct rng *r, float *scratch)
{
	size_t		 lim = cmp_lim(n, k), c = 0, off, i;
	struct cmp_plan	 p;
	struct cmp_strata st;
	uint32_t	 t;

	if (k == 0)
		return 0;
	if (k >= n || n < CMP_SMALL)
		return compress_topk(idx, x, n, k);
	p = cmp_plan(n, k);
	st = cmp_strata(n, p.s);
	for (size_t j = 0; j < p.s; j++)
		scratch[j] = x[cmp_stratum_next(&st, r)];
	t = cmp_kth(scratch, NULL, p.s, p.rank).key;

	for (i = 0; i + CMP_BLOCK <= n; i += CMP_BLOCK) {
		while (c > lim) {
			size_t	 want = p.aim * i / n;
			uint32_t t2;

			t2 = cmp_kth(x, idx, c, want > k ? want : k).key;
			t = t2 > t ? t2 : t + 1;
			c = cmp_keep(idx, x, c, t);
		}
		c = cmp_bits(idx, c, cmp_mask(x + i, t), i);
	}
	c = cmp_bits(idx, c, cmp_mask_tail(x + i, n - i, t), i);

	off = c > k ? c - k : k - c;
	if (5 * off <= k)
		return c;
	if (c > k)
		return cmp_emit(idx, x, c, cmp_kth(x, idx, c, k));
	return compress_topk(idx, x, n, k);
}
