/*
 * test-cuda-gpt.c: the transformer's CUDA twins (kernels/cuda: matmul.cu,
 * attention.cu, tokenwise.cu, layernorm.cu, xent.cu) against their CPU
 * twins (kernels/cpu/transformer.h), at several sizes, every gradient
 * accumulated into buffers that hold values already.  test-cuda.c checks
 * the rest of kernels/cuda and the device model.
 *
 * Tolerances (inputs uniform in [-1, 1] unless said; cuda-kernels.h says
 * why each is what it is):
 *   embedding forward and backward (repeated tokens, one token only, a
 *   vocabulary of 50257), residual add, GELU, the projections' bias
 *   gradient: the same bits;
 *   projections and head (cuBLAS against OpenBLAS, K-term sums in another
 *   order): |gpu - cpu| <= 1e-5 sqrt(K) (1 + |cpu|), as linear's;
 *   LayerNorm: out, mean, rstd within 1e-6 (1 + |cpu|) and dx within 1e-5
 *   (1 + |cpu|): the same bits but where a double sum in another order
 *   rounds a mean, a deviation or a row's mean gradient to the next float
 *   (how many floats differ is printed); dw and db, from the CPU's
 *   statistics, the same bits;
 *   attention: out within 2e-7 sqrt(T) (1 + |cpu|), dqkv within 1e-6
 *   sqrt(T) (1 + |cpu|), each side's backward from what its own forward
 *   kept (the device's probabilities, the CPU's row statistics: the CPU
 *   keeps no T * T buffer): some 20 times the CPU's own error against a
 *   double-precision reference at these sizes;
 *   vocabulary cross-entropy: the loss sum within 1e-6 (N + |cpu|), the
 *   gradient within 2e-6 |cpu| + 2e-6 scale (CUDA's expf, 2 ulp; the
 *   CPU's vexp, 4), and
 *   with scale 0 the logits left as they were, bit for bit.
 *
 * Without a CUDA device every test calls skip() and the program exits
 * 77 (automake's SKIP).
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "lib/cuda-probe.h"
#include "lib/rng.h"
#include "kernels/cpu/transformer.h"
#include "kernels/cuda/cuda-kernels.h"

static int		tg_gpus;
static struct rng	tg_rng;

#define NEED_GPU() do { if (tg_gpus <= 0) skip(); } while (0)
#define CK(call) do {							\
	cudaError_t ck_e_ = (call);					\
	if (ck_e_ != cudaSuccess)					\
		fail_msg("%s: %s", #call, cudaGetErrorString(ck_e_));	\
} while (0)
#define OK(call) do {							\
	if ((call) != 0)						\
		fail_msg("%s: %s", #call, cuda_last_error());		\
} while (0)

static void *
xalloc(size_t bytes)
{
	void	*p = malloc(bytes > 0 ? bytes : 1);

	assert_non_null(p);
	return p;
}

static void *
dev_from(const void *h, size_t bytes)
{
	void	*p = NULL;

	CK(cudaMalloc(&p, bytes > 0 ? bytes : 1));
	if (bytes > 0)
		CK(cudaMemcpy(p, h, bytes, cudaMemcpyHostToDevice));
	return p;
}

static void *
dev(size_t bytes)
{
	void	*p = NULL;

	CK(cudaMalloc(&p, bytes > 0 ? bytes : 1));
	return p;
}

/* n floats uniform in [-s, s]. */
static float *
uni(size_t n, float s)
{
	float	*x = xalloc(n * sizeof *x);

	for (size_t i = 0; i < n; i++)
		x[i] = s * (2.0f * rng_float(&tg_rng) - 1.0f);
	return x;
}

static float *
host_of(const float *d, size_t n)
{
	float	*h = xalloc(n * sizeof *h);

	if (n > 0)
		CK(cudaMemcpy(h, d, n * sizeof *h, cudaMemcpyDeviceToHost));
	return h;
}

/* The GPU's n floats at d against the CPU's: the same bits, or within
 * rel |cpu| + abs; with a tolerance, prints how many are not the same
 * bits and the worst of them as a share of its tolerance. */
