/*
 * test-cuda.c: every kernel of kernels/cuda against its CPU twin in
 * kernels/cpu, at several sizes, and the nccl backend of backend/comm.
 *
 * Tolerances (the header of cuda-kernels.h says why):
 *   relu, softmax-xent backward, argmax count, the bias gradient, sgd,
 *   adamw, fp16 and the sparse codec, top-k, threshold, absmax: the same
 *   bits, bytes and indices as the CPU;
 *   linear (cuBLAS against OpenBLAS, K-term sums in another order):
 *   |gpu - cpu| <= 1e-5 * sqrt(K) * (1 + |cpu|), inputs in [-1, 1];
 *   softmax probs (CUDA's expf is within 2 ulp): |gpu - cpu| <=
 *   1e-6 * |cpu| + 1e-37 (8 ulp); the loss sum: |gpu - cpu| <= 1e-6 * (B + |cpu|).
 *
 * The device model (backend/worker/model-gpu.c), a whole mlp step of
 * two micro-batches, or of all their samples at once, against the host
 * model's two: the summed loss within
 * 1e-5 * (1 + |cpu|), each gradient within 1e-3 * |cpu| + 1e-4 * the
 * largest |cpu| (three layers of the linear tolerance above, compounded).
 * The same for a gpt's step, with the same tolerances (its twins are
 * checked one by one in test-cuda-gpt.c).
 *
 * Without a CUDA device every GPU test calls skip() and the program exits
 * 77, so automake reports SKIP, never PASS.  What does run without one is
 * checked then: the "no CUDA device" message, a kernel call failing with
 * file and line, and the nccl backend refusing cleanly.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "lib/clock.h"
#include "lib/cuda-probe.h"
#include "lib/rng.h"
#include "kernels/cpu/compress.h"
#include "kernels/cpu/kernels.h"
#include "kernels/cuda/cuda-kernels.h"
#include "backend/spec/spec.h"
#include "backend/comm/comm.h"
#include "backend/worker/model-gpu.h"
#include "backend/worker/model.h"

static int		tc_gpus;	/* devices, or 0 */
static char		tc_why[256];	/* why there are none */
static struct rng	tc_rng;

#define NEED_GPU() do { if (tc_gpus <= 0) skip(); } while (0)
/* A CUDA runtime call of the test itself. */
#define CK(call) do {							\
	cudaError_t ck_e_ = (call);					\
	if (ck_e_ != cudaSuccess)					\
		fail_msg("%s: %s", #call, cudaGetErrorString(ck_e_));	\
} while (0)
/* A call of kernels/cuda: 0, or fail with its recorded reason. */
#define OK(call) do {							\
	if ((call) != 0)						\
		fail_msg("%s: %s", #call, cuda_last_error());		\
} while (0)

static void *
dev(size_t bytes)
{
	void	*p = NULL;

	CK(cudaMalloc(&p, bytes > 0 ? bytes : 1));
	return p;
}

static void *
dev_from(const void *h, size_t bytes)
{
	void	*p = dev(bytes);

	if (bytes > 0)
		CK(cudaMemcpy(p, h, bytes, cudaMemcpyHostToDevice));
	return p;
}

static void
to_host(void *h, const void *d, size_t bytes)
{
	if (bytes > 0)
		CK(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost));
}

static void *
xalloc(size_t bytes)
{
	void	*p = malloc(bytes > 0 ? bytes : 1);

	assert_non_null(p);
	return p;
}

static float
tc_uniform(void)
{
	return 2.0f * rng_float(&tc_rng) - 1.0f;
}

static float
tc_gauss(void)
{
	return rng_gauss(&tc_rng);
}

static float
tc_bits(uint32_t u)
{
	float	f;

	memcpy(&f, &u, sizeof f);
	return f;
}

static float *
tc_floats(size_t n, float (*gen)(void))
{
	float	*x = xalloc(n * sizeof *x);

	for (size_t i = 0; i < n; i++)
		x[i] = gen();
	return x;
}

/* The GPU's n floats at d, bit for bit the CPU's cpu. */
static void
same_bits(const float *d, const float *cpu, size_t n, const char *what)
{
	float	*g = xalloc(n * sizeof *g);

	to_host(g, d, n * sizeof *g);
	for (size_t i = 0; i < n; i++) {
		if (memcmp(&g[i], &cpu[i], sizeof *g) != 0) {
			print_error("%s: [%zu] gpu %a cpu %a (n %zu)\n", what, i,
			    g[i], cpu[i], n);
			free(g);
			fail();
		}
	}
	free(g);
}

/* The GPU's n floats at d within rel * |cpu| + abs of the CPU's. */
static void
close_to(const float *d, const float *cpu, size_t n, double rel, double abs,
    const char *what)
{
	float	*g = xalloc(n * sizeof *g);
	double	 worst = 0;

	to_host(g, d, n * sizeof *g);
	for (size_t i = 0; i < n; i++) {
		double	e = fabs((double)g[i] - (double)cpu[i]);
		double	tol = rel * fabs((double)cpu[i]) + abs;

		if (!(e <= tol)) {
			print_error("%s: [%zu] gpu %.9g cpu %.9g, off %.3g > "
			    "%.3g\n", what, i, g[i], cpu[i], e, tol);
			free(g);
			fail();
		}
		worst = fmax(worst, tol > 0 ? e / tol : 0);
	}
	free(g);
}

/* Without a device: the message, a kernel's error with file and line,
 * and cuBLAS failing the same way.  With one: the count. */
static void
t_device_check(void **state)
{
	char	err[256] = "";
	int	n = cuda_device_check(err, sizeof err);
	float	x = 1;

	if (tc_gpus > 0) {
		assert_int_equal(n, tc_gpus);
		return;
	}
	assert_int_equal(n, -1);
	print_message("    %s\n", err);
	assert_non_null(strstr(err, "no CUDA device: cudaGetDeviceCount: "));
	assert_true(strlen(err) > strlen("no CUDA device: "
	    "cudaGetDeviceCount: "));
	assert_int_equal(cuda_relu_forward(&x, &x, 1, NULL), -1);
	print_message("    %s\n", cuda_last_error());
	assert_non_null(strstr(cuda_last_error(), "kernels/cuda/activation.cu:"));
	assert_int_equal(cuda_linear_forward(&x, &x, &x, NULL, 1, 1, 1, NULL),
	    -1);
	print_message("    %s\n", cuda_last_error());
	assert_non_null(strstr(cuda_last_error(), "kernels/cuda/linear.cu:"));
	assert_non_null(strstr(cuda_last_error(), "cublas"));
}

