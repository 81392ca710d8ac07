/*
 * xent.cu: softmax cross-entropy over the vocabulary on the GPU (xent.c's
 * twin), fused with its gradient: a block a row finds the row's maximum,
 * sums exp(l - max) in double, keeps the row's loss log(sum) - (l[y] -
 * max), and (scale not 0) overwrites the row with (softmax - onehot) *
 * scale, so the N*V probabilities are never stored beside the logits.
 * CUDA's expf is within 2 ulp of the CPU's, so are the gradients; the sums
 * are in double.  The rows' losses go to the workspace and one block adds
 * them in a fixed order, so the loss is the same every run.
 */
#include <math.h>

#include "kernels/cuda/cuda-internal.cuh"

using namespace hk;

#define XENT_TPB	256
#define XENT_WARPS	(XENT_TPB / 32)
#define SUM_TPB		1024

static __global__ void __launch_bounds__(XENT_TPB)
xent_rows(float *logits, double *rows, const int32_t *target, int N, int V,
    float scale)
{
	__shared__ float	wmax[XENT_WARPS];
	__shared__ double	wsum[XENT_WARPS];
	int			lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

	for (int n = blockIdx.x; n < N; n += gridDim.x) {
		float	*row = logits + (size_t)n * V;
		int	 y = target[n];
		float	 mx = -INFINITY, ly, inv;
		double	 sum = 0;

		if (y < 0) {
			if (scale != 0.0f)
				for (int v = threadIdx.x; v < V; v += blockDim.x)
					row[v] = 0.0f;
			if (threadIdx.x == 0)
				rows[n] = 0;
			continue;
		}
		ly = row[y];
		for (int v = threadIdx.x; v < V; v += blockDim.x)
			mx = fmaxf(mx, row[v]);
		mx = warp_max(mx);
		if (lane == 0)
			wmax[warp] = mx;
		__syncthreads();
		mx = wmax[0];
		for (int w = 1; w < XENT_WARPS; w++)
			mx = fmaxf(mx, wmax[w]);
		for (int v = threadIdx.x; v < V; v += blockDim.x)
			sum += expf(__fsub_rn(row[v], mx));
		sum = warp_sum(sum);
		if (lane == 0)
			wsum[warp] = sum;
		__syncthreads();
		sum = 0;
		for (int w = 0; w < XENT_WARPS; w++)
			sum += wsum[w];
		if (threadIdx.x == 0)
			rows[n] = log(sum) - (double)__fsub_rn(ly, mx);
		if (scale != 0.0f) {
			inv = (float)(1.0 / sum);
			for (int v = threadIdx.x; v < V; v += blockDim.x) {
				float	g = __fmul_rn(__fmul_rn(expf(__fsub_rn(
					    row[v], mx)), inv), scale);

				row[v] = v == y ? __fsub_rn(g, scale) : g;
			}
		}
		/* wmax and wsum are read again by the next row. */
		__syncthreads();
	}
}

/* *loss = the sum of rows[0..N), in one fixed order. */
static __global__ void __launch_bounds__(SUM_TPB)
xent_sum(double *loss, const double *rows, int N)
{
	__shared__ double	part[SUM_TPB / 32];
	double			mine = 0;

	for (int i = threadIdx.x; i < N; i += SUM_TPB)
		mine += rows[i];
	mine = warp_sum(mine);
	if ((threadIdx.x & 31) == 0)
		part[threadIdx.x >> 5] = mine;
	__syncthreads();
	if (threadIdx.x == 0) {
		double	total = 0;

		for (int w = 0; w < SUM_TPB / 32; w++)
			total += part[w];
		*loss = total;
	}
}

size_t
cuda_vocab_xent_workspace(int N)
{
	return align256((size_t)(N > 0 ? N : 1) * sizeof(double));
}

int
cuda_vocab_xent(float *logits, double *loss, const int32_t *target, int N,
    int V, float scale, void *ws, cudaStream_t s)
{
	if (N <= 0 || V <= 0) {
		if (loss != nullptr)
			CUDA_CHECK(cudaMemsetAsync(loss, 0, sizeof *loss, s));
		return 0;
	}
	xent_rows<<<grid_for((size_t)N, 1, 65535), XENT_TPB, 0, s>>>(logits,
	    (double *)ws, target, N, V, scale);
	CUDA_LAUNCHED();
	if (loss != nullptr) {
		xent_sum<<<1, SUM_TPB, 0, s>>>(loss, (const double *)ws, N);
		CUDA_LAUNCHED();
	}
	return 0;
}