static void
check(const float *d, const float *cpu, size_t n, double rel, double abs,
    const char *what)
{
	float	*g = host_of(d, n);
	size_t	 diff = 0;
	double	 worst = 0;

	for (size_t i = 0; i < n; i++) {
		double	e = fabs((double)g[i] - (double)cpu[i]);
		double	tol = rel * fabs((double)cpu[i]) + abs;

		if (memcmp(&g[i], &cpu[i], sizeof *g) == 0)
			continue;
		diff++;
		if (!(e <= tol)) {
			print_error("%s: [%zu] gpu %.9g (%a) cpu %.9g (%a), off "
			    "%.3g > %.3g\n", what, i, g[i], g[i], cpu[i], cpu[i],
			    e, tol);
			free(g);
			fail();
		}
		worst = fmax(worst, e / tol);
	}
	if (rel > 0 || abs > 0)
		print_message("    %-36s %8zu floats, %7zu not the same bits, "
		    "worst %.3f of the tolerance\n", what, n, diff, worst);
	free(g);
}

#define SAME(d, cpu, n, what)	check(d, cpu, n, 0, 0, what)

static void
t_embed(void **state)
{
	/* B, T, C, V; the last: one token only. */
	static const int	sizes[][4] = {
		{ 1, 1, 1, 1 }, { 2, 5, 7, 3 }, { 4, 64, 96, 256 },
		{ 3, 128, 48, 50257 }, { 8, 32, 64, 1 },
	};

	NEED_GPU();
	rng_seed(&tg_rng, 31, 0);
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		int	 B = sizes[k][0], T = sizes[k][1], C = sizes[k][2];
		int	 V = sizes[k][3], N = B * T;
		size_t	 nte = (size_t)V * C, npe = (size_t)T * C;
		size_t	 no = (size_t)N * C, ws = cuda_embed_backward_workspace(N,
			    V);
		int32_t	*tok = xalloc((size_t)N * sizeof *tok);
		float	*wte = uni(nte, 1), *wpe = uni(npe, 1), *out = uni(no, 1);
		float	*dwte = uni(nte, 1), *dwpe = uni(npe, 1);
		float	*dout = uni(no, 1);
		float	*d_wte, *d_wpe, *d_out, *d_dwte, *d_dwpe, *d_dout;
		int32_t	*d_tok;
		void	*d_ws = dev(ws);
		char	 what[64];

		for (int i = 0; i < N; i++)	/* few tokens: many repeats */
			tok[i] = (int32_t)rng_below(&tg_rng, (uint32_t)(V < 9 ?
			    V : i % 2 ? 9 : V));
		d_tok = dev_from(tok, (size_t)N * sizeof *tok);
		d_wte = dev_from(wte, nte * 4);
		d_wpe = dev_from(wpe, npe * 4);
		d_out = dev(no * 4);
		d_dwte = dev_from(dwte, nte * 4);
		d_dwpe = dev_from(dwpe, npe * 4);
		d_dout = dev_from(dout, no * 4);
		snprintf(what, sizeof what, "embed B%d T%d C%d V%d", B, T, C, V);
		embed_forward(NULL, out, tok, wte, wpe, B, T, C);
		OK(cuda_embed_forward(d_out, d_tok, d_wte, d_wpe, B, T, C,
		    NULL));
		SAME(d_out, out, no, what);
		/* Twice: the second adds to the first. */
		for (int r = 0; r < 2; r++) {
			embed_backward(NULL, dwte, dwpe, dout, tok, B, T, C);
			OK(cuda_embed_backward(d_dwte, d_dwpe, d_dout, d_tok, B,
			    T, C, V, d_ws, NULL));
		}
		SAME(d_dwte, dwte, nte, what);
		SAME(d_dwpe, dwpe, npe, what);
		cudaFree(d_tok); cudaFree(d_wte); cudaFree(d_wpe);
		cudaFree(d_out); cudaFree(d_dwte); cudaFree(d_dwpe);
		cudaFree(d_dout); cudaFree(d_ws);
		free(tok); free(wte); free(wpe); free(out); free(dwte);
		free(dwpe); free(dout);
	}
}