/* Without a device the nccl backend refuses, naming what failed. */
static void
t_nccl_no_device(void **state)
{
	struct comm_config	 cf = {
		.backend = "nccl", .rank = 0, .world = 1, .timeout_ms = 2000,
	};
	char			 err[512] = "";

	if (tc_gpus > 0)
		skip();
	assert_null(comm_init(&cf, NULL, err, sizeof err));
	print_message("    %s\n", err);
	assert_non_null(strstr(err, "nccl rendezvous of rank 0 of 1"));
	assert_non_null(strstr(err, "backend/comm/comm-nccl.c:"));
}

static void
tc_linear_case(int B, int in, int out)
{
	size_t	 nx = (size_t)B * in, nw = (size_t)out * in, ny = (size_t)B * out;
	float	*x = tc_floats(nx, tc_uniform), *w = tc_floats(nw, tc_uniform);
	float	*b = tc_floats(out, tc_uniform), *dy = tc_floats(ny, tc_uniform);
	float	*dw = tc_floats(nw, tc_uniform), *db = tc_floats(out, tc_uniform);
	float	*y = xalloc(ny * sizeof *y), *dx = xalloc(nx * sizeof *dx);
	float	*d_x = dev_from(x, nx * 4), *d_w = dev_from(w, nw * 4);
	float	*d_b = dev_from(b, out * 4), *d_dy = dev_from(dy, ny * 4);
	float	*d_dw = dev_from(dw, nw * 4), *d_db = dev_from(db, out * 4);
	float	*d_y = dev(ny * 4), *d_dx = dev(nx * 4);
	char	 what[64];

	snprintf(what, sizeof what, "linear %dx%d->%d", B, in, out);
	linear_forward(y, x, w, b, B, in, out);
	OK(cuda_linear_forward(d_y, d_x, d_w, d_b, B, in, out, NULL));
	close_to(d_y, y, ny, 1e-5 * sqrt(in), 1e-5 * sqrt(in), what);
	linear_forward(y, x, w, NULL, B, in, out);
	OK(cuda_linear_forward(d_y, d_x, d_w, NULL, B, in, out, NULL));
	close_to(d_y, y, ny, 1e-5 * sqrt(in), 1e-5 * sqrt(in), what);

	linear_backward(dx, dw, db, dy, x, w, B, in, out);
	OK(cuda_linear_backward(d_dx, d_dw, d_db, d_dy, d_x, d_w, B, in, out,
	    NULL));
	close_to(d_dx, dx, nx, 1e-5 * sqrt(out), 1e-5 * sqrt(out), what);
	close_to(d_dw, dw, nw, 1e-5 * sqrt(B), 1e-5 * sqrt(B), what);
	same_bits(d_db, db, out, what);
	/* dx NULL: only the parameter gradients, accumulated again. */
	linear_backward(NULL, dw, db, dy, x, w, B, in, out);
	OK(cuda_linear_backward(NULL, d_dw, d_db, d_dy, d_x, d_w, B, in, out,
	    NULL));
	close_to(d_dw, dw, nw, 2e-5 * sqrt(B), 2e-5 * sqrt(B), what);
	same_bits(d_db, db, out, what);

	cudaFree(d_x); cudaFree(d_w); cudaFree(d_b); cudaFree(d_dy);
	cudaFree(d_dw); cudaFree(d_db); cudaFree(d_y); cudaFree(d_dx);
	free(x); free(w); free(b); free(dy); free(dw); free(db); free(y);
	free(dx);
}

static void
t_linear(void **state)
{
	static const int	sizes[][3] = {
		{ 1, 1, 1 }, { 7, 13, 5 }, { 128, 784, 256 }, { 128, 256, 10 },
		{ 33, 1000, 77 }, { 256, 64, 300 },
	};

	NEED_GPU();
	rng_seed(&tc_rng, 11, 0);
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
		tc_linear_case(sizes[i][0], sizes[i][1], sizes[i][2]);
}

/* Gaussians with the edge cases sprinkled in. */
static float *
tc_edgy(size_t n)
{
	static const uint32_t	edge[] = {
		0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u,
		0x7fc00000u, 0xffc00001u, 0x00000001u, 0x80000001u,
	};
	float			*x = tc_floats(n, tc_gauss);

	for (size_t i = 0; i < n; i += 7)
		x[i] = tc_bits(edge[(i / 7) % 8]);
	return x;
}

static void
t_relu(void **state)
{
	static const size_t	ns[] = { 1, 17, 1000, (1 << 20) + 3 };

	NEED_GPU();
	rng_seed(&tc_rng, 12, 0);
	for (size_t a = 0; a < 4; a++) {
		size_t	 n = ns[a];
		float	*x = tc_edgy(n), *dy = tc_floats(n, tc_gauss);
		float	*y = xalloc(n * 4), *dx = xalloc(n * 4);
		float	*d_x = dev_from(x, n * 4), *d_dy = dev_from(dy, n * 4);
		float	*d_y = dev(n * 4), *d_dx = dev(n * 4);

		relu_forward(y, x, n);
		OK(cuda_relu_forward(d_y, d_x, n, NULL));
		same_bits(d_y, y, n, "relu");
		relu_backward(dx, dy, y, n);
		OK(cuda_relu_backward(d_dx, d_dy, d_y, n, NULL));
		same_bits(d_dx, dx, n, "relu backward");
		/* in place */
		relu_forward(x, x, n);
		OK(cuda_relu_forward(d_x, d_x, n, NULL));
		same_bits(d_x, x, n, "relu in place");
		cudaFree(d_x); cudaFree(d_dy); cudaFree(d_y); cudaFree(d_dx);
		free(x); free(dy); free(y); free(dx);
	}
}

