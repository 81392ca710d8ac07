/*
 * compress.h: the numeric kernels of gradient compression.  As in
 * kernels.h: no I/O, no threads, no allocation; callers own every buffer.
 *
 * Selection works on the magnitude's bit pattern (|x| with the sign bit
 * cleared), which orders like the magnitude, so +0 and -0 tie and a NaN
 * ranks above infinity.  Among equal magnitudes the LOWER index wins.
 * Selections return indices in ascending order.  n must fit in uint32_t.
 *
 * Sparse wire format (little-endian throughout):
 *   count			LEB128 varint
 *   count index gaps		LEB128 varints: idx[0], then idx[j] - idx[j-1]
 *				(so every gap after the first is >= 1)
 *   count values		IEEE binary16, 2 bytes each
 * The dense fp16 format is n binary16 values, 2 bytes each.
 */
#ifndef HUNTER_COMPRESS_H
#define HUNTER_COMPRESS_H

#include <stddef.h>
#include <stdint.h>

#include "lib/rng.h"

/* fp32 <-> IEEE binary16, round to nearest even; subnormals, infinities
 * and NaN (quietened, top payload bits kept, as F16C does) handled. */
uint16_t compress_f16(float);
float	compress_f32(uint16_t);

/* Entries an index buffer for a selection of k out of n must hold; the
 * filters write ahead of their count and need the slack. */
size_t	compress_idx_cap(size_t n, size_t k);
/* Floats of scratch compress_threshold needs (its random sample). */
size_t	compress_scratch_floats(size_t n);

/* Exactly min(k, n) indices of the largest |x|, ties to the lower index.
 * Radix select on the magnitude bits: O(n), no n-sized scratch.  For a
 * small k of a large n (4k at most n / 16, n at least 16384) a first
 * guess at the threshold, from every (n / 1024)-th entry, spares the
 * histogram pass when it collects at least k and at most n / 16. */
size_t	compress_topk(uint32_t *idx, const float *x, size_t n, size_t k);

/*
 * About k indices of large |x|: a threshold estimated from a stratified
 * random sample of 0.1-1% of x, then one filtering pass.  The count is
 * always within 20% of k (an overshoot is cut to the top k of the
 * candidates, an undershoot falls back to compress_topk).  Every index
 * whose |x| is above the smallest selected magnitude is selected.
 */
size_t	compress_threshold(uint32_t *idx, const float *x, size_t n,
	    size_t k, struct rng *, float *scratch);

/*
 * The largest finite |x[i]| over i in idx[0..m), or over x[0..m) when idx
 * is NULL; 0 when there is none.  The codecs below take a scale (a power
 * of two keeps it exact) so that small gradients stay clear of fp16's
 * subnormals: they send fp16(x * scale) and decode adds value * scale.
 */
float	compress_absmax(const float *x, const uint32_t *idx, size_t m);

/* Upper bound of compress_sparse_encode's output. */
size_t	compress_sparse_bound(size_t n, size_t count);
/* Encode x[idx[0..count)] (idx strictly increasing); returns bytes. */
size_t	compress_sparse_encode(uint8_t *out, const uint32_t *idx,
	    const float *x, size_t count, float scale);
/*
 * Add a sparse buffer into dense[n].  Returns the bytes consumed, or -1
 * (dense untouched) on a truncated or overlong varint, an index out of
 * range or not strictly increasing, or a count the buffer cannot hold.
 * Never reads past buf + len.
 */
long	compress_sparse_decode_add(float *dense, size_t n, const uint8_t *buf,
	    size_t len, float scale);

/* Dense fp16: out gets 2n bytes; decode adds n values into dense. */
void	compress_fp16_encode(uint8_t *out, const float *x, size_t n,
	    float scale);
void	compress_fp16_decode_add(float *dense, const uint8_t *in, size_t n,
	    float scale);

#endif
