/*
 * attention.c: causal multi-head self-attention (transformer.h), tiled
 * as flash attention is, so that its memory grows with T and not T*T.
 *
 * The queries of a head go in blocks of 32 to 128 rows (att_block).  A block's
 * scores against the keys up to its last row (the causal mask leaves out
 * every later key: about half the products of the full T*T at long
 * contexts) are one GEMM into a thread's scratch, the softmax runs over
 * each row there, and one more GEMM gives the block's output.  Only each
 * row's maximum and the reciprocal of its sum are kept (stats: 2 floats
 * a row), and the backward pass makes the block's scores again with the
 * same GEMM, so its probabilities are the forward pass's to the bit.
 * The products are strided views into the fused qkv buffer; only the
 * keys (and, backward, the values) a part reads are copied out, as
 * their transpose (att_transpose).
 *
 * Parts: one per head of a sample, its blocks in order, so that the
 * head's keys are transposed once (and, backward, since every block adds
 * into the head's key and value gradients).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/cpu/transformer.h"
#include "kernels/cpu/matmul-internal.h"
#include "kernels/cpu/vmath-internal.h"

/*
 * Query rows a block, for a context of T: small blocks skip more of the
 * masked triangle, large ones run the GEMMs nearer their rate.  Measured
 * here (one thread, 8 samples of 4 heads of 64): 32 rows were best at T
 * up to 256, 64 at 512, 128 at 1024, by 5 to 15%.
 */
static int
att_block(int T)
{
	int	 b = T <= 256 ? 32 : T <= 512 ? 64 : 128;

	return T < b ? T : b;
}

/* A thread's scratch: a block's scores and, backward, their gradient,
 * then the head's keys and values transposed (d x T each). */
static size_t
att_scratch(int T, int d)
{
	return 2 * (size_t)att_block(T) * T + 2 * (size_t)d * T;
}

size_t
attention_workspace(int T, int d, int threads)
{
	return att_scratch(T, d) * (size_t)(threads < 1 ? 1 : threads);
}

/*
 * The first n rows of a [T, d] slice of qkv (row stride ld) into the
 * first n columns of t[d, T]: the key side of the scores' GEMMs as an
 * untransposed operand, which OpenBLAS 0.3.21 multiplies at twice the
 * rate of a transposed one at these sizes (32 x 128 x 64 on one
 * AVX-512 core: 99 against 47 GFLOP/s).  In tiles of 16 x 16 turned by
 * four rounds of shuffles, each swapping one bit of the row with the
 * same bit of the lane (GCC's vector extensions: two-source permutes
 * on AVX-512); about a third of the time of an element at a time
 * (0.28 against 0.75 to 1.0 ns an element at T 128, d 64).
 */
#if defined(__GNUC__) && !defined(__clang__)
typedef float	att_v16 __attribute__((vector_size(64)));
typedef int32_t	att_i16 __attribute__((vector_size(64)));

VMATH_INLINE void
att_tile(float *t, int T, const float *x, int ld)
{
	static const att_i16 lo[4] = {
	    { 0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30 },
	    { 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29 },
	    { 0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27 },
	    { 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23 } };
	static const att_i16 hi[4] = {
	    { 1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31 },
	    { 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31 },
	    { 4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31 },
	    { 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30,
	      31 } };
	att_v16	 r[16];

	for (int i = 0; i < 16; i++)
		memcpy(&r[i], x + (size_t)i * ld, sizeof r[i]);
#pragma GCC unroll 4
	for (int s = 0; s < 4; s++)
#pragma GCC unroll 16
		for (int i = 0; i < 16; i++)
			if ((i & (1 << s)) == 0) {
				att_v16	 a = r[i], b = r[i | 1 << s];

				r[i] = __builtin_shuffle(a, b, lo[s]);
				r[i | 1 << s] = __builtin_shuffle(a, b, hi[s]);
			}
	for (int i = 0; i < 16; i++)
		memcpy(t + (size_t)i * T, &r[i], sizeof r[i]);
}
#define ATT_TILE	16
#else
#define ATT_TILE	0
#endif

VMATH_INLINE void
att_transpose(float *t, int T, const float *x, int ld, int n, int d)
{
	int	 j = 0, c0;

#if ATT_TILE > 0
	for (; j + ATT_TILE <= n; j += ATT_TILE) {
		for (c0 = 0; c0 + ATT_TILE <= d; c0 += ATT_TILE)
			att_tile(t + (size_t)c0 * T + j, T, x + (size_t)j * ld +
			    c0, ld);
		for (; c0 < d; c0++)
			for (int i = 0; i < ATT_TILE; i++)
				t[(size_t)c0 * T + j + i] =
				    x[(size_t)(j + i) * ld + c0];
	}
#endif
	for (; j < n; j++)
		for (c0 = 0; c0 < d; c0++)
			t[(size_t)c0 * T + j] = x[(size_t)j * ld + c0];
}

