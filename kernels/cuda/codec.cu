/*
 * codec.cu: the scale's absmax and the dense fp16 and sparse (delta
 * varint + fp16) codecs on the GPU, byte for byte codec.c's (formats in
 * compress.h).
 *
 * fp16 is codec.c's integer rounding and the varint codec.c's too (both
 * kernels/compress-core.h), so NaN payloads and subnormals come out the
 * same, not the hardware's __float2half.  The sparse encoder sizes each
 * index gap's varint, places them by the tile compaction (a scan of the
 * lengths) and writes the values after the last varint.  The decoder
 * finds the varints the same way: the byte after each terminator (high
 * bit clear) starts the next, so a scan of the terminators places every
 * gap; each is then read by cmp_get_varint, the gaps are scanned into
 * indices, and only a buffer the CPU would accept is added into dense.
 * Decoding adds in place with __fmul_rn and __fadd_rn, the CPU's
 * rounding, one thread per index: the indices are strictly increasing,
 * so no two threads add into one place.
 */
#include "kernels/compress-core.h"
#include "kernels/cuda/cuda-internal.cuh"

using namespace hk;

static __global__ void
codec_fp16_enc(uint8_t *out, const float *x, size_t n, float scale)
{
	GRID_LOOP(i, n) {
		uint16_t h = cmp_f16(__fmul_rn(x[i], scale));

		out[2 * i] = (uint8_t)h;
		out[2 * i + 1] = (uint8_t)(h >> 8);
	}
}

static __global__ void
codec_fp16_dec(float *dense, const uint8_t *in, size_t n, float scale)
{
	GRID_LOOP(i, n) {
		uint16_t h = (uint16_t)(in[2 * i] | in[2 * i + 1] << 8);

		dense[i] = __fadd_rn(dense[i], __fmul_rn(cmp_f32(h), scale));
	}
}

int
cuda_fp16_encode(uint8_t *out, const float *x, size_t n, float scale,
    cudaStream_t s)
{
	if (n == 0)
		return 0;
	codec_fp16_enc<<<grid_for(n, EW_TPB), EW_TPB, 0, s>>>(out, x, n, scale);
	CUDA_LAUNCHED();
	return 0;
}

int
cuda_fp16_decode_add(float *dense, const uint8_t *in, size_t n, float scale,
    cudaStream_t s)
{
	if (n == 0)
		return 0;
	codec_fp16_dec<<<grid_for(n, EW_TPB), EW_TPB, 0, s>>>(dense, in, n,
	    scale);
	CUDA_LAUNCHED();
	return 0;
}

/* The scale's absmax. */

struct codec_max {
	__device__ uint32_t operator()(uint32_t a, uint32_t b) const {
		return a > b ? a : b;
	}
};

/* Largest finite key over x[idx[j]] (or x[j]) into *out as a float. */
static __global__ void
codec_absmax(uint32_t *out, const float *x, const uint32_t *idx, size_t m)
{
	typedef cub::BlockReduce<uint32_t, 256>	Reduce;
	__shared__ typename Reduce::TempStorage	tmp;
	uint32_t				best = 0;

	GRID_LOOP(j, m) {
		uint32_t key = cmp_key(x[idx != nullptr ? idx[j] : j]);

		key = key < CMP_INF ? key : 0;
		best = key > best ? key : best;
	}
	best = Reduce(tmp).Reduce(best, codec_max());
	if (threadIdx.x == 0 && best != 0)
		atomicMax(out, best);
}

int
cuda_compress_absmax(float *out, const float *x, const uint32_t *idx,
    size_t m, cudaStream_t s)
{
	CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof *out, s));
	if (m == 0)
		return 0;
	codec_absmax<<<grid_for(m, 256, 2048), 256, 0, s>>>((uint32_t *)out, x,
	    idx, m);
	CUDA_LAUNCHED();
	return 0;
}

/* Sparse encoding. */

static __device__ __forceinline__ uint32_t
codec_gap(const uint32_t *idx, size_t j)
{
	return j == 0 ? idx[0] : idx[j] - idx[j - 1];
}

/* Weight: the bytes of gap j's varint. */
struct codec_len_w {
	const uint32_t	*idx;

	__device__ u64 operator()(size_t j) const {
		return (u64)cmp_varint_len(codec_gap(idx, j));
	}
};