static void
tc_softmax_case(int B, int C, float spread, int ties)
{
	size_t	 n = (size_t)B * C;
	float	*l = xalloc(n * 4), *p = xalloc(n * 4), *d = xalloc(n * 4);
	uint8_t	*lab = xalloc((size_t)B);
	float	*d_l, *d_p = dev(n * 4), *d_d = dev(n * 4), *d_pc;
	uint8_t	*d_lab;
	double	*d_loss = dev(sizeof(double)), loss, gloss;
	int	*d_cor = dev(sizeof(int)), cor;
	char	 what[64];

	for (size_t i = 0; i < n; i++)
		l[i] = spread * tc_uniform();
	for (int i = 0; i < B; i++) {
		lab[i] = (uint8_t)rng_below(&tc_rng, (uint32_t)(C < 256 ? C :
		    256));
		if (ties && C > 2) {	/* a tied maximum, label on either */
			l[(size_t)i * C + 1] = 2 * spread;
			l[(size_t)i * C + C - 1] = 2 * spread;
			if (i % 3 == 0)
				lab[i] = 1;
			else if (i % 3 == 1)
				lab[i] = (uint8_t)(C - 1 < 255 ? C - 1 : 255);
		}
	}
	d_l = dev_from(l, n * 4);
	d_lab = dev_from(lab, (size_t)B);
	snprintf(what, sizeof what, "softmax %dx%d spread %g", B, C, spread);

	loss = softmax_xent_forward(p, l, lab, B, C);
	OK(cuda_softmax_xent_forward(d_p, d_loss, d_l, d_lab, B, C, NULL));
	close_to(d_p, p, n, 1e-6, 1e-37, what);
	to_host(&gloss, d_loss, sizeof gloss);
	if (!(fabs(gloss - loss) <= 1e-6 * (B + fabs(loss))))
		fail_msg("%s: loss gpu %.17g cpu %.17g", what, gloss, loss);

	/* The backward from the same probs: the same bits. */
	d_pc = dev_from(p, n * 4);
	softmax_xent_backward(d, p, lab, B, C, 1.0f / 128);
	OK(cuda_softmax_xent_backward(d_d, d_pc, d_lab, B, C, 1.0f / 128,
	    NULL));
	same_bits(d_d, d, n, what);

	OK(cuda_argmax_correct(d_cor, d_l, d_lab, B, C, NULL));
	to_host(&cor, d_cor, sizeof cor);
	assert_int_equal(cor, argmax_correct(l, lab, B, C));

	cudaFree(d_l); cudaFree(d_p); cudaFree(d_d); cudaFree(d_pc);
	cudaFree(d_lab); cudaFree(d_loss); cudaFree(d_cor);
	free(l); free(p); free(d); free(lab);
}

static void
t_softmax(void **state)
{
	static const int	sizes[][2] = {
		{ 1, 1 }, { 1, 10 }, { 128, 10 }, { 1000, 10 }, { 7, 1000 },
		{ 64, 33 }, { 4096, 10 },
	};

	NEED_GPU();
	rng_seed(&tc_rng, 13, 0);
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		tc_softmax_case(sizes[i][0], sizes[i][1], 3.0f, 0);
		tc_softmax_case(sizes[i][0], sizes[i][1], 1000.0f, 0);
		tc_softmax_case(sizes[i][0], sizes[i][1], 2.0f, 1);
	}
}

static void
t_optim(void **state)
{
	static const size_t	ns[] = { 1, 15, 16, 1000, (1 << 20) + 5 };
	static const float	mus[] = { 0.0f, 0.9f }, wds[] = { 0.0f, 5e-4f };

	NEED_GPU();
	rng_seed(&tc_rng, 14, 0);
	for (size_t a = 0; a < 5; a++) {
		size_t	 n = ns[a];
		float	*p = tc_floats(n, tc_gauss), *g = tc_floats(n, tc_gauss);
		float	*m = xalloc(n * 4), *v = xalloc(n * 4);
		float	*d_p = dev_from(p, n * 4), *d_g = dev_from(g, n * 4);
		float	*d_m = dev(n * 4), *d_v = dev(n * 4);

		for (int i = 0; i < 2; i++)
			for (int j = 0; j < 2; j++) {
				memset(m, 0, n * 4);
				CK(cudaMemset(d_m, 0, n * 4));
				for (int step = 0; step < 3; step++) {
					sgd_step(p, g, mus[i] != 0 ? m : NULL,
					    n, 0.05f, mus[i], wds[j]);
					OK(cuda_sgd_step(d_p, d_g, mus[i] != 0 ?
					    d_m : NULL, n, 0.05f, mus[i], wds[j],
					    NULL));
				}
				same_bits(d_p, p, n, "sgd p");
				same_bits(d_m, m, n, "sgd m");
			}
		memset(m, 0, n * 4);
		memset(v, 0, n * 4);
		CK(cudaMemset(d_m, 0, n * 4));
		CK(cudaMemset(d_v, 0, n * 4));
		for (long t = 1; t <= 3; t++) {
			adamw_step(NULL, p, g, m, v, n, 1e-3f, 0.9f, 0.999f,
			    1e-8f, 0.01f, t);
			OK(cuda_adamw_step(d_p, d_g, d_m, d_v, n, 1e-3f, 0.9f,
			    0.999f, 1e-8f, 0.01f, t, NULL));
		}
		same_bits(d_p, p, n, "adamw p");
		same_bits(d_m, m, n, "adamw m");
		same_bits(d_v, v, n, "adamw v");
		cudaFree(d_p); cudaFree(d_g); cudaFree(d_m); cudaFree(d_v);
		free(p); free(g); free(m); free(v);
	}
}

/* Data for selection: 0 gaussian, 1 few values (ties, +-0), 2 all equal,
 * 3 gaussian with NaN and infinities, 4 one loud layer in front,
 * 5 magnitudes rising along x. */
static float *
tc_select_data(int kind, size_t n)
{
	float	*x = xalloc(n * sizeof *x);

	for (size_t i = 0; i < n; i++) {
		float	g = tc_gauss();

		switch (kind) {
		case 0:
			x[i] = g;
			break;
		case 1:
			x[i] = 0.25f * (float)((int)rng_below(&tc_rng, 41) -
			    20);
			if (x[i] == 0 && (i & 1))
				x[i] = -0.0f;
			break;
		case 2:
			x[i] = -3.0f;
			break;
		case 3:
			x[i] = i % 97 == 5 ? tc_bits(0x7f800000u |
			    (uint32_t)(i % 3)) : g;
			break;
		case 4:
			x[i] = i < n / 10 ? 100.0f * g : g;
			break;
		default:
			x[i] = g * (float)(i + 1) / (float)n;
		}
	}
	return x;
}