struct att_job {
	float		*out, *stats, *dqkv, *ws;
	const float	*qkv, *dout, *cstats;
	int		 B, T, C, H, blocks;
	int		 add;		/* backward: add to dqkv, not set */
};

/* s[j] = e^(s[j] - max) over [0, n); their sum, lane by lane and then
 * the lanes in order. */
VMATH_INLINE float
att_exp(float *s, int n, float max)
{
	float	 acc[VMATH_BLOCK] = { 0 }, sum = 0;
	int	 j = 0;

	for (; j + VMATH_BLOCK <= n; j += VMATH_BLOCK)
		for (int k = 0; k < VMATH_BLOCK; k++) {
			s[j + k] = vexp(s[j + k] - max);
			acc[k] += s[j + k];
		}
	for (int k = 0; k < VMATH_BLOCK; k++)
		sum += acc[k];
	for (; j < n; j++) {
		s[j] = vexp(s[j] - max);
		sum += s[j];
	}
	return sum;
}

/* s[j] *= inv over [0, n). */
VMATH_INLINE void
att_scale(float *s, int n, float inv)
{
	int	 j = 0;

	for (; j + VMATH_BLOCK <= n; j += VMATH_BLOCK)
		for (int k = 0; k < VMATH_BLOCK; k++)
			s[j + k] *= inv;
	for (; j < n; j++)
		s[j] *= inv;
}

/*
 * The probabilities of block blk of head (b, h) into p[R, J] (J, the
 * keys the block sees, is its row stride): the scaled scores by one
 * GEMM against kt (the head's keys transposed, at least the first J),
 * then each row's softmax over its keys up to the diagonal, zero
 * after.  With stats NULL, the row statistics come from cstats (the
 * backward pass) instead of being taken and kept.
 */
VMATH_INLINE void
att_probs(const struct att_job *j, int b, int h, int blk, float *p,
    const float *kt, float *stats, const float *cstats)
{
	int	 T = j->T, C = j->C, d = C / j->H, ld = 3 * C;
	int	 QB = att_block(T), i0 = blk * QB;
	int	 R = T - i0 < QB ? T - i0 : QB, J = i0 + R;
	const float *q = j->qkv + (size_t)b * T * ld + h * d;
	size_t	 row0 = ((size_t)b * j->H + h) * T + i0;

	kgemm(0, 0, R, J, d, 1.0f / sqrtf((float)d), q + (size_t)i0 * ld, ld,
	    kt, T, 0.0f, p, J);
	for (int r = 0; r < R; r++) {
		float	*s = p + (size_t)r * J, max, inv;
		int	 n = i0 + r + 1;

		if (stats != NULL) {
			max = vmax_span(s, (size_t)n);
			inv = 1.0f / att_exp(s, n, max);
			stats[2 * (row0 + r)] = max;
			stats[2 * (row0 + r) + 1] = inv;
		} else {
			max = cstats[2 * (row0 + r)];
			inv = cstats[2 * (row0 + r) + 1];
			(void)att_exp(s, n, max);
		}
		att_scale(s, n, inv);
		memset(s + n, 0, (size_t)(J - n) * sizeof *s);
	}
}

VMATH_CLONES static void
att_fwd_part(void *arg, int part, int thread)
{
	const struct att_job *j = arg;
	int	 T = j->T, C = j->C, H = j->H, d = C / H, ld = 3 * C;
	int	 b = part / H, h = part % H, QB = att_block(T);
	float	*p = j->ws + (size_t)thread * att_scratch(T, d);
	float	*kt = p + 2 * (size_t)QB * T;
	const float *k = j->qkv + (size_t)b * T * ld + C + h * d;
	const float *v = k + C;

	att_transpose(kt, T, k, ld, T, d);
	for (int blk = 0; blk < j->blocks; blk++) {
		int	 i0 = blk * QB, R = T - i0 < QB ? T - i0 : QB;

		att_probs(j, b, h, blk, p, kt, j->stats, NULL);
		kgemm(0, 0, R, d, i0 + R, 1.0f, p, i0 + R, v, ld, 0.0f,
		    j->out + ((size_t)b * T + i0) * C + h * d, C);
	}
}