static void
t_layernorm(void **state)
{
	static const int	sizes[][2] = {
		{ 1, 1 }, { 3, 7 }, { 64, 33 }, { 256, 768 }, { 1000, 128 },
	};

	NEED_GPU();
	rng_seed(&tg_rng, 32, 0);
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		int	 N = sizes[k][0], C = sizes[k][1];
		size_t	 n = (size_t)N * C;
		float	*x = uni(n, 1), *w = uni(C, 1), *b = uni(C, 1);
		float	*out = xalloc(n * 4), *mean = xalloc(N * 4);
		float	*rstd = xalloc(N * 4), *dout = uni(n, 1), *dx = uni(n, 1);
		float	*dw = uni(C, 1), *db = uni(C, 1);
		float	*d_x = dev_from(x, n * 4), *d_w = dev_from(w, C * 4);
		float	*d_b = dev_from(b, C * 4), *d_out = dev(n * 4);
		float	*d_mean = dev(N * 4), *d_rstd = dev(N * 4);
		float	*d_dout = dev_from(dout, n * 4), *d_dx = dev_from(dx, n * 4);
		float	*d_dw = dev_from(dw, C * 4), *d_db = dev_from(db, C * 4);
		char	 what[64];

		/* A row's mean well away from 0, as the residual stream's. */
		for (size_t i = 0; i < n; i += 3)
			x[i] += 4.0f;
		CK(cudaMemcpy(d_x, x, n * 4, cudaMemcpyHostToDevice));
		snprintf(what, sizeof what, "layernorm N%d C%d", N, C);
		layernorm_forward(NULL, out, mean, rstd, x, w, b, N, C);
		OK(cuda_layernorm_forward(d_out, d_mean, d_rstd, d_x, d_w, d_b,
		    N, C, NULL));
		check(d_out, out, n, 1e-6, 1e-6, what);
		check(d_mean, mean, N, 1e-6, 1e-6, "  mean");
		check(d_rstd, rstd, N, 1e-6, 1e-6, "  rstd");
		/* The backward from the CPU's statistics. */
		CK(cudaMemcpy(d_mean, mean, N * 4, cudaMemcpyHostToDevice));
		CK(cudaMemcpy(d_rstd, rstd, N * 4, cudaMemcpyHostToDevice));
		layernorm_backward(NULL, dx, dw, db, dout, x, w, mean, rstd, N,
		    C);
		OK(cuda_layernorm_backward(d_dx, d_dw, d_db, d_dout, d_x, d_w,
		    d_mean, d_rstd, N, C, NULL));
		check(d_dx, dx, n, 1e-5, 1e-5, "  dx");
		SAME(d_dw, dw, C, "  dw");
		SAME(d_db, db, C, "  db");
		cudaFree(d_x); cudaFree(d_w); cudaFree(d_b); cudaFree(d_out);
		cudaFree(d_mean); cudaFree(d_rstd); cudaFree(d_dout);
		cudaFree(d_dx); cudaFree(d_dw); cudaFree(d_db);
		free(x); free(w); free(b); free(out); free(mean); free(rstd);
		free(dout); free(dx); free(dw); free(db);
	}
}

