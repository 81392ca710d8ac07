/*
 * activation.cu: ReLU, softmax with cross-entropy, and the accuracy count
 * on the GPU (activation.c's twins).
 *
 * ReLU and the softmax backward are element-wise and give the CPU's bits.
 * The softmax forward and the argmax count run as one block whose warps
 * take the rows in turn, a warp per row: the row's first maximum (ties to
 * the lower column, as the CPU), exp(l - max) with CUDA's expf (within 2
 * ulp, so probs are within a few ulp of the CPU's), the sum in double,
 * and the loss log(sum) - (l[label] - max) in double.  One block keeps
 * the sum of the losses in a fixed order, so it is the same every run;
 * the batches here are small (B * C in the thousands), so one block is
 * not what limits a step.
 */
#include "kernels/cuda/cuda-internal.cuh"

using namespace hk;

#define ROWS_TPB	1024
#define ROWS_WARPS	(ROWS_TPB / 32)

static __global__ void
act_relu(float *y, const float *x, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	    i += (size_t)gridDim.x * blockDim.x) {
		float	t = x[i];

		y[i] = t > 0.0f ? t : 0.0f;
	}
}

static __global__ void
act_relu_back(float *dx, const float *dy, const float *y, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	    i += (size_t)gridDim.x * blockDim.x) {
		float	g = dy[i], t = y[i];

		dx[i] = t > 0.0f ? g : 0.0f;
	}
}

int
cuda_relu_forward(float *y, const float *x, size_t n, cudaStream_t s)
{
	if (n == 0)
		return 0;
	act_relu<<<grid_for(n, EW_TPB), EW_TPB, 0, s>>>(y, x, n);
	CUDA_LAUNCHED();
	return 0;
}

int
cuda_relu_backward(float *dx, const float *dy, const float *y, size_t n,
    cudaStream_t s)
{
	if (n == 0)
		return 0;
	act_relu_back<<<grid_for(n, EW_TPB), EW_TPB, 0, s>>>(dx, dy, y, n);
	CUDA_LAUNCHED();
	return 0;
}

/* The column of the first maximum of row[0..C), across the warp. */
static __device__ int
act_row_argmax(const float *row, int C)
{
	int	lane = threadIdx.x & 31, best = lane < C ? lane : 0;
	float	bv = row[best];

	for (int j = lane + 32; j < C; j += 32) {
		if (row[j] > bv) {
			bv = row[j];
			best = j;
		}
	}
	for (int off = 16; off > 0; off >>= 1) {
		float	ov = __shfl_xor_sync(0xffffffffu, bv, off);
		int	ob = __shfl_xor_sync(0xffffffffu, best, off);

		if (ov > bv || (ov == bv && ob < best)) {
			bv = ov;
			best = ob;
		}
	}
	return best;
}

static __device__ double
act_warp_sum(double v)
{
	for (int off = 16; off > 0; off >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, off);
	return v;
}

/* One block: warp w takes rows w, w + ROWS_WARPS, ...; each warp keeps its
 * losses in order, then warp sums are added in warp order. */
static __global__ void __launch_bounds__(ROWS_TPB)
act_softmax_xent(float *probs, double *loss, const float *logits,
    const uint8_t *labels, int B, int C)
{
	__shared__ double	part[ROWS_WARPS];
	int			lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	double			mine = 0.0;

	for (int i = warp; i < B; i += ROWS_WARPS) {
		const float	*l = logits + (size_t)i * C;
		float		*p = probs + (size_t)i * C;
		float		 mx = l[act_row_argmax(l, C)], ly = l[labels[i]];
		double		 sum = 0.0;
		float		 inv;

		for (int j = lane; j < C; j += 32) {
			float	e = expf(__fsub_rn(l[j], mx));

			p[j] = e;
			sum += e;
		}
		sum = act_warp_sum(sum);
		__syncwarp();
		inv = (float)(1.0 / sum);
		for (int j = lane; j < C; j += 32)
			p[j] = __fmul_rn(p[j], inv);
		mine += log(sum) - ((double)ly - (double)mx);
	}
	if (lane == 0)
		part[warp] = mine;
	__syncthreads();
	if (threadIdx.x == 0 && loss != nullptr) {
		double	total = 0.0;

		for (int w = 0; w < ROWS_WARPS; w++)
			total += part[w];
		*loss = total;
	}
}

int
cuda_softmax_xent_forward(float *probs, double *loss, const float *logits,
    const uint8_t *labels, int B, int C, cudaStream_t s)
{
	if (B <= 0 || C <= 0) {
		if (loss != nullptr)
			CUDA_CHECK(cudaMemsetAsync(loss, 0, sizeof *loss, s));
		return 0;
	}
	act_softmax_xent<<<1, ROWS_TPB, 0, s>>>(probs, loss, logits, labels, B,
	    C);
	CUDA_LAUNCHED();
	return 0;
}

static __global__ void
act_softmax_back(float *d, const float *p, const uint8_t *labels, int B,
    int C, float scale)
{
	size_t	n = (size_t)B * C;

	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	    i += (size_t)gridDim.x * blockDim.x) {
		int	row = (int)(i / C), j = (int)(i % C);
		float	v = p[i];

		d[i] = j == labels[row] ? __fmul_rn(__fsub_rn(v, 1.0f), scale) :
		    __fmul_rn(v, scale);
	}
}

int
cuda_softmax_xent_backward(float *dlogits, const float *probs,
    const uint8_t *labels, int B, int C, float scale, cudaStream_t s)
{
	if (B <= 0 || C <= 0)
		return 0;
	act_softmax_back<<<grid_for((size_t)B * C, EW_TPB), EW_TPB, 0, s>>>(
	    dlogits, probs, labels, B, C, scale);
	CUDA_LAUNCHED();
	return 0;
}

static __global__ void __launch_bounds__(ROWS_TPB)
act_argmax_correct(int *correct, const float *logits, const uint8_t *labels,
    int B, int C)
{
	__shared__ int	part[ROWS_WARPS];
	int		lane = threadIdx.x & 31, warp = threadIdx.x >> 5, n = 0;

	for (int i = warp; i < B; i += ROWS_WARPS)
		n += act_row_argmax(logits + (size_t)i * C, C) == labels[i];
	if (lane == 0)
		part[warp] = n;
	__syncthreads();
	if (threadIdx.x == 0) {
		int	total = 0;

		for (int w = 0; w < ROWS_WARPS; w++)
			total += part[w];
		*correct = total;
	}
}

int
cuda_argmax_correct(int *correct, const float *logits, const uint8_t *labels,
    int B, int C, cudaStream_t s)
{
	if (B <= 0 || C <= 0) {
		CUDA_CHECK(cudaMemsetAsync(correct, 0, sizeof *correct, s));
		return 0;
	}
	act_argmax_correct<<<1, ROWS_TPB, 0, s>>>(correct, logits, labels, B,
	    C);
	CUDA_LAUNCHED();
	return 0;
}