static void
tc_topk_case(const float *x, const float *d_x, size_t n, size_t k, void *ws)
{
	size_t		 want = k < n ? k : n, got;
	uint32_t	*idx = xalloc(compress_idx_cap(n, k) * sizeof *idx);
	uint32_t	*gidx = xalloc(want * sizeof *gidx);
	uint32_t	*d_idx = dev(want * sizeof *d_idx);

	got = compress_topk(idx, x, n, k);
	assert_int_equal(got, want);
	OK(cuda_compress_topk(d_idx, d_x, n, k, ws, NULL));
	to_host(gidx, d_idx, want * sizeof *gidx);
	for (size_t j = 0; j < want; j++) {
		if (gidx[j] != idx[j])
			fail_msg("topk n %zu k %zu: [%zu] gpu %u cpu %u", n, k,
			    j, gidx[j], idx[j]);
	}
	cudaFree(d_idx);
	free(idx);
	free(gidx);
}

static void
t_topk(void **state)
{
	static const size_t	ns[] = { 1, 10, 1000, 4097, 70001,
				    (1 << 20) + 7 };

	NEED_GPU();
	rng_seed(&tc_rng, 15, 0);
	for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
		for (int kind = 0; kind < 6; kind++) {
			size_t	 n = ns[a];
			size_t	 ks[] = { 0, 1, 7, n / 100, n / 2, n - 1, n,
				    n + 5 };
			float	*x = tc_select_data(kind, n);
			float	*d_x = dev_from(x, n * 4);
			void	*ws = dev(cuda_select_workspace(n));

			for (size_t b = 0; b < sizeof ks / sizeof ks[0]; b++)
				tc_topk_case(x, d_x, n, ks[b], ws);
			cudaFree(d_x);
			cudaFree(ws);
			free(x);
		}
}

static void
t_threshold(void **state)
{
	static const size_t	ns[] = { 1000, 5000, 100000, 1 << 20,
				    (3 << 20) + 11 };
	static const double	ds[] = { 0.0003, 0.001, 0.01, 0.1, 0.3 };

	NEED_GPU();
	rng_seed(&tc_rng, 16, 0);
	for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
		for (int kind = 0; kind < 6; kind++) {
			size_t	 n = ns[a];
			float	*x = tc_select_data(kind, n);
			float	*d_x = dev_from(x, n * 4);
			void	*ws = dev(cuda_select_workspace(n));
			float	*scratch = xalloc(compress_scratch_floats(n) *
			    sizeof *scratch);

			for (size_t b = 0; b < sizeof ds / sizeof ds[0]; b++) {
				size_t	  k = (size_t)ceil(ds[b] * (double)n);
				size_t	  cap = compress_idx_cap(n, k), c, gc;
				uint32_t *idx = xalloc(cap * sizeof *idx);
				uint32_t *gidx = xalloc(cap * sizeof *gidx);
				uint32_t *d_idx = dev(cap * sizeof *d_idx);
				struct rng r1, r2;

				rng_seed(&r1, a, (uint64_t)(kind * 10 + b));
				r2 = r1;
				c = compress_threshold(idx, x, n, k, &r1,
				    scratch);
				OK(cuda_compress_threshold(d_idx, &gc, d_x, n,
				    k, &r2, ws, NULL));
				if (gc != c)
					fail_msg("threshold n %zu k %zu kind %d:"
					    " gpu %zu cpu %zu", n, k, kind, gc,
					    c);
				to_host(gidx, d_idx, c * sizeof *gidx);
				assert_memory_equal(gidx, idx, c * sizeof *idx);
				assert_memory_equal(&r1, &r2, sizeof r1);
				cudaFree(d_idx);
				free(idx);
				free(gidx);
			}
			cudaFree(d_x);
			cudaFree(ws);
			free(x);
			free(scratch);
		}
}

static void
t_absmax(void **state)
{
	static const size_t	ns[] = { 0, 1, 1000, (1 << 20) + 1 };

	NEED_GPU();
	rng_seed(&tc_rng, 17, 0);
	for (size_t a = 0; a < 4; a++) {
		size_t	  n = ns[a], m = n / 3;
		float	 *x = tc_edgy(n), *d_x = dev_from(x, n * 4), got;
		float	 *d_out = dev(sizeof(float)), want;
		uint32_t *idx = xalloc((m + 1) * sizeof *idx), *d_idx;

		for (size_t j = 0; j < m; j++)
			idx[j] = (uint32_t)(3 * j + 1);
		d_idx = dev_from(idx, m * sizeof *idx);
		want = compress_absmax(x, NULL, n);
		OK(cuda_compress_absmax(d_out, d_x, NULL, n, NULL));
		to_host(&got, d_out, sizeof got);
		assert_memory_equal(&got, &want, sizeof got);
		want = compress_absmax(x, idx, m);
		OK(cuda_compress_absmax(d_out, d_x, d_idx, m, NULL));
		to_host(&got, d_out, sizeof got);
		assert_memory_equal(&got, &want, sizeof got);
		cudaFree(d_x); cudaFree(d_out); cudaFree(d_idx);
		free(x); free(idx);
	}
}

