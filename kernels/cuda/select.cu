/*
 * select.cu: top-k and the sampled threshold on the GPU, giving the same
 * indices as select.c (whose constants and sample plan are both's, in
 * kernels/compress-core.h).
 *
 * The k-th largest key is found by the CPU's radix select, three levels
 * of 11, 11 and 9 bits: a histogram of the keys that match the prefix so
 * far (shared-memory bins added into global ones), then one block picks
 * the bin that holds the k-th, scanning from the top.  What the levels
 * decide (prefix, how many of the k are still needed) stays on the
 * device, so top-k never waits for the host.  After the last level the
 * prefix is the k-th key and "need" its tie quota; when that is fewer
 * than all the equal keys, one more ordered pass finds the index of the
 * last one taken, so ties go to the lower index.  The tile compaction
 * (cuda-internal.cuh) then writes the indices in order.
 *
 * The threshold replays compress_threshold's decisions rather than its
 * loop: the sample is drawn on the host from the same rng, in the same
 * order, and t is the same rank of it.  The CPU raises t at the first
 * 64-entry block boundary where its candidates pass the limit, and they
 * are then exactly the keys >= t before that boundary; so the GPU counts
 * those, finds the first such boundary by a scan of per-block counts and
 * raises t there by the same rule (the prefix's k-th largest, or t + 1).
 * The result is every key >= t, cut or refilled by top-k when the CPU's
 * would be.
 */
#include <vector>

extern "C" {		/* C headers: compress_scratch_floats is C's */
#include "kernels/cpu/compress.h"
}
#include "kernels/compress-core.h"
#include "kernels/cuda/cuda-internal.cuh"

using namespace hk;

/* The radix select's state on the device. */
struct sel_state {
	uint32_t	prefix, pmask;	/* bits decided, and which */
	u64		need;		/* of the k, still to find below */
	u64		equal;		/* keys equal to the k-th (last level) */
	u64		last;		/* index of the last equal key taken */
	u64		first;		/* threshold: first boundary over lim */
	u64		count[2];	/* threshold: counts for the host */
};

/* Where each part of the workspace lies. */
struct sel_ws {
	struct sel_state	*st;
	uint32_t		*hist;		/* 2048 bins */
	u64			*cnt;		/* tiles(n) + 1 */
	u64			*cnt2;		/* tiles(n / 64 + 1) + 1 */
	float			*sample;	/* n / 100 + 1 */
	uint32_t		*spos;		/* n / 100 + 1 */
};

static size_t
sel_layout(size_t n, void *base, struct sel_ws *w)
{
	struct sel_ws	count_only;
	size_t		off = 0, s = compress_scratch_floats(n);

	w = w != nullptr ? w : &count_only;
	ws_part(&w->st, base, &off, sizeof *w->st);
	ws_part(&w->hist, base, &off, 2048 * sizeof(uint32_t));
	ws_part(&w->cnt, base, &off, (tiles(n) + 1) * sizeof(u64));
	ws_part(&w->cnt2, base, &off, (tiles(n / CMP_BLOCK + 1) + 1) *
	    sizeof(u64));
	ws_part(&w->sample, base, &off, s * sizeof(float));
	ws_part(&w->spos, base, &off, s * sizeof(uint32_t));
	return off;
}

size_t
cuda_select_workspace(size_t n)
{
	return sel_layout(n, nullptr, nullptr);
}

static __global__ void
sel_init(struct sel_state *st, u64 k)
{
	*st = sel_state{ 0, 0, k, 0, ~0ull, ~0ull, { 0, 0 } };
}

/* Histogram of bits [shift, shift + log2 nb) of the keys of x[0..m) that
 * match the prefix so far. */
template <int SHIFT, int NB>
static __global__ void
sel_hist(const float *x, size_t m, const struct sel_state *st,
    uint32_t *hist)
{
	__shared__ uint32_t	bins[NB];
	uint32_t		prefix = st->prefix, pmask = st->pmask;

	for (int b = threadIdx.x; b < NB; b += blockDim.x)
		bins[b] = 0;
	__syncthreads();
	GRID_LOOP(i, m) {
		uint32_t key = cmp_key(x[i]);

		if ((key & pmask) == prefix)
			atomicAdd(&bins[(key >> SHIFT) & (NB - 1)], 1u);
	}
	__syncthreads();
	for (int b = threadIdx.x; b < NB; b += blockDim.x) {
		if (bins[b] != 0)
			atomicAdd(&hist[b], bins[b]);
	}
}

