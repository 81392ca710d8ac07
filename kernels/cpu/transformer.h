/*
 * transformer.h: the layers of a GPT-2 on the CPU.  No I/O, no threads of
 * their own, no allocation: callers own every buffer.  GEMMs go to
 * OpenBLAS (cblas_sgemm).
 *
 * Each kernel cuts its work into parts by its shape alone and runs them
 * on the pool it is given (lib/pool.h; NULL runs them in order on the
 * calling thread): parts write apart, and what sums across rows is cut
 * by columns, so a kernel gives the same bits on any number of threads.
 * The GEMMs inside the parts want OpenBLAS at one thread (model.c holds
 * it there while a pass runs on a pool of more).
 *
 * Shapes are row-major.  A sequence batch is N = B*T rows of C channels,
 * [B, T, C]; the fused attention projection is [B, T, 3C] (queries, keys,
 * values, each H heads of C/H channels).  Weights of the projections are
 * stored [in, out], as GPT-2's checkpoints store them (Hugging Face's
 * Conv1D: y = x W + b), so they are saved and loaded without a transpose.
 *
 * Gradient convention of this family: parameter gradients AND input
 * gradients are ACCUMULATED (+=).  Every activation of a transformer feeds
 * more than one place (the residual stream runs past each block), so the
 * caller zeroes the activation gradients once per backward pass, as it
 * zeroes the parameter gradients once per step; the kernels whose input
 * gradient comes out of a GEMM (the projections, the head, attention)
 * take `add`, and with 0 write it instead, sparing that pass.
 */
#ifndef HUNTER_TRANSFORMER_H
#define HUNTER_TRANSFORMER_H

#include <stddef.h>
#include <stdint.h>

struct pool;

/* GPT-2's LayerNorm epsilon. */
#define LAYERNORM_EPS	1e-5f

/* out[b,t,:] = wte[tok[b,t],:] + wpe[t,:]; tokens are checked by the
 * caller (0 <= tok < V). */
void	embed_forward(struct pool *, float *out, const int32_t *tok,
	    const float *wte, const float *wpe, int B, int T, int C);
/* dwte[tok[b,t],:] += dout[b,t,:]; dwpe[t,:] += dout[b,t,:]. */
void	embed_backward(struct pool *, float *dwte, float *dwpe,
	    const float *dout, const int32_t *tok, int B, int T, int C);

/* LayerNorm of each of N rows over C channels; mean[N] and rstd[N] are
 * kept for the backward pass. */
void	layernorm_forward(struct pool *, float *out, float *mean, float *rstd,
	    const float *x, const float *w, const float *b, int N, int C);
void	layernorm_backward(struct pool *, float *dx, float *dw, float *db,
	    const float *dout, const float *x, const float *w,
	    const float *mean, const float *rstd, int N, int C);

/* y[N,OC] = x[N,C] w[C,OC] + b[OC]; b may be NULL. */
void	matmul_forward(struct pool *, float *y, const float *x,
	    const float *w, const float *b, int N, int C, int OC);
/* dx += dy w^T, or with add 0 dx = dy w^T (dx NULL: skipped); dw += x^T
 * dy; db += the column sums of dy (skipped when db is NULL).  Writing
 * saves the caller a pass to zero dx, and each part sets its own rows. */
void	matmul_backward(struct pool *, float *dx, int add, float *dw,
	    float *db, const float *dy, const float *x, const float *w, int N,
	    int C, int OC);
/* y[N,OC] = GELU(x w + b), with x w + b kept in pre[N,OC] for the
 * backward pass: the MLP's first projection and its activation, the
 * GELU taken block by block while the GEMM's result is in cache. */
void	matmul_gelu_forward(struct pool *, float *y, float *pre,
	    const float *x, const float *w, const float *b, int N, int C,
	    int OC);
/* Its backward: pre is overwritten with the gradient at it, then as
 * matmul_backward. */
void	matmul_gelu_backward(struct pool *, float *dx, int add, float *dw,
	    float *db, const float *dy, float *pre, const float *x,
	    const float *w, int N, int C, int OC);
/* y[N,OC] = res + x w + b: a projection that ends on the residual
 * stream, res[N,OC] added to each block as it is made.  Its backward is
 * matmul_backward, and the stream's gradient is dy (grad_pass). */
void	matmul_residual_forward(struct pool *, float *y, const float *x,
	    const float *w, const float *b, const float *res, int N, int C,
	    int OC);

/* The output head tied to the token embedding: logits[N,V] = x[N,C]
 * wte[V,C]^T. */
void	head_forward(struct pool *, float *logits, const float *x,
	    const float *wte, int N, int C, int V);
/* dx += dlogits wte (add 0: dx =); dwte += dlogits^T x. */
void	head_backward(struct pool *, float *dx, int add, float *dwte,
	    const float *dlogits, const float *x, const float *wte, int N,
	    int C, int V);

/*
 * Causal multi-head self-attention: out[B,T,C] = softmax(q k^T / sqrt(d)
 * with the causal mask) v, per head, from qkv[B,T,3C], tiled by blocks
 * of queries so that its memory is linear in T: stats[B,H,T,2] keeps
 * each row's maximum score and the reciprocal of its sum of
 * exponentials, from which the backward pass makes the probabilities
 * again.  Both passes take attention_workspace(T, C / H, threads) floats
 * of scratch for a pool of that many threads.
 */
size_t	attention_workspace(int T, int d, int threads);
void	attention_forward(struct pool *, float *out, float *stats, float *ws,
	    const float *qkv, int B, int T, int C, int H);
void	attention_backward(struct pool *, float *dqkv, int add,
	    const float *dout, const float *qkv, const float *stats, float *ws,
	    int B, int T, int C, int H);

/* GELU, the tanh form GPT-2 uses. */
void	gelu_forward(struct pool *, float *y, const float *x, size_t n);
/* dx += gelu'(x) dy. */
void	gelu_backward(struct pool *, float *dx, const float *x,
	    const float *dy, size_t n);

/* out = a + b. */
void	residual_forward(struct pool *, float *out, const float *a,
	    const float *b, size_t n);
/* da += dout; db += dout (either may be NULL). */
void	residual_backward(struct pool *, float *da, float *db,
	    const float *dout, size_t n);
/* dst = src (add 0) or dst += src (add 1): a gradient handed on to a
 * second reader of an activation. */
void	grad_pass(struct pool *, float *dst, const float *src, size_t n,
	    int add);

/*
 * Softmax cross-entropy over a vocabulary of V, fused with its gradient
 * so that the N*V probabilities are never kept beside the logits.
 * Returns the summed loss of the N rows (in double); rows whose target is
 * negative are left out.  When scale is not 0, logits[N,V] is overwritten
 * with the gradient (softmax - onehot(target)) * scale (zero in rows left
 * out); with scale 0 the logits are left alone.
 */
double	vocab_xent(struct pool *, float *logits, const int32_t *target, int N,
	    int V, float scale);

/* Counting the time the kernels above spend in sgemm, summed over the
 * threads (bench gpt's share of a step outside GEMM): on (1) or off (0);
 * either way the count restarts.  The seconds counted since the last
 * call. */
void	transformer_gemm_count(int on);
double	transformer_gemm_seconds(void);

#endif