static void
t_fp16(void **state)
{
	static const size_t	ns[] = { 1, 9, 1000, (1 << 20) + 3 };
	static const float	scales[] = { 1.0f, 0x1p20f, 0x1p-3f };

	NEED_GPU();
	rng_seed(&tc_rng, 18, 0);
	for (size_t a = 0; a < 4; a++) {
		size_t	 n = ns[a];
		float	 sc = scales[a % 3];
		float	*x = tc_edgy(n), *dense = tc_floats(n, tc_gauss);
		uint8_t	*buf = xalloc(2 * n), *gbuf = xalloc(2 * n);
		float	*d_x = dev_from(x, n * 4), *d_dense = dev_from(dense,
			    n * 4);
		uint8_t	*d_buf = dev(2 * n);

		for (size_t i = 0; i < n; i++)	/* small ones, near subnormal */
			if (i % 5 == 2)
				x[i] *= 0x1p-20f;
		CK(cudaMemcpy(d_x, x, n * 4, cudaMemcpyHostToDevice));
		compress_fp16_encode(buf, x, n, sc);
		OK(cuda_fp16_encode(d_buf, d_x, n, sc, NULL));
		to_host(gbuf, d_buf, 2 * n);
		assert_memory_equal(gbuf, buf, 2 * n);
		compress_fp16_decode_add(dense, buf, n, 1.0f / sc);
		OK(cuda_fp16_decode_add(d_dense, d_buf, n, 1.0f / sc, NULL));
		same_bits(d_dense, dense, n, "fp16 decode");
		cudaFree(d_x); cudaFree(d_dense); cudaFree(d_buf);
		free(x); free(dense); free(buf); free(gbuf);
	}
	/* Every binary16 decodes alike. */
	{
		size_t	 n = 65536;
		uint8_t	*in = xalloc(2 * n), *d_in;
		float	*dense = xalloc(n * 4), *d_dense;

		for (size_t i = 0; i < n; i++) {
			in[2 * i] = (uint8_t)i;
			in[2 * i + 1] = (uint8_t)(i >> 8);
			dense[i] = 0.5f;
		}
		d_in = dev_from(in, 2 * n);
		d_dense = dev_from(dense, n * 4);
		compress_fp16_decode_add(dense, in, n, 1.0f);
		OK(cuda_fp16_decode_add(d_dense, d_in, n, 1.0f, NULL));
		same_bits(d_dense, dense, n, "fp16 every half");
		cudaFree(d_in); cudaFree(d_dense);
		free(in); free(dense);
	}
}

/* Decode buf (len bytes) on both sides into copies of base[n]; the same
 * return and the same floats. */
static void
tc_decode_same(const uint8_t *buf, size_t len, const float *base, size_t n,
    float scale, float *d_dense, void *ws, const char *what)
{
	float	*cpu = xalloc(n * 4);
	uint8_t	*d_buf = dev_from(buf, len);
	long	 want, got;

	memcpy(cpu, base, n * 4);
	CK(cudaMemcpy(d_dense, base, n * 4, cudaMemcpyHostToDevice));
	want = compress_sparse_decode_add(cpu, n, buf, len, scale);
	OK(cuda_sparse_decode_add(d_dense, n, d_buf, len, scale, &got, ws,
	    NULL));
	if (got != want)
		fail_msg("%s: decode of %zu bytes: gpu %ld cpu %ld", what, len,
		    got, want);
	same_bits(d_dense, cpu, n, what);
	cudaFree(d_buf);
	free(cpu);
}

static void
tc_sparse_case(size_t n, double density, float scale)
{
	float	 *x = tc_floats(n, tc_gauss), *base = tc_floats(n, tc_gauss);
	size_t	  k = (size_t)ceil(density * (double)n), cnt, len, glen;
	uint32_t *idx = xalloc(compress_idx_cap(n, k) * sizeof *idx);
	uint32_t *d_idx;
	uint8_t	 *buf, *gbuf, *d_out, *mut;
	float	 *d_x = dev_from(x, n * 4), *d_dense = dev(n * 4);
	void	 *ews, *dws;
	size_t	  bound;
	char	  what[96];

	for (size_t i = 0; i < n; i += 11)
		x[i] *= 0x1p-18f;
	CK(cudaMemcpy(d_x, x, n * 4, cudaMemcpyHostToDevice));
	cnt = compress_topk(idx, x, n, k);
	bound = compress_sparse_bound(n, cnt);
	buf = xalloc(bound);
	gbuf = xalloc(bound);
	d_out = dev(bound);
	d_idx = dev_from(idx, cnt * sizeof *idx);
	ews = dev(cuda_sparse_encode_workspace(cnt));
	snprintf(what, sizeof what, "sparse n %zu count %zu scale %g", n, cnt,
	    scale);

	len = compress_sparse_encode(buf, idx, x, cnt, scale);
	OK(cuda_sparse_encode(d_out, &glen, d_idx, d_x, cnt, scale, ews,
	    NULL));
	if (glen != len)
		fail_msg("%s: gpu %zu bytes, cpu %zu", what, glen, len);
	to_host(gbuf, d_out, len);
	assert_memory_equal(gbuf, buf, len);

	dws = dev(cuda_sparse_decode_workspace(n, len + 8));
	tc_decode_same(buf, len, base, n, 1.0f / scale, d_dense, dws, what);
	/* Every truncation, then mutations: the same verdicts. */
	for (size_t cut = 0; cut < len; cut += 1 + len / 64)
		tc_decode_same(buf, cut, base, n, 1.0f / scale, d_dense, dws,
		    what);
	mut = xalloc(len + 8);
	for (int rep = 0; rep < 40; rep++) {
		size_t	mlen = len + rng_below(&tc_rng, 8);

		memcpy(mut, buf, len);
		for (size_t i = len; i < mlen; i++)
			mut[i] = (uint8_t)rng_below(&tc_rng, 256);
		for (int f = 0; f < 1 + rep % 3; f++) {
			size_t	at = rng_below(&tc_rng, (uint32_t)(len < 16 ?
			    len : 16 + (len - 16) / 8));

			mut[at] ^= (uint8_t)(1u << rng_below(&tc_rng, 8));
		}
		tc_decode_same(mut, mlen, base, n, 1.0f / scale, d_dense, dws,
		    what);
	}
	cudaFree(d_x); cudaFree(d_dense); cudaFree(d_idx); cudaFree(d_out);
	cudaFree(ews); cudaFree(dws);
	free(x); free(base); free(idx); free(buf); free(gbuf); free(mut);
}

/* Hand-made buffers: overlong and wide varints, zero gaps, an index out
 * of range, too few value bytes. */
