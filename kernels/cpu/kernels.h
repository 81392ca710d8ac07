/*
 * kernels.h: the numeric work of one rank on the CPU.  No I/O, no threads
 * of their own, no allocation: callers own every buffer (and the pool,
 * lib/pool.h, that a kernel taking one runs its parts on; NULL runs them
 * on the calling thread).  GEMMs go to OpenBLAS (cblas_sgemm).  Layouts
 * are row-major; images are NCHW.
 *
 * Gradient convention: parameter gradients (dw, db) are ACCUMULATED (+=),
 * so micro-batches can add into one gradient buffer that the caller zeroes
 * once per step.  Input gradients (dx) are OVERWRITTEN.
 */
#ifndef HUNTER_KERNELS_H
#define HUNTER_KERNELS_H

#include <stddef.h>
#include <stdint.h>

struct pool;

/* Linear layer: y[B,out] = x[B,in] * w[out,in]^T + b[out]. */
void	linear_forward(float *y, const float *x, const float *w,
	    const float *b, int B, int in, int out);
/* dx[B,in] = dy * w (skipped when dx is NULL); dw += dy^T x; db += sum dy. */
void	linear_backward(float *dx, float *dw, float *db, const float *dy,
	    const float *x, const float *w, int B, int in, int out);

/* ReLU: y = max(x, 0); may run in place. */
void	relu_forward(float *y, const float *x, size_t n);
/* dx = dy where y > 0, else 0; y is the forward output; may run in place. */
void	relu_backward(float *dx, const float *dy, const float *y, size_t n);

/*
 * Softmax with cross-entropy over C classes.  Writes probs[B,C] and returns
 * the SUM of the B losses (accumulated in double).  Labels are 0..C-1.
 */
double	softmax_xent_forward(float *probs, const float *logits,
	    const uint8_t *labels, int B, int C);
/* dlogits = (probs - onehot(labels)) * scale; scale is usually 1/global_batch. */
void	softmax_xent_backward(float *dlogits, const float *probs,
	    const uint8_t *labels, int B, int C, float scale);
/* Number of rows whose argmax equals the label. */
int	argmax_correct(const float *logits, const uint8_t *labels, int B, int C);

/*
 * 2-D convolution, stride 1, square zero padding pad, kernel kh x kw.
 * x[B,C,H,W] -> y[B,K,OH,OW] with OH = H + 2*pad - kh + 1 (same for OW).
 * w[K, C*kh*kw], b[K].  ws is scratch of conv2d_workspace() floats.
 */
size_t	conv2d_workspace(int C, int H, int W, int kh, int kw, int pad);
void	conv2d_forward(float *y, const float *x, const float *w,
	    const float *b, float *ws, int B, int C, int H, int W, int K,
	    int kh, int kw, int pad);
/* dx (may be NULL) overwritten; dw, db accumulated. */
void	conv2d_backward(float *dx, float *dw, float *db, const float *dy,
	    const float *x, const float *w, float *ws, int B, int C, int H,
	    int W, int K, int kh, int kw, int pad);
/* The im2col/col2im pair behind conv2d, exported for tests and CUDA twins. */
void	im2col(float *cols, const float *x, int C, int H, int W, int kh,
	    int kw, int pad);
void	col2im(float *dx, const float *cols, int C, int H, int W, int kh,
	    int kw, int pad);

/* 2x2 max-pool, stride 2 (H and W even).  argmax[B,C,H/2,W/2] holds the
 * flat index within each HxW plane of the chosen input. */
void	maxpool2_forward(float *y, int32_t *argmax, const float *x, int B,
	    int C, int H, int W);
/* dx[B,C,H,W] overwritten: zero except at each argmax. */
void	maxpool2_backward(float *dx, const float *dy, const int32_t *argmax,
	    int B, int C, int H, int W);

/*
 * SGD with momentum and decoupled-from-nothing (L2) weight decay, as
 * PyTorch's SGD: g' = g + wd*p; m = mu*m + g'; p -= lr*m.  With mu == 0
 * the momentum buffer may be NULL.
 */
void	sgd_step(float *p, const float *g, float *m, size_t n, float lr,
	    float mu, float wd);
/* AdamW (decoupled weight decay), step t counted from 1, in parts of
 * the buffer on the pool: the same bits on any number of threads. */
void	adamw_step(struct pool *, float *p, const float *g, float *m,
	    float *v, size_t n, float lr, float beta1, float beta2, float eps,
	    float wd, long t);

#endif
