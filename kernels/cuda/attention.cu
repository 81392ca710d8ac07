/*
 * attention.cu: causal multi-head self-attention on the GPU (attention.c's
 * twin).  As on the CPU, each (sample, head) is two GEMMs forward (the
 * scores, then the probabilities times the values) and four backward, on
 * strided views into the fused qkv buffer, so no head is copied out; here
 * they are cuBLAS's strided batches: the heads of a sample interleave in a
 * row with a stride of d, the samples follow each other with a stride of
 * T * 3C, so each product runs as min(B, H) batches of max(B, H).
 *
 * Memory is the CPU's: att[B,H,T,T] keeps the probabilities (the scores
 * are overwritten by their softmax in place), and the backward pass takes
 * max(B, H) * T * T floats of workspace for the probabilities' gradient of
 * one batch.  Not tiled: the full T x T products are computed and the
 * upper triangle masked, as on the CPU.
 *
 * The softmaxes are a warp a row: the row's maximum, CUDA's expf, the sum
 * in float across the warp (another order than the CPU's, so within a few
 * ulp), every step after it the CPU's rounding (no FMA contraction).
 */
#include <math.h>

#include "kernels/cuda/cuda-internal.cuh"

using namespace hk;

#define ATT_TPB		256
#define ATT_WARPS	(ATT_TPB / 32)

/* An operand of attention's products: the matrix of sample b, head h is
 * at p + b * sb + h * sh, with leading dimension ld. */
struct att_view {
	const float	*p;
	int		 ld;
	long long	 sb, sh;
};

/* The shape of the batches: `outer` launches, each of `inner` products,
 * over heads when there are at least as many heads as samples. */
struct att_plan {
	int	 B, H, outer, inner;
	bool	 by_head;
};

static att_plan
att_plan_of(int B, int H)
{
	att_plan	p;

	p.B = B;
	p.H = H;
	p.by_head = H >= B;
	p.outer = p.by_head ? B : H;
	p.inner = p.by_head ? H : B;
	return p;
}

/* The product of chunk o: C = alpha op(A) op(B) + beta C for its inner
 * samples or heads. */
static int
att_gemm(const att_plan &pl, int o, cudaStream_t s, bool ta, bool tb, int M,
    int N, int K, float alpha, att_view a, att_view b, float beta,
    att_view c)
{
	long long	 ao, bo, co, as, bs, cs;

	ao = pl.by_head ? o * a.sb : o * a.sh;
	bo = pl.by_head ? o * b.sb : o * b.sh;
	co = pl.by_head ? o * c.sb : o * c.sh;
	as = pl.by_head ? a.sh : a.sb;
	bs = pl.by_head ? b.sh : b.sb;
	cs = pl.by_head ? c.sh : c.sb;
	return gemm_strided(s, ta, tb, M, N, K, alpha, a.p + ao, a.ld, as,
	    b.p + bo, b.ld, bs, beta, (float *)c.p + co, c.ld, cs, pl.inner);
}

/* Softmax in place of each row of n T x T score matrices, row i over
 * columns j <= i; the rest zeroed. */
static __global__ void __launch_bounds__(ATT_TPB)
att_softmax(float *att, size_t rows, int T)
{
	int	 lane = threadIdx.x & 31;
	size_t	 w0 = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5;
	size_t	 nw = ((size_t)gridDim.x * blockDim.x) >> 5;

	for (size_t r = w0; r < rows; r += nw) {
		float	*row = att + r * T;
		int	 i = (int)(r % T);
		float	 mx = -INFINITY, sum = 0.0f, inv;

		for (int j = lane; j <= i; j += 32)
			mx = fmaxf(mx, row[j]);
		mx = warp_max(mx);
		for (int j = lane; j <= i; j += 32) {
			float	e = expf(__fsub_rn(row[j], mx));

			row[j] = e;
			sum = __fadd_rn(sum, e);
		}
		sum = warp_sumf(sum);
		inv = __fdiv_rn(1.0f, sum);
		for (int j = lane; j < T; j += 32)
			row[j] = j <= i ? __fmul_rn(row[j], inv) : 0.0f;
	}
}

/*
 * Through the softmax, in place: ws holds the gradient of the
 * probabilities of n matrices (the z-th at ws + z T T, its probabilities
 * at att + z astride) and becomes that of the scaled scores,
 * a (g - sum_j a g) scale, zero above the diagonal.
 */
