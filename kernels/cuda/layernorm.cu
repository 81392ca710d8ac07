/*
 * layernorm.cu: LayerNorm on the GPU (tokenwise.c's layernorm twins).  A
 * warp takes a row: its mean and variance in double, as on the CPU, so
 * that mean[] and rstd[] are the CPU's floats but in the rare case where
 * the two sums' different order rounds to another float; everything after
 * them is the CPU's float arithmetic, operation for operation (no FMA).
 * The parameter gradients are a thread a channel adding the rows in order,
 * as linear.cu's bias gradient does: the CPU's bits, at the cost of a
 * loop over the N rows (a few microseconds at the batches trained here).
 */
#include <math.h>

#include "kernels/cpu/transformer.h"
#include "kernels/cuda/cuda-internal.cuh"

using namespace hk;

#define LN_TPB		256
#define LN_WARPS	(LN_TPB / 32)

static unsigned
ln_blocks(int N)
{
	return grid_for((size_t)N, LN_WARPS, 65535);
}

static __global__ void __launch_bounds__(LN_TPB)
ln_forward(float *out, float *mean, float *rstd, const float *x,
    const float *w, const float *b, int N, int C)
{
	int	 lane = threadIdx.x & 31;
	int	 w0 = (int)((blockIdx.x * blockDim.x + threadIdx.x) >> 5);
	int	 nw = (int)((gridDim.x * blockDim.x) >> 5);

	for (int n = w0; n < N; n += nw) {
		const float *xr = x + (size_t)n * C;
		float	*o = out + (size_t)n * C;
		double	 m = 0, v = 0;
		float	 fm, fs;

		for (int c = lane; c < C; c += 32)
			m += xr[c];
		m = warp_sum(m) / C;
		for (int c = lane; c < C; c += 32) {
			double	t = xr[c] - m;

			v += t * t;
		}
		v = warp_sum(v) / C;
		fm = (float)m;
		fs = (float)(1.0 / sqrt(v + LAYERNORM_EPS));
		for (int c = lane; c < C; c += 32)
			o[c] = __fadd_rn(__fmul_rn(__fmul_rn(__fsub_rn(xr[c],
			    fm), fs), w[c]), b[c]);
		if (lane == 0) {
			mean[n] = fm;
			rstd[n] = fs;
		}
	}
}

int
cuda_layernorm_forward(float *out, float *mean, float *rstd, const float *x,
    const float *w, const float *b, int N, int C, cudaStream_t s)
{
	if (N <= 0 || C <= 0)
		return 0;
	ln_forward<<<ln_blocks(N), LN_TPB, 0, s>>>(out, mean, rstd, x, w, b, N,
	    C);
	CUDA_LAUNCHED();
	return 0;
}

/* dx += (dnorm - mean(dnorm) - norm mean(dnorm norm)) rstd, a warp a row,
 * where dnorm = w dout is the gradient at the normalised value. */
static __global__ void __launch_bounds__(LN_TPB)
ln_backward_dx(float *dx, const float *dout, const float *x, const float *w,
    const float *mean, const float *rstd, int N, int C)
{
	int	 lane = threadIdx.x & 31;
	int	 w0 = (int)((blockIdx.x * blockDim.x + threadIdx.x) >> 5);
	int	 nw = (int)((gridDim.x * blockDim.x) >> 5);

	for (int n = w0; n < N; n += nw) {
		const float *xr = x + (size_t)n * C, *d = dout + (size_t)n * C;
		float	*dxr = dx + (size_t)n * C;
		float	 m = mean[n], s = rstd[n], dm, dnm;
		double	 sum = 0, sumn = 0;

		for (int c = lane; c < C; c += 32) {
			float	norm = __fmul_rn(__fsub_rn(xr[c], m), s);
			float	dn = __fmul_rn(w[c], d[c]);

			sum += dn;
			sumn += __fmul_rn(dn, norm);
		}
		dm = (float)(warp_sum(sum) / C);
		dnm = (float)(warp_sum(sumn) / C);
		for (int c = lane; c < C; c += 32) {
			float	norm = __fmul_rn(__fsub_rn(xr[c], m), s);
			float	dn = __fmul_rn(w[c], d[c]);
			float	g = __fsub_rn(__fsub_rn(dn, dm),
				    __fmul_rn(norm, dnm));

			dxr[c] = __fadd_rn(dxr[c], __fmul_rn(g, s));
		}
	}
}

/* db[c] += sum of dout[., c]; dw[c] += sum of norm dout, rows in order. */
static __global__ void
ln_backward_dw(float *dw, float *db, const float *dout, const float *x,
    const float *mean, const float *rstd, int N, int C)
{
	int	 c = blockIdx.x * blockDim.x + threadIdx.x;
	float	 aw, ab;

	if (c >= C)
		return;
	aw = dw[c];
	ab = db[c];
	for (int n = 0; n < N; n++) {
		size_t	i = (size_t)n * C + c;
		float	d = dout[i];
		float	norm = __fmul_rn(__fsub_rn(x[i], mean[n]), rstd[n]);

		ab = __fadd_rn(ab, d);
		aw = __fadd_rn(aw, __fmul_rn(norm, d));
	}
	dw[c] = aw;
	db[c] = ab;
}

int
cuda_layernorm_backward(float *dx, float *dw, float *db, const float *dout,
    const float *x, const float *w, const float *mean, const float *rstd,
    int N, int C, cudaStream_t s)
{
	if (N <= 0 || C <= 0)
		return 0;
	ln_backward_dx<<<ln_blocks(N), LN_TPB, 0, s>>>(dx, dout, x, w, mean,
	    rstd, N, C);
	CUDA_LAUNCHED();
	ln_backward_dw<<<(C + EW_TPB - 1) / EW_TPB, EW_TPB, 0, s>>>(dw, db,
	    dout, x, mean, rstd, N, C);
	CUDA_LAUNCHED();
	return 0;
}
