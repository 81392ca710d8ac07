/*
 * cuda-internal.cuh: what the .cu files of kernels/cuda share: launch
 * sizes, workspace layout, and an ordered compaction in three launches,
 * on which the selection and the codecs are built (what they share with
 * their CPU twins is kernels/compress-core.h).
 *
 * The compaction works on tiles of TILE items, IPT consecutive items per
 * thread.  A weight functor gives each item a count (1 or 0 for "keep
 * it", a byte length for the varint writer); tile_count_scan sums the
 * weights of each tile and scans the sums (cnt[t] = weight before tile
 * t, cnt[tiles] = the total); tile_emit scans again inside each tile and
 * calls the emitter with every item's offset, in index order.  The block
 * scans are CUB's; the scan over tiles is one block of 1024 threads with
 * a running carry, since there are few tiles (n / 4096).
 *
 * The transformer's kernels share, besides, the row-major GEMMs of
 * linear.cu (on this thread's cuBLAS handle) and the warp reductions.
 */
#ifndef HUNTER_CUDA_INTERNAL_CUH
#define HUNTER_CUDA_INTERNAL_CUH

#include <cublas_v2.h>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "kernels/cuda/cuda-kernels.h"

/* After a launch: a bad configuration is an error now. */
#define CUDA_LAUNCHED()	CUDA_CHECK(cudaGetLastError())

/* Copy bytes back from the device and wait for them. */
#define CUDA_FETCH(dst, src, bytes, s) do {				\
	CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost,	\
	    s));							\
	CUDA_CHECK(cudaStreamSynchronize(s));				\
} while (0)

namespace hk {

typedef unsigned long long u64;

constexpr int	TPB = 256;		/* threads of the tile kernels */
constexpr int	IPT = 16;		/* consecutive items per thread */
constexpr int	TILE = TPB * IPT;
constexpr int	SCAN_TPB = 1024;	/* the one block of the tile scan */
constexpr int	EW_TPB = 256;		/* element-wise kernels */

static inline size_t
tiles(size_t n)
{
	return (n + TILE - 1) / TILE;
}

/* A grid-stride loop: i over [0, n), spread over every thread. */
#define GRID_LOOP(i, n)							\
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;	\
	    i < (n); i += (size_t)gridDim.x * blockDim.x)

/* Blocks for a grid-stride loop over n items: enough to fill the GPU
 * (or at most cap), never more than the items need. */
static inline unsigned
grid_for(size_t n, int tpb, size_t cap = 8192)
{
	size_t	b = (n + tpb - 1) / tpb;

	if (b > cap)
		b = cap;
	return b > 0 ? (unsigned)b : 1u;
}

/* Round a byte size up to 256, to lay out workspaces. */
static inline size_t
align256(size_t b)
{
	return (b + 255) & ~(size_t)255;
}

/* Lay out a workspace: *part is the next bytes (rounded up to 256) at
 * *off from base; a null base only counts. */
template <class T>
static inline void
ws_part(T **part, void *base, size_t *off, size_t bytes)
{
	if (base != nullptr)
		*part = (T *)((char *)base + *off);
	*off += align256(bytes);
}

/*
 * Row-major C[M,N] = alpha op(A) op(B) + beta C, op a transpose where ta
 * (tb) is set, on stream s (linear.cu); gemm_strided does batch of them,
 * the i-th at A + i sa, B + i sb, C + i sc (the matrices of a batch may
 * interleave, as the heads of one row do, but outputs must not overlap).
 */
int	gemm(cudaStream_t s, bool ta, bool tb, int M, int N, int K,
	    float alpha, const float *A, int lda, const float *B, int ldb,
	    float beta, float *C, int ldc);
int	gemm_strided(cudaStream_t s, bool ta, bool tb, int M, int N, int K,
	    float alpha, const float *A, int lda, long long sa,
	    const float *B, int ldb, long long sb, float beta, float *C,
	    int ldc, long long sc, int batch);
/* y[rows,cols] = b in every row; db[cols] += the column sums of dy, the
 * rows added in order (the CPU's bits). */
int	bias_rows(float *y, const float *b, int rows, int cols,
	    cudaStream_t s);