/*
 * One block of 1024 threads, two bins each, counted from the top bin
 * down: the bin b with (keys above b) < need <= (keys above b) + hist[b]
 * holds the k-th; it joins the prefix and need drops by the keys above.
 */
template <int SHIFT, int NB>
static __global__ void __launch_bounds__(1024)
sel_pick(struct sel_state *st, const uint32_t *hist)
{
	typedef cub::BlockScan<u64, 1024>	Scan;
	__shared__ typename Scan::TempStorage	tmp;
	int					b0 = NB - 1 - 2 * (int)threadIdx.x;
	int					b1 = b0 - 1;
	u64					h0, h1, above, need = st->need;
	int					b = -1;

	h0 = b0 >= 0 ? hist[b0] : 0;
	h1 = b1 >= 0 ? hist[b1] : 0;
	Scan(tmp).ExclusiveSum(h0 + h1, above);
	if (b0 >= 0 && above < need && need <= above + h0)
		b = b0;
	else if (b1 >= 0 && above + h0 < need && need <= above + h0 + h1) {
		b = b1;
		above += h0;
	}
	if (b < 0)
		return;
	st->need = need - above;
	st->prefix |= (uint32_t)b << SHIFT;
	st->pmask |= (uint32_t)(NB - 1) << SHIFT;
	if (SHIFT == 0)
		st->equal = hist[b];
}

template <int SHIFT, int NB>
static int
sel_level(const float *x, size_t m, struct sel_ws *w, cudaStream_t s)
{
	CUDA_CHECK(cudaMemsetAsync(w->hist, 0, NB * sizeof(uint32_t), s));
	sel_hist<SHIFT, NB><<<grid_for(m, 256, 1024), 256, 0, s>>>(x, m, w->st,
	    w->hist);
	CUDA_LAUNCHED();
	sel_pick<SHIFT, NB><<<1, 1024, 0, s>>>(w->st, w->hist);
	CUDA_LAUNCHED();
	return 0;
}

/* The k-th largest key of x[0..m) and its tie quota into w->st, and the
 * key into *key on the host when key is not null; 1 <= k <= m. */
static int
sel_kth(const float *x, size_t m, size_t k, struct sel_ws *w, cudaStream_t s,
    uint32_t *key = nullptr)
{
	sel_init<<<1, 1, 0, s>>>(w->st, k);
	CUDA_LAUNCHED();
	if (sel_level<20, 2048>(x, m, w, s) != 0 ||
	    sel_level<9, 2048>(x, m, w, s) != 0 ||
	    sel_level<0, 512>(x, m, w, s) != 0)
		return -1;
	if (key != nullptr)
		CUDA_FETCH(key, &w->st->prefix, sizeof *key, s);
	return 0;
}

/* Weight: a key equal to the k-th, when not all of those are taken. */
struct sel_eq_w {
	const float			*x;
	const struct sel_state		*st;

	__device__ u64 operator()(size_t i) const {
		if (st->need == st->equal)
			return 0;
		return cmp_key(x[i]) == st->prefix;
	}
};

/* Emitter: remember the index of the need-th equal key. */
struct sel_last_e {
	struct sel_state	*st;

	__device__ void operator()(size_t i, u64 pos, u64 w) const {
		if (w != 0 && pos + 1 == st->need)
			st->last = i;
	}
};

/* Weight: taken by the top k. */
struct sel_take_w {
	const float			*x;
	const struct sel_state		*st;

	__device__ u64 operator()(size_t i) const {
		uint32_t key = cmp_key(x[i]);

		return key > st->prefix || (key == st->prefix && i <= st->last);
	}
};

/* Weight: key >= t. */
struct sel_ge_w {
	const float	*x;
	uint32_t	 t;

	__device__ u64 operator()(size_t i) const {
		return cmp_key(x[i]) >= t;
	}
};

/* Emitter: the index, at its place, when taken. */
struct sel_idx_e {
	uint32_t	*idx;

	__device__ void operator()(size_t i, u64 pos, u64 w) const {
		if (w != 0)
			idx[pos] = (uint32_t)i;
	}
};

