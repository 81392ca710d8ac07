/*
 * tokenwise.cu: the per-token layers of the transformer on the GPU
 * (tokenwise.c's twins, LayerNorm aside: layernorm.cu): the token and
 * position embedding, GELU and the residual add.  Every one gives the
 * CPU's bits:
 *
 *  - the embedding forward and the residual add are one float add an
 *    element;
 *  - GELU computes what the CPU's does, operation for operation, with the
 *    CPU's exp (vmath-internal.h's vexp, transcribed below) and no FMA
 *    contraction (__fmul_rn, __fadd_rn: nvcc would otherwise fuse);
 *  - the embedding's backward adds each token's rows in the CPU's order
 *    without atomics: the positions are sorted by token (CUB's radix
 *    sort, which is stable, so a token's positions stay in order), then
 *    one block a token adds its rows in turn into its row of dwte; dwpe
 *    is a thread a (t, c) adding the samples in order.  The sort costs a
 *    few microseconds at the batches trained here and keeps a step
 *    deterministic, where atomicAdd would not be.
 */
#include <cub/device/device_radix_sort.cuh>

#include "kernels/cuda/cuda-internal.cuh"

using namespace hk;

static __global__ void
tw_embed(float *out, const int32_t *tok, const float *wte, const float *wpe,
    size_t n, int T, int C)
{
	GRID_LOOP(i, n) {
		size_t	 row = i / C;
		int	 c = (int)(i % C), t = (int)(row % T);

		out[i] = __fadd_rn(wte[(size_t)tok[row] * C + c],
		    wpe[(size_t)t * C + c]);
	}
}

int
cuda_embed_forward(float *out, const int32_t *tok, const float *wte,
    const float *wpe, int B, int T, int C, cudaStream_t s)
{
	size_t	 n = (size_t)B * T * C;

	if (n == 0)
		return 0;
	tw_embed<<<grid_for(n, EW_TPB), EW_TPB, 0, s>>>(out, tok, wte, wpe, n,
	    T, C);
	CUDA_LAUNCHED();
	return 0;
}

/* Bits of a token below V. */
static int
tw_bits(int V)
{
	int	 b = 1;

	while (b < 31 && (1u << b) < (unsigned)V)
		b++;
	return b;
}

/* The workspace of the embedding's backward: the sorted tokens and
 * positions, the positions in order, and CUB's scratch. */
struct tw_sort {
	unsigned	*keys;
	int		*pos_in, *pos;
	void		*tmp;
	size_t		 tmp_bytes, total;
};

static int
tw_sort_layout(tw_sort *w, void *base, int N, int V)
{
	size_t	 off = 0;

	w->tmp_bytes = 0;
	CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, w->tmp_bytes,
	    (const unsigned *)nullptr, (unsigned *)nullptr, (const int *)nullptr,
	    (int *)nullptr, N, 0, tw_bits(V)));
	ws_part(&w->keys, base, &off, (size_t)N * sizeof(unsigned));
	ws_part(&w->pos_in, base, &off, (size_t)N * sizeof(int));
	ws_part(&w->pos, base, &off, (size_t)N * sizeof(int));
	ws_part(&w->tmp, base, &off, w->tmp_bytes);
	w->total = off;
	return 0;
}

size_t
cuda_embed_backward_workspace(int N, int V)
{
	tw_sort	 w;

	if (N <= 0)
		return 0;
	return tw_sort_layout(&w, nullptr, N, V) == 0 ? w.total : 0;
}

static __global__ void
tw_iota(int *p, size_t n)
{
	GRID_LOOP(i, n)
		p[i] = (int)i;
}

/* Block per sorted position: the first of each token's run adds the
 * run's rows, in order, into the token's row of dwte. */
static __global__ void
tw_embed_back_wte(float *dwte, const float *dout, const unsigned *keys,
    const int *pos, int N, int C)
{
	for (int i = blockIdx.x; i < N; i += gridDim.x) {
		unsigned key = keys[i];

		if (i > 0 && keys[i - 1] == key)
			continue;
		for (int c = threadIdx.x; c < C; c += blockDim.x) {
			float	*e = dwte + (size_t)key * C + c;
			float	 acc = *e;

			for (int j = i; j < N && keys[j] == key; j++)
				acc = __fadd_rn(acc, dout[(size_t)pos[j] * C +
				    c]);
			*e = acc;
		}
	}
}

static __global__ void
tw_embed_back_wpe(float *dwpe, const float *dout, int B, int T, int C)
{
	size_t	 n = (size_t)T * C;

	GRID_LOOP(i, n) {
		float	 acc = dwpe[i];

		for (int b = 0; b < B; b++)
			acc = __fadd_rn(acc, dout[(size_t)b * n + i]);
		dwpe[i] = acc;
	}
}

int
cuda_embed_backward(float *dwte, float *dwpe, const float *dout,
    const int32_t *tok, int B, int T, int C, int V, void *ws, cudaStream_t s)
{
	int	 N = B * T;
	tw_sort	 w;

	if (N <= 0 || C <= 0)
		return 0;
	if (tw_sort_layout(&w, ws, N, V) != 0)
		return -1;
	tw_iota<<<grid_for(N, EW_TPB), EW_TPB, 0, s>>>(w.pos_in, N);
	CUDA_LAUNCHED();
	CUDA_CHECK(cub::DeviceRadixSort::SortPairs(w.tmp, w.tmp_bytes,
	    (const unsigned *)tok, w.keys, w.pos_in, w.pos, N, 0, tw_bits(V),
	    s));
	tw_embed_back_wte<<<grid_for(N, 1, 65535), 128, 0, s>>>(dwte, dout,
	    w.keys, w.pos, N, C);
	CUDA_LAUNCHED();
	tw_embed_back_wpe<<<grid_for((size_t)T * C, EW_TPB), EW_TPB, 0, s>>>(
	    dwpe, dout, B, T, C);
	CUDA_LAUNCHED();
	return 0;
}