/* Emitter: gap j's varint at its offset. */
struct codec_put_e {
	const uint32_t	*idx;
	uint8_t		*out;

	__device__ void operator()(size_t j, u64 pos, u64 w) const {
		cmp_put_varint(out + pos, codec_gap(idx, j));
	}
};

/* The count's varint at out (hl bytes), then the values after the gaps,
 * whose length the scan left in *gaps. */
static __global__ void
codec_values(uint8_t *out, int hl, const u64 *gaps, const uint32_t *idx,
    const float *x, size_t count, float scale)
{
	uint8_t	*vals = out + hl + *gaps;

	if (blockIdx.x == 0 && threadIdx.x == 0)
		cmp_put_varint(out, (uint32_t)count);
	GRID_LOOP(j, count) {
		uint16_t h = cmp_f16(__fmul_rn(x[idx[j]], scale));

		vals[2 * j] = (uint8_t)h;
		vals[2 * j + 1] = (uint8_t)(h >> 8);
	}
}

size_t
cuda_sparse_encode_workspace(size_t count)
{
	return align256((tiles(count) + 1) * sizeof(u64));
}

int
cuda_sparse_encode(uint8_t *out, size_t *bytes, const uint32_t *idx,
    const float *x, size_t count, float scale, void *ws, cudaStream_t s)
{
	u64		*cnt = (u64 *)ws, gaps = 0;
	int		 hl = cmp_varint_len((uint32_t)count);
	codec_len_w	 lw = { idx };
	codec_put_e	 pe = { idx, out + hl };

	*bytes = 0;
	if (tile_count_scan(lw, count, cnt, s) != 0 ||
	    tile_emit_all(lw, pe, count, cnt, s) != 0)
		return -1;
	codec_values<<<grid_for(count, EW_TPB), EW_TPB, 0, s>>>(out, hl,
	    cnt + tiles(count), idx, x, count, scale);
	CUDA_LAUNCHED();
	CUDA_FETCH(&gaps, cnt + tiles(count), sizeof gaps, s);
	*bytes = (size_t)hl + (size_t)gaps + 2 * count;
	return 0;
}

/* Sparse decoding. */

struct codec_dec_state {
	u64	bad;		/* nonzero: the CPU would refuse the buffer */
	u64	vals;		/* offset of the values */
};

struct codec_dec_ws {
	struct codec_dec_state	*st;
	u64			*ends;	/* offset of each gap's last byte */
	u64			*at;	/* gaps, then indices */
	u64			*cnt;
};

/* The most entries a buffer of len bytes may announce for n floats. */
static size_t
codec_max_count(size_t n, size_t len)
{
	return n < len / 3 ? n : len / 3;
}

static size_t
codec_dec_layout(size_t n, size_t len, void *base, struct codec_dec_ws *w)
{
	struct codec_dec_ws	count_only;
	size_t			c = codec_max_count(n, len), off = 0;

	w = w != nullptr ? w : &count_only;
	ws_part(&w->st, base, &off, sizeof *w->st);
	ws_part(&w->ends, base, &off, c * sizeof(u64));
	ws_part(&w->at, base, &off, c * sizeof(u64));
	ws_part(&w->cnt, base, &off, (tiles(5 * c) + 1) * sizeof(u64));
	return off;
}

size_t
cuda_sparse_decode_workspace(size_t n, size_t len)
{
	return codec_dec_layout(n, len, nullptr, nullptr);
}

/* Weight: a varint's last byte. */
struct codec_term_w {
	const uint8_t	*b;

	__device__ u64 operator()(size_t i) const {
		return (b[i] & 0x80) == 0;
	}
};

/* Emitter: where the first count varints end. */
struct codec_ends_e {
	u64	*ends;
	size_t	 count;

	__device__ void operator()(size_t i, u64 pos, u64 w) const {
		if (w != 0 && pos < count)
			ends[pos] = i;
	}
};

/* Each gap's varint, checked as the CPU's decoder checks it; *terms is
 * how many varints the bytes hold. */
