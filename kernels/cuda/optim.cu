/*
 * optim.cu: SGD with momentum and AdamW on the GPU (optim.c's twins).
 * The per-step scalars are worked out on the host exactly as optim.c
 * does; the per-element arithmetic is the CPU's, operation for operation,
 * with the _rn intrinsics so that nvcc fuses nothing into an FMA, hence
 * the same bits as the CPU.
 */
#include <math.h>

#include "kernels/cuda/cuda-internal.cuh"

using namespace hk;

/* Scalars of one AdamW step, as optim.c's struct optim_adamw. */
struct optim_adamw {
	float	lr, beta1, beta2, c1, c2, r1, r2, eps, wd;
};

static __global__ void
optim_sgd(float *p, const float *g, size_t n, float lr, float wd)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	    i += (size_t)gridDim.x * blockDim.x)
		p[i] = __fsub_rn(p[i], __fmul_rn(lr, __fadd_rn(g[i],
		    __fmul_rn(wd, p[i]))));
}

static __global__ void
optim_sgd_momentum(float *p, const float *g, float *m, size_t n, float lr,
    float mu, float wd)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	    i += (size_t)gridDim.x * blockDim.x) {
		float	pi = p[i];
		float	mi = __fadd_rn(__fmul_rn(mu, m[i]), __fadd_rn(g[i],
			    __fmul_rn(wd, pi)));

		m[i] = mi;
		p[i] = __fsub_rn(pi, __fmul_rn(lr, mi));
	}
}

static __global__ void
optim_adamw_k(float *p, const float *g, float *m, float *v, size_t n,
    struct optim_adamw a)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	    i += (size_t)gridDim.x * blockDim.x) {
		float	gi = g[i], pi = p[i], mi, vi, d;

		mi = __fadd_rn(__fmul_rn(a.beta1, m[i]), __fmul_rn(a.c1, gi));
		vi = __fadd_rn(__fmul_rn(a.beta2, v[i]),
		    __fmul_rn(__fmul_rn(a.c2, gi), gi));
		m[i] = mi;
		v[i] = vi;
		d = __fsqrt_rn(__fmul_rn(vi, a.r2));
		p[i] = __fsub_rn(pi, __fmul_rn(a.lr, __fadd_rn(__fdiv_rn(
		    __fmul_rn(mi, a.r1), __fadd_rn(d, a.eps)),
		    __fmul_rn(a.wd, pi))));
	}
}

int
cuda_sgd_step(float *p, const float *g, float *m, size_t n, float lr,
    float mu, float wd, cudaStream_t s)
{
	if (n == 0)
		return 0;
	if (mu == 0.0f)
		optim_sgd<<<grid_for(n, EW_TPB), EW_TPB, 0, s>>>(p, g, n, lr,
		    wd);
	else
		optim_sgd_momentum<<<grid_for(n, EW_TPB), EW_TPB, 0, s>>>(p, g,
		    m, n, lr, mu, wd);
	CUDA_LAUNCHED();
	return 0;
}

int
cuda_adamw_step(float *p, const float *g, float *m, float *v, size_t n,
    float lr, float beta1, float beta2, float eps, float wd, long t,
    cudaStream_t s)
{
	struct optim_adamw	a = {
		lr, beta1, beta2, 1.0f - beta1, 1.0f - beta2,
		(float)(1.0 / (1.0 - pow(beta1, (double)t))),
		(float)(1.0 / (1.0 - pow(beta2, (double)t))), eps, wd
	};

	if (n == 0)
		return 0;
	optim_adamw_k<<<grid_for(n, EW_TPB), EW_TPB, 0, s>>>(p, g, m, v, n, a);
	CUDA_LAUNCHED();
	return 0;
}