/* The projection y = x w + b (or the head, y = x wte^T) of N rows. */
static void
tg_dense_case(int N, int C, int OC, int head)
{
	size_t	 nx = (size_t)N * C, nw = (size_t)C * OC, ny = (size_t)N * OC;
	float	*x = uni(nx, 1), *w = uni(nw, 1), *b = uni(OC, 1);
	float	*dy = uni(ny, 1), *dx = uni(nx, 1), *dw = uni(nw, 1);
	float	*db = uni(OC, 1), *y = xalloc(ny * 4);
	float	*d_x = dev_from(x, nx * 4), *d_w = dev_from(w, nw * 4);
	float	*d_b = dev_from(b, OC * 4), *d_dy = dev_from(dy, ny * 4);
	float	*d_dx = dev_from(dx, nx * 4), *d_dw = dev_from(dw, nw * 4);
	float	*d_db = dev_from(db, OC * 4), *d_y = dev(ny * 4);
	double	 kf = 1e-5 * sqrt(C), kb = 1e-5 * sqrt(OC), kw = 1e-5 * sqrt(N);
	char	 what[64];

	snprintf(what, sizeof what, "%s N%d C%d %s%d", head ? "head" : "matmul",
	    N, C, head ? "V" : "OC", OC);
	if (head) {
		head_forward(NULL, y, x, w, N, C, OC);
		OK(cuda_head_forward(d_y, d_x, d_w, N, C, OC, NULL));
		check(d_y, y, ny, kf, kf, what);
		head_backward(NULL, dx, 1, dw, dy, x, w, N, C, OC);
		OK(cuda_head_backward(d_dx, d_dw, d_dy, d_x, d_w, N, C, OC,
		    NULL));
		check(d_dx, dx, nx, kb, kb, "  dx");
		check(d_dw, dw, nw, kw, kw, "  dwte");
	} else {
		matmul_forward(NULL, y, x, w, b, N, C, OC);
		OK(cuda_matmul_forward(d_y, d_x, d_w, d_b, N, C, OC, NULL));
		check(d_y, y, ny, kf, kf, what);
		matmul_forward(NULL, y, x, w, NULL, N, C, OC);
		OK(cuda_matmul_forward(d_y, d_x, d_w, NULL, N, C, OC, NULL));
		check(d_y, y, ny, kf, kf, "  no bias");
		matmul_backward(NULL, dx, 1, dw, db, dy, x, w, N, C, OC);
		OK(cuda_matmul_backward(d_dx, d_dw, d_db, d_dy, d_x, d_w, N, C,
		    OC, NULL));
		check(d_dx, dx, nx, kb, kb, "  dx");
		check(d_dw, dw, nw, kw, kw, "  dw");
		SAME(d_db, db, OC, "  db");
		/* No dx, no db: dw alone, accumulated again. */
		matmul_backward(NULL, NULL, 1, dw, NULL, dy, x, w, N, C, OC);
		OK(cuda_matmul_backward(NULL, d_dw, NULL, d_dy, d_x, d_w, N, C,
		    OC, NULL));
		check(d_dw, dw, nw, 2 * kw, 2 * kw, "  dw alone");
		SAME(d_db, db, OC, "  db untouched");
	}
	cudaFree(d_x); cudaFree(d_w); cudaFree(d_b); cudaFree(d_dy);
	cudaFree(d_dx); cudaFree(d_dw); cudaFree(d_db); cudaFree(d_y);
	free(x); free(w); free(b); free(dy); free(dx); free(dw); free(db);
	free(y);
}

static void
t_dense(void **state)
{
	static const int	sizes[][3] = {
		{ 1, 1, 1 }, { 7, 13, 5 }, { 256, 64, 192 }, { 128, 256, 1024 },
		{ 33, 100, 77 },
	};

	NEED_GPU();
	rng_seed(&tg_rng, 33, 0);
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		tg_dense_case(sizes[k][0], sizes[k][1], sizes[k][2], 0);
		tg_dense_case(sizes[k][0], sizes[k][1], sizes[k][2], 1);
	}
	tg_dense_case(64, 32, 50257, 1);
}