static __global__ void __launch_bounds__(ATT_TPB)
att_softmax_back(float *ws, const float *att, long long astride, size_t rows,
    int T, float scale)
{
	int	 lane = threadIdx.x & 31;
	size_t	 w0 = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5;
	size_t	 nw = ((size_t)gridDim.x * blockDim.x) >> 5;

	for (size_t r = w0; r < rows; r += nw) {
		size_t	 z = r / T;
		int	 i = (int)(r % T);
		const float *ar = att + z * astride + (size_t)i * T;
		float	*wr = ws + r * T, dot = 0.0f;

		for (int j = lane; j <= i; j += 32)
			dot = __fadd_rn(dot, __fmul_rn(ar[j], wr[j]));
		dot = warp_sumf(dot);
		for (int j = lane; j < T; j += 32)
			wr[j] = j <= i ? __fmul_rn(__fmul_rn(ar[j],
			    __fsub_rn(wr[j], dot)), scale) : 0.0f;
	}
}

static unsigned
att_blocks(size_t rows)
{
	return grid_for(rows, ATT_WARPS, 65535);
}

size_t
cuda_attention_workspace(int B, int T, int H)
{
	att_plan	pl = att_plan_of(B, H);

	return (size_t)pl.inner * T * T * sizeof(float);
}

int
cuda_attention_forward(float *out, float *att, const float *qkv, int B,
    int T, int C, int H, cudaStream_t s)
{
	att_plan	 pl = att_plan_of(B, H);
	int		 d = C / H, ld = 3 * C;
	long long	 tt = (long long)T * T;
	float		 scale = 1.0f / sqrtf((float)d);
	att_view	 q = { qkv, ld, (long long)T * ld, d };
	att_view	 k = { qkv + C, ld, (long long)T * ld, d };
	att_view	 v = { qkv + 2 * C, ld, (long long)T * ld, d };
	att_view	 a = { att, T, H * tt, tt };
	att_view	 o = { out, C, (long long)T * C, d };
	size_t		 rows = (size_t)B * H * T;

	if (B <= 0 || T <= 0 || H <= 0)
		return 0;
	for (int i = 0; i < pl.outer; i++)
		if (att_gemm(pl, i, s, false, true, T, T, d, scale, q, k, 0.0f,
		    a) != 0)
			return -1;
	att_softmax<<<att_blocks(rows), ATT_TPB, 0, s>>>(att, rows, T);
	CUDA_LAUNCHED();
	for (int i = 0; i < pl.outer; i++)
		if (att_gemm(pl, i, s, false, false, T, d, T, 1.0f, a, v, 0.0f,
		    o) != 0)
			return -1;
	return 0;
}

int
cuda_attention_backward(float *dqkv, const float *dout, const float *qkv,
    const float *att, float *ws, int B, int T, int C, int H, cudaStream_t s)
{
	att_plan	 pl = att_plan_of(B, H);
	int		 d = C / H, ld = 3 * C;
	long long	 tt = (long long)T * T, row = (long long)T * ld;
	float		 scale = 1.0f / sqrtf((float)d);
	att_view	 q = { qkv, ld, row, d }, k = { qkv + C, ld, row, d };
	att_view	 v = { qkv + 2 * C, ld, row, d };
	att_view	 dq = { dqkv, ld, row, d }, dk = { dqkv + C, ld, row, d };
	att_view	 dv = { dqkv + 2 * C, ld, row, d };
	att_view	 a = { att, T, H * tt, tt };
	att_view	 dO = { dout, C, (long long)T * C, d };
	/* The workspace holds one chunk's inner matrices. */
	att_view	 g = { ws, T, pl.by_head ? 0 : tt, pl.by_head ? tt : 0 };
	size_t		 rows = (size_t)pl.inner * T;

	if (B <= 0 || T <= 0 || H <= 0)
		return 0;
	for (int i = 0; i < pl.outer; i++) {
		const float *ai = att + (pl.by_head ? i * a.sb : i * a.sh);

		/* dv += a^T dO; ws = dO v^T, the probabilities' gradient. */
		if (att_gemm(pl, i, s, true, false, T, d, T, 1.0f, a, dO, 1.0f,
		    dv) != 0 ||
		    att_gemm(pl, i, s, false, true, T, T, d, 1.0f, dO, v, 0.0f,
		    g) != 0)
			return -1;
		att_softmax_back<<<att_blocks(rows), ATT_TPB, 0, s>>>(ws, ai,
		    pl.by_head ? a.sh : a.sb, rows, T, scale);
		CUDA_LAUNCHED();
		/* dq += ws k; dk += ws^T q. */
		if (att_gemm(pl, i, s, false, false, T, d, T, 1.0f, g, k, 1.0f,
		    dq) != 0 ||
		    att_gemm(pl, i, s, true, false, T, d, T, 1.0f, g, q, 1.0f,
		    dk) != 0)
			return -1;
	}
	return 0;
}