int	bias_grad(float *db, const float *dy, int rows, int cols,
	    cudaStream_t s);

/* Sums and maxima across the 32 lanes of a warp (every lane gets it). */
static __device__ __forceinline__ double
warp_sum(double v)
{
	for (int off = 16; off > 0; off >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, off);
	return v;
}

static __device__ __forceinline__ float
warp_sumf(float v)
{
	for (int off = 16; off > 0; off >>= 1)
		v = __fadd_rn(v, __shfl_xor_sync(0xffffffffu, v, off));
	return v;
}

static __device__ __forceinline__ float
warp_max(float v)
{
	for (int off = 16; off > 0; off >>= 1)
		v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
	return v;
}

template <class W>
__global__ void __launch_bounds__(TPB)
tile_count(W w, size_t n, u64 *cnt)
{
	typedef cub::BlockReduce<u64, TPB>	Reduce;
	__shared__ typename Reduce::TempStorage	tmp;
	size_t					base;
	u64					sum = 0;

	base = (size_t)blockIdx.x * TILE + (size_t)threadIdx.x * IPT;
#pragma unroll
	for (int j = 0; j < IPT; j++) {
		if (base + j < n)
			sum += w(base + j);
	}
	sum = Reduce(tmp).Sum(sum);
	if (threadIdx.x == 0)
		cnt[blockIdx.x] = sum;
}

/* Exclusive scan of cnt[0..t) in place; cnt[t] gets the total. */
static __global__ void __launch_bounds__(SCAN_TPB)
tile_scan(u64 *cnt, size_t t)
{
	typedef cub::BlockScan<u64, SCAN_TPB>	Scan;
	__shared__ typename Scan::TempStorage	tmp;
	__shared__ u64				carry;
	u64					v, ex, all;

	if (threadIdx.x == 0)
		carry = 0;
	__syncthreads();
	for (size_t base = 0; base < t; base += SCAN_TPB) {
		size_t	i = base + threadIdx.x;

		v = i < t ? cnt[i] : 0;
		Scan(tmp).ExclusiveSum(v, ex, all);
		if (i < t)
			cnt[i] = carry + ex;
		__syncthreads();
		if (threadIdx.x == 0)
			carry += all;
		__syncthreads();
	}
	if (threadIdx.x == 0)
		cnt[t] = carry;
}

template <class W, class E>
__global__ void __launch_bounds__(TPB)
tile_emit(W w, E e, size_t n, const u64 *cnt)
{
	typedef cub::BlockScan<u64, TPB>	Scan;
	__shared__ typename Scan::TempStorage	tmp;
	u64					wt[IPT], sum = 0, pos;
	size_t					base;

	base = (size_t)blockIdx.x * TILE + (size_t)threadIdx.x * IPT;
#pragma unroll
	for (int j = 0; j < IPT; j++) {
		wt[j] = base + j < n ? w(base + j) : 0;
		sum += wt[j];
	}
	Scan(tmp).ExclusiveSum(sum, pos);
	pos += cnt[blockIdx.x];
#pragma unroll
	for (int j = 0; j < IPT; j++) {
		if (base + j < n) {
			e(base + j, pos, wt[j]);
			pos += wt[j];
		}
	}
}

/* Weights of n items summed per tile and scanned into cnt (tiles(n) + 1
 * entries); cnt[tiles(n)] is the total. */
template <class W>
static int
tile_count_scan(W w, size_t n, u64 *cnt, cudaStream_t s)
{
	size_t	t = tiles(n);

	if (t > 0) {
		tile_count<<<(unsigned)t, TPB, 0, s>>>(w, n, cnt);
		CUDA_LAUNCHED();
	}
	tile_scan<<<1, SCAN_TPB, 0, s>>>(cnt, t);
	CUDA_LAUNCHED();
	return 0;
}

/* The emitter over n items, after tile_count_scan with the same w. */
template <class W, class E>
static int
tile_emit_all(W w, E e, size_t n, const u64 *cnt, cudaStream_t s)
{
	size_t	t = tiles(n);

	if (t > 0) {
		tile_emit<<<(unsigned)t, TPB, 0, s>>>(w, e, n, cnt);
		CUDA_LAUNCHED();
	}
	return 0;
}

} /* namespace hk */

#endif