static void
t_sparse_malformed(void **state)
{
	static const struct {
		uint8_t	b[16];
		size_t	len;
	} cases[] = {
		{ { 0 }, 1 },					/* empty */
		{ { 1, 5, 0, 0x3c }, 4 },			/* one: ok */
		{ { 2, 5, 0, 0, 0x3c, 0, 0x3c }, 7 },		/* zero gap */
		{ { 1, 0x80, 0x80, 0x80, 0x80, 0x10, 0, 0 }, 8 }, /* 5th > 0x0f */
		{ { 1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0, 0 }, 9 },
		{ { 1, 0xff, 0x7f, 0, 0x3c }, 5 },		/* past n */
		{ { 2, 1, 2, 0, 0x3c }, 5 },			/* values cut */
		{ { 0x80, 0x80, 0x80, 0x80, 0x80, 1 }, 6 },	/* count wide */
		{ { 3, 1, 1, 1, 0, 0x3c, 0, 0x3c, 0, 0x3c }, 10 },
		{ { 1, 0x81 }, 2 },				/* cut varint */
	};
	size_t	 n = 1000;
	float	*base, *d_dense;
	void	*ws;

	NEED_GPU();
	rng_seed(&tc_rng, 19, 0);
	base = tc_floats(n, tc_gauss);
	d_dense = dev(n * 4);
	ws = dev(cuda_sparse_decode_workspace(n, 64));
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		tc_decode_same(cases[i].b, cases[i].len, base, n, 1.0f, d_dense,
		    ws, "hand-made");
	cudaFree(d_dense);
	cudaFree(ws);
	free(base);
}

static void
t_sparse(void **state)
{
	static const size_t	ns[] = { 1, 100, 5000, 300000, 1 << 22 };
	static const double	ds[] = { 0.0, 0.001, 0.05, 0.5, 1.0 };
	static const float	scales[] = { 1.0f, 0x1p20f, 0x1p-3f };

	NEED_GPU();
	rng_seed(&tc_rng, 20, 0);
	for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
		for (size_t b = 0; b < sizeof ds / sizeof ds[0]; b++)
			tc_sparse_case(ns[a], ds[b], scales[(a + b) % 3]);
}

/* An index past 2^28 needs a five-byte varint: a gigabyte of floats. */
static void
t_sparse_wide(void **state)
{
	size_t		 n = (1u << 28) + 5, len;
	uint32_t	 idx[3] = { 1, (1u << 28) + 2, (1u << 28) + 4 };
	float		 x[3] = { 0.5f, -2.0f, 3.0f }, got[3], *cpu, *d_dense;
	uint8_t		 buf[64], *d_buf;
	void		*ws;
	long		 used, want;

	NEED_GPU();
	/* compress_sparse_encode reads x[idx[j]]: a sparse stand-in. */
	cpu = calloc(n, sizeof *cpu);
	assert_non_null(cpu);
	for (int j = 0; j < 3; j++)
		cpu[idx[j]] = x[j];
	len = compress_sparse_encode(buf, idx, cpu, 3, 1.0f);
	/* count, gap 1, then a gap of 2^28 + 1 in five bytes */
	assert_int_equal(buf[1 + 1 + 3] & 0x80, 0x80);
	assert_int_equal(buf[1 + 1 + 4] & 0x80, 0);
	for (int j = 0; j < 3; j++)
		cpu[idx[j]] = 1.0f;
	want = compress_sparse_decode_add(cpu, n, buf, len, 1.0f);
	d_dense = dev(n * sizeof *d_dense);
	CK(cudaMemset(d_dense, 0, n * sizeof *d_dense));
	for (int j = 0; j < 3; j++)
		CK(cudaMemcpy(d_dense + idx[j], &(float){ 1.0f }, 4,
		    cudaMemcpyHostToDevice));
	d_buf = dev_from(buf, len);
	ws = dev(cuda_sparse_decode_workspace(n, len));
	OK(cuda_sparse_decode_add(d_dense, n, d_buf, len, 1.0f, &used, ws,
	    NULL));
	assert_int_equal(used, want);
	for (int j = 0; j < 3; j++) {
		to_host(&got[j], d_dense + idx[j], 4);
		assert_memory_equal(&got[j], &cpu[idx[j]], 4);
	}
	cudaFree(d_dense); cudaFree(d_buf); cudaFree(ws);
	free(cpu);
}

/* The nccl backend as a group of one on device 0: device buffers in,
 * the collectives' results out. */
static void
t_nccl_world_1(void **state)
{
	struct comm_config	 cf = {
		.backend = "nccl", .rank = 0, .world = 1, .timeout_ms = 20000,
	};
	struct comm		*c;
	float			 f[3] = { 1, 2, 3 }, g[3], *d_f;
	char			 in[5] = "abcd", out[5] = "", err[512] = "";
	char			*d_in, *d_out;
	size_t			 lens[1] = { 4 };

	NEED_GPU();
	c = comm_init(&cf, NULL, err, sizeof err);
	if (c == NULL)
		fail_msg("comm_init: %s", err);
	assert_string_equal(comm_memory(c), "device");
	assert_string_equal(comm_backend_name(c), "nccl");
	d_f = dev_from(f, sizeof f);
	d_in = dev_from(in, 5);
	d_out = dev(5);
	CK(cudaMemset(d_out, 0, 5));
	assert_int_equal(comm_allreduce_f32(c, d_f, 3, err, sizeof err), 0);
	to_host(g, d_f, sizeof g);
	assert_memory_equal(g, f, sizeof f);
	assert_int_equal(comm_allgatherv(c, d_in, d_out, lens, err,
	    sizeof err), 0);
	to_host(out, d_out, 5);
	assert_string_equal(out, "abcd");
	assert_int_equal(comm_broadcast(c, d_in, 4, 0, err, sizeof err), 0);
	assert_int_equal(comm_broadcast(c, d_in, 4, 1, err, sizeof err), -1);
	assert_int_equal(comm_barrier(c, err, sizeof err), 0);
	comm_destroy(c);
	cudaFree(d_f); cudaFree(d_in); cudaFree(d_out);
}

/* A file store in a temporary directory, for the lonely rank below. */
static int
tc_store_set(void *ctx, const char *key, const void *val, size_t len)
{
	char	 path[PATH_MAX];
	FILE	*f;
	int	 ok;

	snprintf(path, sizeof path, "%s/%s", (const char *)ctx, key);
	for (char *p = path + strlen(ctx) + 1; *p != '\0'; p++)
		if (*p == '/')
			*p = '_';
	if ((f = fopen(path, "wb")) == NULL)
		return -1;
	ok = fwrite(val, 1, len, f) == len;
	return fclose(f) == 0 && ok ? 0 : -1;
}