/* sqrt(2 / pi), GELU's constant, as tokenwise.c has it. */
#define GELU_K	0.7978845608028654f

/* vmath-internal.h's vexp, step for step: Cody-Waite reduction by ln 2,
 * a degree-6 polynomial, the exponent clamped as an integer. */
static __device__ __forceinline__ float
tw_vexp(float x)
{
	float	 n, r, p;
	int	 k;

	n = __fsub_rn(__fadd_rn(__fmul_rn(x, 1.44269504088896341f),
	    12582912.0f), 12582912.0f);
	r = __fsub_rn(x, __fmul_rn(n, 0.693359375f));
	r = __fadd_rn(r, __fmul_rn(n, 2.12194440e-4f));
	p = 1.0f / 720.0f;
	p = __fadd_rn(__fmul_rn(p, r), 1.0f / 120.0f);
	p = __fadd_rn(__fmul_rn(p, r), 1.0f / 24.0f);
	p = __fadd_rn(__fmul_rn(p, r), 1.0f / 6.0f);
	p = __fadd_rn(__fmul_rn(p, r), 0.5f);
	p = __fadd_rn(__fmul_rn(p, r), 1.0f);
	p = __fadd_rn(__fmul_rn(p, r), 1.0f);
	k = (int)n;
	k = k < -126 ? -127 : k;
	k = k > 127 ? 128 : k;
	return __fmul_rn(p, __int_as_float((k + 127) << 23));
}

/* 1 / (1 + e^(-2u)), u = K (v + 0.044715 v^3): tokenwise.c's gelu_sig. */
static __device__ __forceinline__ float
tw_gelu_sig(float v)
{
	float	 c = __fmul_rn(__fmul_rn(__fmul_rn(0.044715f, v), v), v);
	float	 u = __fmul_rn(GELU_K, __fadd_rn(v, c));

	return __fdiv_rn(1.0f, __fadd_rn(1.0f, tw_vexp(__fmul_rn(-2.0f, u))));
}

static __global__ void
tw_gelu(float *y, const float *x, size_t n)
{
	GRID_LOOP(i, n) {
		float	 v = x[i];

		y[i] = __fmul_rn(v, tw_gelu_sig(v));
	}
}

/* dx += (s + 2 v s (1 - s) du) dy, du = K (1 + 3 0.044715 v^2). */
static __global__ void
tw_gelu_back(float *dx, const float *x, const float *dy, size_t n)
{
	GRID_LOOP(i, n) {
		float	 v = x[i], s = tw_gelu_sig(v), du, g;

		du = __fmul_rn(GELU_K, __fadd_rn(1.0f,
		    __fmul_rn(__fmul_rn(3.0f * 0.044715f, v), v)));
		g = __fmul_rn(__fmul_rn(__fmul_rn(__fmul_rn(2.0f, v), s),
		    __fsub_rn(1.0f, s)), du);
		dx[i] = __fadd_rn(dx[i], __fmul_rn(__fadd_rn(s, g), dy[i]));
	}
}

int
cuda_gelu_forward(float *y, const float *x, size_t n, cudaStream_t s)
{
	if (n == 0)
		return 0;
	tw_gelu<<<grid_for(n, EW_TPB), EW_TPB, 0, s>>>(y, x, n);
	CUDA_LAUNCHED();
	return 0;
}

int
cuda_gelu_backward(float *dx, const float *x, const float *dy, size_t n,
    cudaStream_t s)
{
	if (n == 0)
		return 0;
	tw_gelu_back<<<grid_for(n, EW_TPB), EW_TPB, 0, s>>>(dx, x, dy, n);
	CUDA_LAUNCHED();
	return 0;
}

static __global__ void
tw_add(float *out, const float *a, const float *b, size_t n)
{
	GRID_LOOP(i, n)
		out[i] = __fadd_rn(a[i], b[i]);
}

static __global__ void
tw_add_back(float *da, float *db, const float *dout, size_t n)
{
	GRID_LOOP(i, n) {
		float	 d = dout[i];

		if (da != nullptr)
			da[i] = __fadd_rn(da[i], d);
		if (db != nullptr)
			db[i] = __fadd_rn(db[i], d);
	}
}

int
cuda_residual_forward(float *out, const float *a, const float *b, size_t n,
    cudaStream_t s)
{
	if (n == 0)
		return 0;
	tw_add<<<grid_for(n, EW_TPB), EW_TPB, 0, s>>>(out, a, b, n);
	CUDA_LAUNCHED();
	return 0;
}

int
cuda_residual_backward(float *da, float *db, const float *dout, size_t n,
    cudaStream_t s)
{
	if (n == 0 || (da == nullptr && db == nullptr))
		return 0;
	tw_add_back<<<grid_for(n, EW_TPB), EW_TPB, 0, s>>>(da, db, dout, n);
	CUDA_LAUNCHED();
	return 0;
}