void
attention_forward(struct pool *pool, float *out, float *stats, float *ws,
    const float *qkv, int B, int T, int C, int H)
{
	struct att_job j = { .out = out, .stats = stats, .ws = ws,
	    .qkv = qkv, .B = B, .T = T, .C = C, .H = H };

	j.blocks = (T + att_block(T) - 1) / att_block(T);
	pool_run(pool, B * H, att_fwd_part, &j);
}

/* dP into dS in place: dS = P (dP - sum(P dP)) scale over each row's
 * keys up to the diagonal, zero after (P is too). */
VMATH_INLINE void
att_dsoftmax(const float *p, float *dp, int R, int J, int i0, float scale)
{
	for (int r = 0; r < R; r++) {
		const float *pr = p + (size_t)r * J;
		float	*g = dp + (size_t)r * J, acc[VMATH_BLOCK] = { 0 };
		float	 dot = 0;
		int	 n = i0 + r + 1, c = 0;

		for (; c + VMATH_BLOCK <= n; c += VMATH_BLOCK)
			for (int k = 0; k < VMATH_BLOCK; k++)
				acc[k] += pr[c + k] * g[c + k];
		for (int k = 0; k < VMATH_BLOCK; k++)
			dot += acc[k];
		for (; c < n; c++)
			dot += pr[c] * g[c];
		for (c = 0; c + VMATH_BLOCK <= n; c += VMATH_BLOCK)
			for (int k = 0; k < VMATH_BLOCK; k++)
				g[c + k] = pr[c + k] * (g[c + k] - dot) * scale;
		for (; c < n; c++)
			g[c] = pr[c] * (g[c] - dot) * scale;
		memset(g + n, 0, (size_t)(J - n) * sizeof *g);
	}
}

VMATH_CLONES static void
att_bwd_part(void *arg, int part, int thread)
{
	const struct att_job *j = arg;
	int	 T = j->T, C = j->C, H = j->H, d = C / H, ld = 3 * C;
	int	 b = part / H, h = part % H, QB = att_block(T);
	size_t	 off = (size_t)b * T * ld + h * d;
	const float *q = j->qkv + off, *k = q + C, *v = q + 2 * C;
	float	*dq = j->dqkv + off, *dk = dq + C, *dv = dq + 2 * C;
	float	*p = j->ws + (size_t)thread * att_scratch(T, d);
	float	*dp = p + (size_t)QB * T, *kt = dp + (size_t)QB * T;
	float	*vt = kt + (size_t)d * T, scale = 1.0f / sqrtf((float)d);

	/* The head's slice of dqkv, zeroed by its own part. */
	if (!j->add)
		for (int t = 0; t < T; t++)
			for (int s = 0; s < 3; s++)
				memset(dq + (size_t)t * ld + s * C, 0,
				    (size_t)d * sizeof *dq);
	att_transpose(kt, T, k, ld, T, d);
	att_transpose(vt, T, v, ld, T, d);
	for (int blk = 0; blk < j->blocks; blk++) {
		int	 i0 = blk * QB, R = T - i0 < QB ? T - i0 : QB;
		int	 J = i0 + R;
		const float *dO = j->dout + ((size_t)b * T + i0) * C + h * d;

		att_probs(j, b, h, blk, p, kt, NULL, j->cstats);
		/* dv += P^T dO; dP = dO v^T, then through the softmax. */
		kgemm(1, 0, J, d, R, 1.0f, p, J, dO, C, 1.0f, dv, ld);
		kgemm(0, 0, R, J, d, 1.0f, dO, C, vt, T, 0.0f, dp, J);
		att_dsoftmax(p, dp, R, J, i0, scale);
		/* dq += dS k; dk += dS^T q. */
		kgemm(0, 0, R, d, J, 1.0f, dp, J, k, ld, 1.0f,
		    dq + (size_t)i0 * ld, ld);
		kgemm(1, 0, J, d, R, 1.0f, dp, J, q + (size_t)i0 * ld, ld, 1.0f,
		    dk, ld);
	}
}

void
attention_backward(struct pool *pool, float *dqkv, int add,
    const float *dout, const float *qkv, const float *stats, float *ws,
    int B, int T, int C, int H)
{
	struct att_job j = { .dqkv = dqkv, .dout = dout, .qkv = qkv,
	    .cstats = stats, .ws = ws, .B = B, .T = T, .C = C, .H = H,
	    .add = add };

	j.blocks = (T + att_block(T) - 1) / att_block(T);
	pool_run(pool, B * H, att_bwd_part, &j);
}