/* Top k of x[0..n), 1 <= k < n, with the workspace laid out. */
static int
sel_topk(uint32_t *idx, const float *x, size_t n, size_t k, struct sel_ws *w,
    cudaStream_t s)
{
	sel_eq_w	eq = { x, w->st };
	sel_last_e	last = { w->st };
	sel_take_w	take = { x, w->st };
	sel_idx_e	emit = { idx };

	if (sel_kth(x, n, k, w, s) != 0 ||
	    tile_count_scan(eq, n, w->cnt, s) != 0 ||
	    tile_emit_all(eq, last, n, w->cnt, s) != 0 ||
	    tile_count_scan(take, n, w->cnt, s) != 0 ||
	    tile_emit_all(take, emit, n, w->cnt, s) != 0)
		return -1;
	return 0;
}

int
cuda_compress_topk(uint32_t *idx, const float *x, size_t n, size_t k,
    void *ws, cudaStream_t s)
{
	struct sel_ws	w;
	sel_ge_w	all = { x, 0 };	/* every key is >= 0 */
	sel_idx_e	emit = { idx };

	if (k == 0 || n == 0)
		return 0;
	sel_layout(n, ws, &w);
	if (k >= n)
		return tile_count_scan(all, n, w.cnt, s) != 0 ||
		    tile_emit_all(all, emit, n, w.cnt, s) != 0 ? -1 : 0;
	return sel_topk(idx, x, n, k, &w, s);
}

/* The sample: one entry of each of s strata, as compress_threshold. */
static __global__ void
sel_gather(float *sample, const float *x, const uint32_t *pos, size_t s)
{
	GRID_LOOP(j, s)
		sample[j] = x[pos[j]];
}

/* count[0] = keys >= t in x[0..m1), count[1] in x[0..n); m1 <= n. */
static __global__ void
sel_count_ge(const float *x, size_t n, size_t m1, uint32_t t,
    struct sel_state *st)
{
	typedef cub::BlockReduce<u64, 256>	Reduce;
	__shared__ typename Reduce::TempStorage	tmp;
	u64					a = 0, b = 0;

	GRID_LOOP(i, n) {
		u64 ge = cmp_key(x[i]) >= t;

		b += ge;
		a += ge & (i < m1);
	}
	a = Reduce(tmp).Sum(a);
	__syncthreads();
	b = Reduce(tmp).Sum(b);
	if (threadIdx.x == 0) {
		atomicAdd(&st->count[0], a);
		atomicAdd(&st->count[1], b);
	}
}

/* Keys >= t in x[0..m1) and in x[0..n), on the host. */
static int
sel_counts(const float *x, size_t n, size_t m1, uint32_t t, struct sel_ws *w,
    u64 out[2], cudaStream_t s)
{
	CUDA_CHECK(cudaMemsetAsync(w->st->count, 0, sizeof w->st->count, s));
	sel_count_ge<<<grid_for(n, 256, 2048), 256, 0, s>>>(x, n, m1, t,
	    w->st);
	CUDA_LAUNCHED();
	CUDA_FETCH(out, w->st->count, 2 * sizeof(u64), s);
	return 0;
}

/* Weight: keys >= t in the 64-entry block j. */
struct sel_block_w {
	const float	*x;
	size_t		 n;
	uint32_t	 t;

	__device__ u64 operator()(size_t j) const {
		size_t	i = j * CMP_BLOCK, e = i + CMP_BLOCK < n ? i + CMP_BLOCK :
			    n;
		u64	c = 0;

		for (; i < e; i++)
			c += cmp_key(x[i]) >= t;
		return c;
	}
};

/* Emitter: the first boundary j in [from, to) with more than lim keys
 * >= t before it (pos is that count). */
struct sel_first_e {
	struct sel_state	*st;
	u64			 from, to, lim;

	__device__ void operator()(size_t j, u64 pos, u64 w) const {
		if (j >= from && j < to && pos > lim)
			atomicMin(&st->first, (u64)j);
	}
};

/* The first block boundary at or after from where compress_threshold's
 * filter would hold more than lim candidates under t; *at = ~0 if none. */
static int
sel_first_over(const float *x, size_t n, uint32_t t, size_t from, size_t lim,
    struct sel_ws *w, u64 *at, cudaStream_t s)
{
	size_t		nb = n / CMP_BLOCK;	/* boundaries the CPU checks */
	sel_block_w	bw = { x, n, t };
	sel_first_e	fe = { w->st, from, nb, lim };