static int
tc_store_get(void *ctx, const char *key, void **val, size_t *len,
    int timeout_ms)
{
	usleep((useconds_t)timeout_ms * 1000);
	return -1;
}

/*
 * Rank 0 of 2 alone: it publishes the id and waits for a rank 1 that
 * never comes; the init must fail at the timeout, aborted, not hang.  An
 * alarm kills the program if the abort itself hung.
 */
static void
t_nccl_lonely(void **state)
{
	char			 dir[] = "/tmp/test-cuda.XXXXXX", err[512] = "";
	char			 path[PATH_MAX];
	struct comm_config	 cf = {
		.backend = "nccl", .rank = 0, .world = 2, .generation = 7,
		.timeout_ms = 2000,
	};
	struct comm_store	 cs = { dir, tc_store_set, tc_store_get };
	struct comm		*c;
	struct stat		 st;
	double			 t;

	NEED_GPU();
	assert_non_null(mkdtemp(dir));
	alarm(60);
	t = 1e3 * clock_mono();
	c = comm_init(&cf, &cs, err, sizeof err);
	t = 1e3 * clock_mono() - t;
	alarm(0);
	print_message("    %.0f ms: %s\n", t, err);
	snprintf(path, sizeof path, "%s/g7_nccl-id", dir);
	assert_int_equal(stat(path, &st), 0);
	assert_true(st.st_size > 0);
	unlink(path);
	rmdir(dir);
	assert_null(c);
	assert_non_null(strstr(err, "no progress in 2000 ms"));
	assert_true(t >= 1900 && t < 15000);
}

static struct model *
tc_model(const char *yaml, int max_batch)
{
	struct job_spec		job;
	struct spec_errors	errs = { 0 };

	assert_int_equal(spec_parse_job("t.yaml", yaml, strlen(yaml), &job,
	    &errs), 0);
	return model_create(&job, 1, 28, 28, 10, max_batch, 42);
}

/* A cnn has no device kernels: refused by name, with or without a GPU,
 * before any CUDA call, and not as an out-of-memory. */
static void
t_model_gpu_refuses(void **state)
{
	struct model	*m = tc_model("name: c\nmodel: {type: cnn, channels: "
	    "[4], hidden: []}\n", 8);
	char		 err[256] = "";
	int		 oom = -1;

	assert_null(model_gpu_create(m, 8, &oom, err, sizeof err));
	print_message("    %s\n", err);
	assert_non_null(strstr(err, "layer 1 is a convolution"));
	assert_int_equal(oom, 0);
	assert_null(model_gpu_create(m, 0, &oom, err, sizeof err));
	model_free(m);
}

/* Host gradients h against the device's d, n floats. */
static void
tc_grads_close(const float *d, const float *h, size_t n, const char *what)
{
	double	 top = 0, worst = 0;

	for (size_t i = 0; i < n; i++)
		top = fmax(top, fabs(h[i]));
	assert_true(top > 0);
	for (size_t i = 0; i < n; i++) {
		double	e = fabs((double)d[i] - h[i]);
		double	tol = 1e-3 * fabs(h[i]) + 1e-4 * top;

		if (!(e <= tol))
			fail_msg("%s: grad[%zu] gpu %.9g cpu %.9g", what, i,
			    d[i], h[i]);
		worst = fmax(worst, e / tol);
	}
	print_message("    %s: %zu gradients, worst %.2f of the tolerance\n",
	    what, n, worst);
}

/* Two micro-batches (64 + 32) on the host model; on the device the same
 * two, or (whole) all 96 samples in one. */
static void
tc_model_step(struct model *m, struct model_gpu *g, const float *x,
    const uint8_t *y, int whole, const char *what)
{
	float	*dg = xalloc(m->n_params * sizeof *dg);
	float	 scale = 1.0f / 96;
	double	 lh = 0, ld = 0;
	char	 err[512];
	struct model_input in[2];

	memset(m->grads, 0, m->n_params * sizeof(float));
	in[0] = (struct model_input){ .x = x, .y = y };
	in[1] = (struct model_input){ .x = x + 64 * 784, .y = y + 64 };
	lh += model_forward(m, &in[0], 64, NULL);
	model_backward(m, &in[0], 64, scale);
	lh += model_forward(m, &in[1], 32, NULL);
	model_backward(m, &in[1], 32, scale);
	if (model_gpu_zero_grads(g, err, sizeof err) != 0)
		fail_msg("%s: %s", what, err);
	if (whole && model_gpu_step(g, &(struct model_input){ .x = x, .y = y },
	    96, scale, &ld, err, sizeof err) != 0)
		fail_msg("%s: %s", what, err);
	if (!whole && (model_gpu_step(g, &in[0], 64, scale, &ld, err,
	    sizeof err) != 0 || model_gpu_step(g, &in[1], 32, scale, &ld, err,
	    sizeof err) != 0))
		fail_msg("%s: %s", what, err);
	if (model_gpu_get_grads(g, dg, err, sizeof err) != 0)
		fail_msg("%s: %s", what, err);
	print_message("    %s: loss gpu %.9g cpu %.9g\n", what, ld, lh);
	assert_true(fabs(ld - lh) <= 1e-5 * (1 + fabs(lh)));
	tc_grads_close(dg, m->grads, m->n_params, what);
	free(dg);
}