static void
t_attention(void **state)
{
	/* B, T, C, H: more heads than samples, and fewer. */
	static const int	sizes[][4] = {
		{ 1, 1, 1, 1 }, { 2, 7, 6, 3 }, { 3, 64, 64, 4 },
		{ 8, 128, 256, 4 }, { 2, 33, 48, 12 }, { 4, 256, 64, 2 },
	};

	NEED_GPU();
	rng_seed(&tg_rng, 34, 0);
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		int	 B = sizes[k][0], T = sizes[k][1], C = sizes[k][2];
		int	 H = sizes[k][3];
		size_t	 nq = (size_t)B * T * 3 * C, no = (size_t)B * T * C;
		size_t	 na = (size_t)B * H * T * T;
		size_t	 ws = cuda_attention_workspace(B, T, H);
		float	*qkv = uni(nq, 1), *dqkv = uni(nq, 1), *dout = uni(no, 1);
		float	*out = xalloc(no * 4);
		float	*stats = xalloc((size_t)B * H * T * 2 * 4);
		float	*hws = xalloc(attention_workspace(T, C / H, 1) * 4);
		float	*d_qkv = dev_from(qkv, nq * 4), *d_dqkv = dev_from(dqkv,
			    nq * 4);
		float	*d_dout = dev_from(dout, no * 4), *d_out = dev(no * 4);
		float	*d_att = dev(na * 4), *d_ws = dev(ws);
		double	 rt = sqrt(T);
		char	 what[64];

		assert_true(ws >= (size_t)T * T * 4);
		snprintf(what, sizeof what, "attention B%d T%d C%d H%d", B, T, C,
		    H);
		attention_forward(NULL, out, stats, hws, qkv, B, T, C, H);
		OK(cuda_attention_forward(d_out, d_att, d_qkv, B, T, C, H,
		    NULL));
		check(d_out, out, no, 2e-7 * rt, 2e-7 * rt, what);
		/* Each side's backward from what its forward kept: the CPU's
		 * statistics, the device's probabilities. */
		attention_backward(NULL, dqkv, 1, dout, qkv, stats, hws, B, T,
		    C, H);
		OK(cuda_attention_backward(d_dqkv, d_dout, d_qkv, d_att, d_ws,
		    B, T, C, H, NULL));
		check(d_dqkv, dqkv, nq, 1e-6 * rt, 1e-6 * rt, "  dqkv");
		cudaFree(d_qkv); cudaFree(d_dqkv); cudaFree(d_dout);
		cudaFree(d_out); cudaFree(d_att); cudaFree(d_ws);
		free(qkv); free(dqkv); free(dout); free(out); free(stats);
		free(hws);
	}
}

/* GELU's inputs stay within +-1000: below about -2750 the CPU's vexp
 * (kernels/cpu/vmath-internal.h) converts a float beyond int's range to
 * int, which C leaves undefined (x86 gives INT_MIN, so GELU returns x
 * there, where the device, which saturates, returns -0). */
static void
t_gelu_residual(void **state)
{
	static const size_t	ns[] = { 1, 17, 1000, (1 << 20) + 3 };
	static const float	edge[] = { 0.0f, -0.0f, 1e-30f, -1e-30f, 3.0f,
	    -3.0f, 10.0f, -10.0f, 90.0f, -90.0f, 1000.0f, -1000.0f };

	NEED_GPU();
	rng_seed(&tg_rng, 35, 0);
	for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
		size_t	 n = ns[k];
		float	*x = uni(n, 4), *dy = uni(n, 1), *dx = uni(n, 1);
		float	*y = xalloc(n * 4), *b = uni(n, 1);
		float	*d_x, *d_dy = dev_from(dy, n * 4), *d_dx = dev_from(dx,
			    n * 4);
		float	*d_y = dev(n * 4), *d_b = dev_from(b, n * 4);

		for (size_t i = 0; i < n; i += 5)
			x[i] = edge[(i / 5) % (sizeof edge / sizeof *edge)];
		d_x = dev_from(x, n * 4);
		gelu_forward(NULL, y, x, n);
		OK(cuda_gelu_forward(d_y, d_x, n, NULL));
		SAME(d_y, y, n, "gelu");
		gelu_backward(NULL, dx, x, dy, n);
		OK(cuda_gelu_backward(d_dx, d_x, d_dy, n, NULL));
		SAME(d_dx, dx, n, "gelu backward");

		residual_forward(NULL, y, x, b, n);
		OK(cuda_residual_forward(d_y, d_x, d_b, n, NULL));
		SAME(d_y, y, n, "residual");
		residual_backward(NULL, dx, b, dy, n);
		OK(cuda_residual_backward(d_dx, d_b, d_dy, n, NULL));
		SAME(d_dx, dx, n, "residual backward a");
		SAME(d_b, b, n, "residual backward b");
		/* One gradient only. */
		for (size_t i = 0; i < n; i++)
			dx[i] += dy[i];
		OK(cuda_residual_backward(d_dx, NULL, d_dy, n, NULL));
		OK(cuda_residual_backward(NULL, NULL, d_dy, n, NULL));
		SAME(d_dx, dx, n, "residual backward, a alone");
		SAME(d_b, b, n, "residual backward, b untouched");
		cudaFree(d_x); cudaFree(d_dy); cudaFree(d_dx); cudaFree(d_y);
		cudaFree(d_b);
		free(x); free(dy); free(dx); free(y); free(b);
	}
}

