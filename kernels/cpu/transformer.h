/*
 * transformer.h: the layers of a GPT-2 on the CPU.  No I/O, no threads of
 * their own, no allocation: callers own every buffer.  GEMMs go to
 * OpenBLAS (cblas_sgemm).
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
 * zeroes the parameter gradients once per step.
 */
#ifndef HUNTER_TRANSFORMER_H
#define HUNTER_TRANSFORMER_H

#include <stddef.h>
#include <stdint.h>

/* GPT-2's LayerNorm epsilon. */
#define LAYERNORM_EPS	1e-5f

/* out[b,t,:] = wte[tok[b,t],:] + wpe[t,:]; tokens are checked by the
 * caller (0 <= tok < V). */
void	embed_forward(float *out, const int32_t *tok, const float *wte,
	    const float *wpe, int B, int T, int C);
/* dwte[tok[b,t],:] += dout[b,t,:]; dwpe[t,:] += dout[b,t,:]. */
void	embed_backward(float *dwte, float *dwpe, const float *dout,
	    const int32_t *tok, int B, int T, int C);

/* LayerNorm of each of N rows over C channels; mean[N] and rstd[N] are
 * kept for the backward pass. */
void	layernorm_forward(float *out, float *mean, float *rstd,
	    const float *x, const float *w, const float *b, int N, int C);
void	layernorm_backward(float *dx, float *dw, float *db, const float *dout,
	    const float *x, const float *w, const float *mean,
	    const float *rstd, int N, int C);

/* y[N,OC] = x[N,C] w[C,OC] + b[OC]; b may be NULL. */
void	matmul_forward(float *y, const float *x, const float *w,
	    const float *b, int N, int C, int OC);
/* dx += dy w^T (skipped when dx is NULL); dw += x^T dy; db += the column
 * sums of dy (skipped when db is NULL). */
void	matmul_backward(float *dx, float *dw, float *db, const float *dy,
	    const float *x, const float *w, int N, int C, int OC);

/* The output head tied to the token embedding: logits[N,V] = x[N,C]
 * wte[V,C]^T. */
void	head_forward(float *logits, const float *x, const float *wte, int N,
	    int C, int V);
/* dx += dlogits wte; dwte += dlogits^T x. */
void	head_backward(float *dx, float *dwte, const float *dlogits,
	    const float *x, const float *wte, int N, int C, int V);

/*
 * Causal multi-head self-attention: out[B,T,C] = softmax(q k^T / sqrt(d)
 * with the causal mask) v, per head, from qkv[B,T,3C].  att[B,H,T,T]
 * keeps the probabilities (zero above the diagonal) for the backward
 * pass: the one B*H*T*T buffer of a layer.  The backward pass needs
 * attention_workspace(T) floats of scratch.
 */
size_t	attention_workspace(int T);
void	attention_forward(float *out, float *att, const float *qkv, int B,
	    int T, int C, int H);
void	attention_backward(float *dqkv, const float *dout, const float *qkv,
	    const float *att, float *ws, int B, int T, int C, int H);

/* GELU, the tanh form GPT-2 uses. */
void	gelu_forward(float *y, const float *x, size_t n);
/* dx += gelu'(x) dy. */
void	gelu_backward(float *dx, const float *x, const float *dy, size_t n);

/* out = a + b. */
void	residual_forward(float *out, const float *a, const float *b, size_t n);
/* da += dout; db += dout. */
void	residual_backward(float *da, float *db, const float *dout, size_t n);

/*
 * Softmax cross-entropy over a vocabulary of V, fused with its gradient
 * so that the N*V probabilities are never kept beside the logits.
 * Returns the summed loss of the N rows (in double); rows whose target is
 * negative are left out.  When scale is not 0, logits[N,V] is overwritten
 * with the gradient (softmax - onehot(target)) * scale (zero in rows left
 * out); with scale 0 the logits are left alone.
 */
double	vocab_xent(float *logits, const int32_t *target, int N, int V,
	    float scale);

#endif