static void
t_model_gpu(void **state)
{
	struct model	 *m;
	struct model_gpu *g;
	float		 *x;
	uint8_t		 *y;
	double		  loss = 0;
	char		  err[512];
	int		  oom;

	NEED_GPU();
	x = xalloc(96 * 784 * sizeof *x);
	y = xalloc(96);
	rng_seed(&tc_rng, 23, 0);
	for (size_t i = 0; i < 96 * 784; i++)
		x[i] = rng_float(&tc_rng);
	for (int i = 0; i < 96; i++)
		y[i] = (uint8_t)rng_below(&tc_rng, 10);
	/* The device model is made for more samples than the host's, so a
	 * buffer sized by the host model's batch would show. */
	m = tc_model("name: m\nmodel: {type: mlp, hidden: [128, 64]}\n", 64);
	if ((g = model_gpu_create(m, 96, &oom, err, sizeof err)) == NULL)
		fail_msg("model_gpu_create: %s", err);
	if (model_gpu_set_params(g, m->params, err, sizeof err) != 0)
		fail_msg("model_gpu_set_params: %s", err);
	tc_model_step(m, g, x, y, 0, "step 1, 64 + 32");
	tc_model_step(m, g, x, y, 1, "step 1, 96 at once");
	/* An update on the host reaches the device with the next upload. */
	for (size_t i = 0; i < m->n_params; i++)
		m->params[i] -= 0.5f * m->grads[i];
	if (model_gpu_set_params(g, m->params, err, sizeof err) != 0)
		fail_msg("model_gpu_set_params: %s", err);
	tc_model_step(m, g, x, y, 0, "step 2, new parameters");
	/* More samples than the device model was made for. */
	assert_int_equal(model_gpu_step(g, &(struct model_input){ .x = x,
	    .y = y }, 97, 1.0f, &loss, err, sizeof err), -1);
	assert_non_null(strstr(err, "made for 96"));
	model_gpu_free(g);
	model_free(m);
	free(x);
	free(y);
}

/*
 * A gpt (L=2, H=2, C=32, T=16, V=256) on random tokens, some targets left
 * out: two micro-batches (5 + 3 windows) on the host; on the device the
 * same two, or all 8 at once, with the same tolerances as the mlp's.
 */
static void
tc_gpt_step(struct model *m, struct model_gpu *g, const int32_t *tok,
    const int32_t *tgt, int whole, const char *what)
{
	float	*dg = xalloc(m->n_params * sizeof *dg);
	float	 scale = 1.0f / (8 * 16);
	double	 lh = 0, ld = 0;
	char	 err[512];
	struct model_input in[3];

	memset(m->grads, 0, m->n_params * sizeof(float));
	in[0] = (struct model_input){ .tok = tok, .tgt = tgt };
	in[1] = (struct model_input){ .tok = tok + 5 * 16, .tgt = tgt + 5 * 16 };
	in[2] = in[0];
	lh += model_forward(m, &in[0], 5, NULL);
	model_backward(m, &in[0], 5, scale);
	lh += model_forward(m, &in[1], 3, NULL);
	model_backward(m, &in[1], 3, scale);
	if (model_gpu_zero_grads(g, err, sizeof err) != 0)
		fail_msg("%s: %s", what, err);
	if (whole && model_gpu_step(g, &in[2], 8, scale, &ld, err,
	    sizeof err) != 0)
		fail_msg("%s: %s", what, err);
	if (!whole && (model_gpu_step(g, &in[0], 5, scale, &ld, err,
	    sizeof err) != 0 || model_gpu_step(g, &in[1], 3, scale, &ld, err,
	    sizeof err) != 0))
		fail_msg("%s: %s", what, err);
	if (model_gpu_get_grads(g, dg, err, sizeof err) != 0)
		fail_msg("%s: %s", what, err);
	print_message("    %s: loss gpu %.9g cpu %.9g\n", what, ld, lh);
	assert_true(fabs(ld - lh) <= 1e-5 * (1 + fabs(lh)));
	tc_grads_close(dg, m->grads, m->n_params, what);
	free(dg);
}

static void
t_model_gpu_gpt(void **state)
{
	struct job_spec		 job;
	struct spec_errors	 errs = { 0 };
	const char		*yaml = "name: g\nmodel: {type: gpt, layers: 2, "
				    "heads: 2, channels: 32, context: 16}\n";
	struct model		*m;
	struct model_gpu	*g;
	int32_t			 tok[2 * 8 * 16];
	char			 err[512];
	int			 oom;

	NEED_GPU();
	rng_seed(&tc_rng, 24, 0);
	for (int i = 0; i < 2 * 8 * 16; i++)
		tok[i] = (int32_t)rng_below(&tc_rng, 256);
	for (int i = 8 * 16; i < 2 * 8 * 16; i += 11)
		tok[i] = -1;		/* no target there */
	assert_int_equal(spec_parse_job("g.yaml", yaml, strlen(yaml), &job,
	    &errs), 0);
	m = model_create(&job, 16, 1, 1, 256, 5, 42);
	assert_non_null(m);
	if ((g = model_gpu_create(m, 8, &oom, err, sizeof err)) == NULL)
		fail_msg("model_gpu_create: %s", err);
	if (model_gpu_set_params(g, m->params, err, sizeof err) != 0)
		fail_msg("model_gpu_set_params: %s", err);
	tc_gpt_step(m, g, tok, tok + 8 * 16, 0, "gpt step 1, 5 + 3");
	tc_gpt_step(m, g, tok, tok + 8 * 16, 1, "gpt step 1, 8 at once");
	for (size_t i = 0; i < m->n_params; i++)
		m->params[i] -= 0.5f * m->grads[i];
	if (model_gpu_set_params(g, m->params, err, sizeof err) != 0)
		fail_msg("model_gpu_set_params: %s", err);
	tc_gpt_step(m, g, tok, tok + 8 * 16, 0, "gpt step 2, new parameters");
	model_gpu_free(g);
	model_free(m);
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(t_device_check),
		cmocka_unit_test(t_nccl_no_device),
		cmocka_unit_test(t_linear),
		cmocka_unit_test(t_relu),
		cmocka_unit_test(t_softmax),
		cmocka_unit_test(t_optim),
		cmocka_unit_test(t_topk),
		cmocka_unit_test(t_threshold),
		cmocka_unit_test(t_absmax),
		cmocka_unit_test(t_fp16),
		cmocka_unit_test(t_sparse),
		cmocka_unit_test(t_sparse_malformed),
		cmocka_unit_test(t_sparse_wide),
		cmocka_unit_test(t_nccl_world_1),
		cmocka_unit_test(t_nccl_lonely),
		cmocka_unit_test(t_model_gpu_refuses),
		cmocka_unit_test(t_model_gpu),
		cmocka_unit_test(t_model_gpu_gpt),
	};
	int			rc;

	tc_gpus = cuda_device_check(tc_why, sizeof tc_why);
	if (tc_gpus <= 0) {
		tc_gpus = 0;
		print_message("test-cuda: %s: the GPU tests are skipped\n",
		    tc_why);
	}
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	cuda_blas_release();
	if (rc == 0 && tc_gpus == 0)
		return 77;	/* automake: SKIP */
	return rc;
}