static __global__ void
codec_gaps(const uint8_t *b, const u64 *terms, struct codec_dec_ws w,
    size_t count)
{
	if (*terms < count) {		/* cut short, or a varint too long */
		if (blockIdx.x == 0 && threadIdx.x == 0)
			w.st->bad = 1;
		return;
	}
	GRID_LOOP(j, count) {
		u64		start = j == 0 ? 0 : w.ends[j - 1] + 1;
		uint32_t	v = 0;

		/* The only terminator in the range is its last byte. */
		if (cmp_get_varint(b + start, b + w.ends[j] + 1, &v) ==
		    nullptr) {
			w.st->bad = 1;
			continue;
		}
		if (j > 0 && v == 0)
			w.st->bad = 1;
		w.at[j] = v;
	}
}

/* Weight: gap j; emitter: index j, in place of the gap. */
struct codec_gap_w {
	const u64	*at;

	__device__ u64 operator()(size_t j) const {
		return at[j];
	}
};

struct codec_at_e {
	u64	*at;

	__device__ void operator()(size_t j, u64 pos, u64 w) const {
		at[j] = pos + w;
	}
};

/* The last index in range, and room for the values. */
static __global__ void
codec_dec_check(struct codec_dec_ws w, size_t count, size_t n, size_t hl,
    size_t len)
{
	u64	vals;

	if (w.st->bad)
		return;
	if (w.at[count - 1] >= n) {
		w.st->bad = 1;
		return;
	}
	vals = hl + w.ends[count - 1] + 1;
	if ((len - vals) / 2 < count)
		w.st->bad = 1;
	w.st->vals = vals;
}

static __global__ void
codec_dec_add(float *dense, const uint8_t *vals, const u64 *at, size_t count,
    float scale)
{
	GRID_LOOP(j, count) {
		uint16_t h = (uint16_t)(vals[2 * j] | vals[2 * j + 1] << 8);

		dense[at[j]] = __fadd_rn(dense[at[j]],
		    __fmul_rn(cmp_f32(h), scale));
	}
}

int
cuda_sparse_decode_add(float *dense, size_t n, const uint8_t *buf,
    size_t len, float scale, long *used, void *ws, cudaStream_t s)
{
	struct codec_dec_ws	w;
	struct codec_dec_state	st;
	uint8_t			head[5];
	const uint8_t		*p;
	size_t			hl, count, region;
	uint32_t		c32;

	*used = -1;
	codec_dec_layout(n, len, ws, &w);
	CUDA_FETCH(head, buf, len < 5 ? len : 5, s);
	if ((p = cmp_get_varint(head, head + (len < 5 ? len : 5), &c32)) ==
	    nullptr)
		return 0;
	hl = (size_t)(p - head);
	count = c32;
	if (count > n || count > (len - hl) / 3)
		return 0;
	if (count == 0) {
		*used = (long)hl;
		return 0;
	}
	/* count varints of at most 5 bytes each end within 5 * count bytes,
	 * or one of them is too long: either way the CPU refuses it. */
	region = len - hl < 5 * count ? len - hl : 5 * count;
	{
		codec_term_w	tw = { buf + hl };
		codec_ends_e	ee = { w.ends, count };
		codec_gap_w	gw = { w.at };
		codec_at_e	ae = { w.at };

		CUDA_CHECK(cudaMemsetAsync(w.st, 0, sizeof *w.st, s));
		if (tile_count_scan(tw, region, w.cnt, s) != 0 ||
		    tile_emit_all(tw, ee, region, w.cnt, s) != 0)
			return -1;
		codec_gaps<<<grid_for(count, EW_TPB), EW_TPB, 0, s>>>(buf + hl,
		    w.cnt + tiles(region), w, count);
		CUDA_LAUNCHED();
		if (tile_count_scan(gw, count, w.cnt, s) != 0 ||
		    tile_emit_all(gw, ae, count, w.cnt, s) != 0)
			return -1;
	}
	codec_dec_check<<<1, 1, 0, s>>>(w, count, n, hl, len);
	CUDA_LAUNCHED();
	CUDA_FETCH(&st, w.st, sizeof st, s);
	if (st.bad)
		return 0;
	codec_dec_add<<<grid_for(count, EW_TPB), EW_TPB, 0, s>>>(dense,
	    buf + st.vals, w.at, count, scale);
	CUDA_LAUNCHED();
	CUDA_CHECK(cudaStreamSynchronize(s));
	*used = (long)(st.vals + 2 * count);
	return 0;
}