static void
tg_xent_case(int N, int V, float spread)
{
	size_t	 n = (size_t)N * V;
	float	*l = uni(n, spread), *g = xalloc(n * 4);
	int32_t	*y = xalloc((size_t)N * sizeof *y);
	float	*d_l = dev_from(l, n * 4), *d_g;
	int32_t	*d_y;
	double	*d_loss = dev(sizeof(double)), lc, lg;
	void	*d_ws = dev(cuda_vocab_xent_workspace(N));
	float	 scale = 1.0f / (float)N;
	char	 what[64];

	for (int i = 0; i < N; i++)	/* every 7th row has no target */
		y[i] = i % 7 == 3 ? -1 : (int32_t)rng_below(&tg_rng,
		    (uint32_t)V);
	d_y = dev_from(y, (size_t)N * sizeof *y);
	snprintf(what, sizeof what, "vocab xent N%d V%d spread %g", N, V,
	    spread);
	/* scale 0: the loss alone, the logits untouched. */
	lc = vocab_xent(NULL, l, y, N, V, 0);
	OK(cuda_vocab_xent(d_l, d_loss, d_y, N, V, 0, d_ws, NULL));
	CK(cudaMemcpy(&lg, d_loss, sizeof lg, cudaMemcpyDeviceToHost));
	if (!(fabs(lg - lc) <= 1e-6 * (N + fabs(lc))))
		fail_msg("%s: loss gpu %.17g cpu %.17g", what, lg, lc);
	SAME(d_l, l, n, what);
	memcpy(g, l, n * 4);
	d_g = dev_from(g, n * 4);
	lc = vocab_xent(NULL, g, y, N, V, scale);
	OK(cuda_vocab_xent(d_g, d_loss, d_y, N, V, scale, d_ws, NULL));
	CK(cudaMemcpy(&lg, d_loss, sizeof lg, cudaMemcpyDeviceToHost));
	print_message("    %-36s loss gpu %.12g cpu %.12g\n", what, lg, lc);
	if (!(fabs(lg - lc) <= 1e-6 * (N + fabs(lc))))
		fail_msg("%s: loss gpu %.17g cpu %.17g", what, lg, lc);
	check(d_g, g, n, 2e-6, 2e-6 * scale, "  gradient");
	cudaFree(d_l); cudaFree(d_g); cudaFree(d_y); cudaFree(d_loss);
	cudaFree(d_ws);
	free(l); free(g); free(y);
}

static void
t_vocab_xent(void **state)
{
	static const int	sizes[][2] = {
		{ 1, 1 }, { 5, 3 }, { 64, 256 }, { 1024, 256 }, { 16, 50257 },
	};

	NEED_GPU();
	rng_seed(&tg_rng, 36, 0);
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		tg_xent_case(sizes[k][0], sizes[k][1], 3.0f);
		tg_xent_case(sizes[k][0], sizes[k][1], 50.0f);
	}
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(t_embed),
		cmocka_unit_test(t_layernorm),
		cmocka_unit_test(t_dense),
		cmocka_unit_test(t_attention),
		cmocka_unit_test(t_gelu_residual),
		cmocka_unit_test(t_vocab_xent),
	};
	char			why[256];
	int			rc;

	tg_gpus = cuda_device_check(why, sizeof why);
	if (tg_gpus <= 0) {
		tg_gpus = 0;
		print_message("test-cuda-gpt: %s: the GPU tests are skipped\n",
		    why);
	}
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	cuda_blas_release();
	if (rc == 0 && tg_gpus == 0)
		return 77;	/* automake: SKIP */
	return rc;
}