	CUDA_CHECK(cudaMemsetAsync(&w->st->first, 0xff, sizeof(u64), s));
	if (tile_count_scan(bw, nb, w->cnt2, s) != 0 ||
	    tile_emit_all(bw, fe, nb, w->cnt2, s) != 0)
		return -1;
	CUDA_FETCH(at, &w->st->first, sizeof *at, s);
	return 0;
}

/* The sample's threshold: positions drawn as compress_threshold draws
 * them, entries gathered, the rank-th largest key. */
static int
sel_sample_t(const float *x, size_t n, const struct cmp_plan *p,
    struct rng *r, struct sel_ws *w, uint32_t *t, cudaStream_t s)
{
	struct cmp_strata	st = cmp_strata(n, p->s);
	std::vector<uint32_t>	pos(p->s);

	for (size_t j = 0; j < p->s; j++)
		pos[j] = cmp_stratum_next(&st, r);
	CUDA_CHECK(cudaMemcpyAsync(w->spos, pos.data(), p->s * sizeof pos[0],
	    cudaMemcpyHostToDevice, s));
	CUDA_CHECK(cudaStreamSynchronize(s));	/* before pos is freed */
	sel_gather<<<grid_for(p->s, EW_TPB), EW_TPB, 0, s>>>(w->sample, x,
	    w->spos, p->s);
	CUDA_LAUNCHED();
	return sel_kth(w->sample, p->s, p->rank, w, s, t);
}

int
cuda_compress_threshold(uint32_t *idx, size_t *count, const float *x,
    size_t n, size_t k, struct rng *r, void *ws, cudaStream_t s)
{
	struct sel_ws	w;
	size_t		lim = cmp_lim(n, k), off, from = 0;
	struct cmp_plan	p;
	size_t		last_b;
	uint32_t	t, t2;
	u64		c[2], j;

	*count = 0;
	if (k == 0)
		return 0;
	if (k >= n || n < CMP_SMALL) {
		if (cuda_compress_topk(idx, x, n, k, ws, s) != 0)
			return -1;
		CUDA_CHECK(cudaStreamSynchronize(s));
		*count = k < n ? k : n;
		return 0;
	}
	sel_layout(n, ws, &w);
	p = cmp_plan(n, k);
	if (sel_sample_t(x, n, &p, r, &w, &t, s) != 0)
		return -1;

	/* The last boundary the CPU checks is the start of the last whole
	 * block; candidates only grow, so if there are not too many there,
	 * there are not too many anywhere. */
	last_b = (n / CMP_BLOCK - 1) * CMP_BLOCK;
	for (;;) {
		if (sel_counts(x, n, last_b, t, &w, c, s) != 0)
			return -1;
		if (c[0] <= lim)
			break;
		if (sel_first_over(x, n, t, from, lim, &w, &j, s) != 0)
			return -1;
		if (j == ~0ull)		/* cannot be, as c[0] > lim */
			return cuda_fail(__FILE__, __LINE__, "sel_first_over",
			    "no boundary over the limit");
		for (size_t i = (size_t)j * CMP_BLOCK;;) {
			size_t	want = p.aim * i / n;

			if (sel_counts(x, i, i, t, &w, c, s) != 0)
				return -1;
			if (c[0] <= lim)
				break;
			if (sel_kth(x, i, want > k ? want : k, &w, s, &t2) != 0)
				return -1;
			t = t2 > t ? t2 : t + 1;
		}
		from = (size_t)j + 1;
	}

	if (sel_counts(x, n, n, t, &w, c, s) != 0)
		return -1;
	off = c[1] > k ? c[1] - k : k - c[1];
	if (5 * off <= k) {
		sel_ge_w	ge = { x, t };
		sel_idx_e	emit = { idx };

		if (tile_count_scan(ge, n, w.cnt, s) != 0 ||
		    tile_emit_all(ge, emit, n, w.cnt, s) != 0)
			return -1;
		CUDA_CHECK(cudaStreamSynchronize(s));
		*count = c[1];
		return 0;
	}
	if (sel_topk(idx, x, n, k, &w, s) != 0)
		return -1;
	CUDA_CHECK(cudaStreamSynchronize(s));
	*count = k;
	return 0;
}
