/*
 * bench-cuda.c: `hunter bench cuda`, in builds with CUDA: the GPU numbers
 * tests/gpu/gpu-check.sh prints, measured in one
 * run on device 0.  GB is 10^9 bytes.
 *
 *  mlp:   one training step of fmnist-mlp (784-256-256-10, batch 128,
 *         SGD momentum 0.9, weight decay 5e-4) with the kernels/cuda
 *         kernels on random data, as samples/s, beside the same step with
 *         kernels/cpu.  The worker has no GPU train loop yet, so this is
 *         the kernels' speed, not a training run's.
 *  gpt:   the S shape of `hunter bench gpt` on the device model
 *         (bench-cuda-gpt.c).
 *  topk:  top-k, sampled threshold and sparse encoding of n floats at
 *         density 1%, as input GB/s (4n bytes / time), beside a
 *         device-to-device cudaMemcpy of the same 4n bytes (bytes copied
 *         / time).
 *  nccl:  allreduce over the nccl backend as a group of one: algorithm
 *         bandwidth 4n / time; the bus bandwidth, algbw * 2(w-1)/w, is 0
 *         for w = 1 (NCCL copies locally), so it is printed as such.  Then
 *         the compressed path of one step: threshold select, encode,
 *         allgatherv of the bytes, decode into a dense vector.
 *
 * Exit 0, or 1 with the reason on stderr.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "lib/clock.h"
#include "lib/cuda-probe.h"
#include "lib/rng.h"
#include "kernels/cpu/compress.h"
#include "kernels/cpu/kernels.h"
#include "kernels/cuda/cuda-kernels.h"
#include "backend/comm/comm.h"
#include "bench/bench.h"
#include "bench/bench-internal.h"

#define B	128
#define NL	3
static const int	mlp_dims[NL + 1] = { 784, 256, 256, 10 };

#define DIE(...) do { fprintf(stderr, "cuda-bench: " __VA_ARGS__);	\
	fputc('\n', stderr); exit(1); } while (0)
#define CK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess)	\
	DIE("%s: %s", #call, cudaGetErrorString(e_)); } while (0)
#define OK(call) do { if ((call) != 0)					\
	DIE("%s: %s", #call, cuda_last_error()); } while (0)

static struct rng	bench_rng;

static void *
dmalloc(size_t bytes)
{
	void	*p;

	CK(cudaMalloc(&p, bytes > 0 ? bytes : 1));
	return p;
}

static float *
hrand(size_t n, float scale)
{
	float	*x = malloc(n * sizeof *x);

	if (x == NULL)
		DIE("out of memory");
	for (size_t i = 0; i < n; i++)
		x[i] = scale * (2.0f * rng_float(&bench_rng) - 1.0f);
	return x;
}

static float *
drand(size_t n, float scale)
{
	float	*h = hrand(n, scale), *d = dmalloc(n * sizeof *d);

	CK(cudaMemcpy(d, h, n * sizeof *d, cudaMemcpyHostToDevice));
	free(h);
	return d;
}

/* The layers' buffers, on one side (GPU or CPU). */
struct mlp {
	float	*w[NL], *b[NL], *dw[NL], *db[NL], *mw[NL], *mb[NL];
	float	*act[NL + 1], *dact[NL + 1], *probs;
	uint8_t	*labels;
	double	*loss;
};

static void
mlp_alloc(struct mlp *m, int gpu)
{
	memset(m, 0, sizeof *m);
	for (int l = 0; l < NL; l++) {
		size_t	nw = (size_t)mlp_dims[l] * mlp_dims[l + 1];
		size_t	nb = (size_t)mlp_dims[l + 1];
		float	s = 1.0f / sqrtf((float)mlp_dims[l]);

		m->w[l] = gpu ? drand(nw, s) : hrand(nw, s);
		m->b[l] = gpu ? drand(nb, 0) : hrand(nb, 0);
		m->dw[l] = gpu ? drand(nw, 0) : hrand(nw, 0);
		m->db[l] = gpu ? drand(nb, 0) : hrand(nb, 0);
		m->mw[l] = gpu ? drand(nw, 0) : hrand(nw, 0);
		m->mb[l] = gpu ? drand(nb, 0) : hrand(nb, 0);
	}
	for (int l = 0; l <= NL; l++) {
		size_t	n = (size_t)B * mlp_dims[l];

		m->act[l] = gpu ? drand(n, 1) : hrand(n, 1);
		m->dact[l] = gpu ? drand(n, 0) : hrand(n, 0);
	}
	m->probs = gpu ? drand((size_t)B * 10, 0) : hrand((size_t)B * 10, 0);
	m->labels = calloc(B, 1);
	for (int i = 0; i < B; i++)
		m->labels[i] = (uint8_t)rng_below(&bench_rng, 10);
	if (gpu) {
		uint8_t	*d = dmalloc(B);

		CK(cudaMemcpy(d, m->labels, B, cudaMemcpyHostToDevice));
		free(m->labels);
		m->labels = d;
		m->loss = dmalloc(sizeof(double));
	}
}

/* One step: forward, loss, backward, SGD on every parameter. */
static void
mlp_step_gpu(struct mlp *m)
{
	for (int l = 0; l < NL; l++) {
		OK(cuda_linear_forward(m->act[l + 1], m->act[l], m->w[l],
		    m->b[l], B, mlp_dims[l], mlp_dims[l + 1], NULL));
		if (l < NL - 1)
			OK(cuda_relu_forward(m->act[l + 1], m->act[l + 1],
			    (size_t)B * mlp_dims[l + 1], NULL));
	}
	OK(cuda_softmax_xent_forward(m->probs, m->loss, m->act[NL], m->labels,
	    B, 10, NULL));
	OK(cuda_softmax_xent_backward(m->dact[NL], m->probs, m->labels, B, 10,
	    1.0f / B, NULL));
	for (int l = NL - 1; l >= 0; l--) {
		size_t	nw = (size_t)mlp_dims[l] * mlp_dims[l + 1];

		CK(cudaMemsetAsync(m->dw[l], 0, nw * 4, NULL));
		CK(cudaMemsetAsync(m->db[l], 0, mlp_dims[l + 1] * 4, NULL));
		OK(cuda_linear_backward(l > 0 ? m->dact[l] : NULL, m->dw[l],
		    m->db[l], m->dact[l + 1], m->act[l], m->w[l], B,
		    mlp_dims[l], mlp_dims[l + 1], NULL));
		if (l > 0)
			OK(cuda_relu_backward(m->dact[l], m->dact[l],
			    m->act[l], (size_t)B * mlp_dims[l], NULL));
		OK(cuda_sgd_step(m->w[l], m->dw[l], m->mw[l], nw, 0.05f, 0.9f,
		    5e-4f, NULL));
		OK(cuda_sgd_step(m->b[l], m->db[l], m->mb[l], mlp_dims[l + 1],
		    0.05f, 0.9f, 5e-4f, NULL));
	}
}

static void
mlp_step_cpu(struct mlp *m)
{
	for (int l = 0; l < NL; l++) {
		linear_forward(m->act[l + 1], m->act[l], m->w[l], m->b[l], B,
		    mlp_dims[l], mlp_dims[l + 1]);
		if (l < NL - 1)
			relu_forward(m->act[l + 1], m->act[l + 1],
			    (size_t)B * mlp_dims[l + 1]);
	}
	softmax_xent_forward(m->probs, m->act[NL], m->labels, B, 10);
	softmax_xent_backward(m->dact[NL], m->probs, m->labels, B, 10,
	    1.0f / B);
	for (int l = NL - 1; l >= 0; l--) {
		size_t	nw = (size_t)mlp_dims[l] * mlp_dims[l + 1];

		memset(m->dw[l], 0, nw * 4);
		memset(m->db[l], 0, mlp_dims[l + 1] * 4);
		linear_backward(l > 0 ? m->dact[l] : NULL, m->dw[l], m->db[l],
		    m->dact[l + 1], m->act[l], m->w[l], B, mlp_dims[l],
		    mlp_dims[l + 1]);
		if (l > 0)
			relu_backward(m->dact[l], m->dact[l], m->act[l],
			    (size_t)B * mlp_dims[l]);
		sgd_step(m->w[l], m->dw[l], m->mw[l], nw, 0.05f, 0.9f, 5e-4f);
		sgd_step(m->b[l], m->db[l], m->mb[l], mlp_dims[l + 1], 0.05f,
		    0.9f, 5e-4f);
	}
}

static void
bench_mlp(void)
{
	struct mlp	g, c;
	double		t, tg, tc;
	int		n;

	mlp_alloc(&g, 1);
	mlp_alloc(&c, 0);
	for (int i = 0; i < 20; i++)
		mlp_step_gpu(&g);
	CK(cudaDeviceSynchronize());
	n = 0;
	t = clock_mono();
	do {
		for (int i = 0; i < 100; i++)
			mlp_step_gpu(&g);
		CK(cudaDeviceSynchronize());
		n += 100;
	} while (clock_mono() - t < 2.0);
	tg = (clock_mono() - t) / n;
	mlp_step_cpu(&c);
	n = 0;
	t = clock_mono();
	do {
		mlp_step_cpu(&c);
		n++;
	} while (clock_mono() - t < 2.0);
	tc = (clock_mono() - t) / n;
	printf("mlp: fmnist-mlp 784-256-256-10, batch %d, fwd+bwd+sgd kernels "
	    "(no GPU train loop yet)\n", B);
	printf("  gpu %10.0f samples/s  (%.1f us/step)\n", B / tg, tg * 1e6);
	printf("  cpu %10.0f samples/s  (%.1f us/step, OpenBLAS)\n", B / tc,
	    tc * 1e6);
	printf("  gpu/cpu %.1fx\n", tc / tg);
}

/* Seconds per run of the statement, repeated for a second after one
 * warm-up run. */
#define TIME_IT(secs, ...) do {						\
	int	 n_ = 0;						\
	double	 t_;							\
	__VA_ARGS__;							\
	CK(cudaDeviceSynchronize());					\
	t_ = clock_mono();						\
	do {								\
		__VA_ARGS__;						\
		n_++;							\
	} while (clock_mono() - t_ < 1.0);				\
	CK(cudaDeviceSynchronize());					\
	(secs) = (clock_mono() - t_) / n_;				\
} while (0)

static void
bench_topk(size_t n)
{
	size_t		 k = n / 100, cnt = 0, bytes = 0;
	float		*x = drand(n, 1), *y = dmalloc(n * 4);
	uint32_t	*idx = dmalloc(compress_idx_cap(n, k) * 4);
	uint8_t		*out = dmalloc(compress_sparse_bound(n, k + k / 4));
	void		*ws = dmalloc(cuda_select_workspace(n));
	void		*ews = dmalloc(cuda_sparse_encode_workspace(k + k / 4));
	struct rng	 r;
	double		 tm, tk, tt, te;

	rng_seed(&r, 1, 2);
	TIME_IT(tm, CK(cudaMemcpyAsync(y, x, n * 4, cudaMemcpyDeviceToDevice,
	    NULL)));
	TIME_IT(tk, OK(cuda_compress_topk(idx, x, n, k, ws, NULL)));
	TIME_IT(tt, OK(cuda_compress_threshold(idx, &cnt, x, n, k, &r, ws,
	    NULL)));
	TIME_IT(te, OK(cuda_sparse_encode(out, &bytes, idx, x, cnt, 1.0f, ews,
	    NULL)));
	printf("topk: %zu floats (%.0f MB), k = 1%%\n", n, n * 4 / 1e6);
	printf("  cudaMemcpy d2d  %8.1f GB/s (bytes copied)\n", n * 4 / tm / 1e9);
	printf("  top-k exact     %8.1f GB/s  %.2fx memcpy  (%.0f us)\n",
	    n * 4 / tk / 1e9, tm / tk, tk * 1e6);
	printf("  threshold       %8.1f GB/s  %.2fx memcpy  (%.0f us, %zu "
	    "kept)\n", n * 4 / tt / 1e9, tm / tt, tt * 1e6, cnt);
	printf("  sparse encode   %8.1f GB/s of the dense input  (%.0f us, "
	    "%zu bytes)\n", n * 4 / te / 1e9, te * 1e6, bytes);
	cudaFree(x); cudaFree(y); cudaFree(idx); cudaFree(out); cudaFree(ws);
	cudaFree(ews);
}

static void
bench_nccl(void)
{
	static const size_t	sizes[] = { 1 << 20, 16 << 20, 64 << 20 };
	struct comm_config	cf = {
		.backend = "nccl", .rank = 0, .world = 1, .timeout_ms = 30000,
	};
	struct comm		*c;
	char			 err[512];
	double			 t;

	if ((c = comm_init(&cf, NULL, err, sizeof err)) == NULL)
		DIE("comm_init nccl: %s", err);
	printf("nccl: allreduce, world 1 (busbw = algbw * 2(w-1)/w = 0 at w = "
	    "1: NCCL copies locally)\n");
	for (size_t i = 0; i < 3; i++) {
		size_t	 n = sizes[i];
		float	*buf = drand(n, 1);

		TIME_IT(t, if (comm_allreduce_f32(c, buf, n, err, sizeof err)
		    != 0) DIE("allreduce: %s", err));
		printf("  %8zu floats  algbw %8.1f GB/s  busbw %.1f GB/s  "
		    "(%.0f us)\n", n, n * 4 / t / 1e9, 0.0, t * 1e6);
		cudaFree(buf);
	}
	/* The compressed path of one step for a 16M-float gradient. */
	{
		size_t		 n = 16 << 20, k = n / 100, cnt = 0, bytes = 0;
		size_t		 bound = compress_sparse_bound(n, k + k / 4);
		size_t		 lens[1];
		float		*g = drand(n, 1), *dense = drand(n, 0);
		uint32_t	*idx = dmalloc(compress_idx_cap(n, k) * 4);
		uint8_t		*out = dmalloc(bound), *all = dmalloc(bound);
		void		*ws = dmalloc(cuda_select_workspace(n));
		void		*ews = dmalloc(cuda_sparse_encode_workspace(k +
				    k / 4));
		void		*dws = dmalloc(cuda_sparse_decode_workspace(n,
				    bound));
		struct rng	 r;
		long		 used;

		rng_seed(&r, 3, 4);
		TIME_IT(t, {
			OK(cuda_compress_threshold(idx, &cnt, g, n, k, &r, ws,
			    NULL));
			OK(cuda_sparse_encode(out, &bytes, idx, g, cnt, 1.0f,
			    ews, NULL));
			lens[0] = bytes;
			if (comm_allgatherv(c, out, all, lens, err, sizeof err)
			    != 0)
				DIE("allgatherv: %s", err);
			OK(cuda_sparse_decode_add(dense, n, all, bytes, 1.0f,
			    &used, dws, NULL));
			if (used != (long)bytes)
				DIE("decode used %ld of %zu bytes", used, bytes);
		});
		printf("  compressed step, %zu floats at 1%%: threshold + encode "
		    "+ allgatherv + decode\n", n);
		printf("    %.0f us, %.1f GB/s of dense gradient, %zu bytes on "
		    "the wire (%.1fx smaller)\n", t * 1e6, n * 4 / t / 1e9,
		    bytes, (double)n * 4 / bytes);
		cudaFree(g); cudaFree(dense); cudaFree(idx); cudaFree(out);
		cudaFree(all); cudaFree(ws); cudaFree(ews); cudaFree(dws);
	}
	comm_destroy(c);
}

static int
bench_cuda(void)
{
	struct cudaDeviceProp	p;
	char			err[256];

	if (cuda_device_check(err, sizeof err) < 0)
		DIE("%s", err);
	CK(cudaSetDevice(0));
	CK(cudaGetDeviceProperties(&p, 0));
	printf("device: %s, %d SMs, %.0f GiB; CUDA runtime %s, NCCL %s, "
	    "driver %s\n", p.name, p.multiProcessorCount,
	    p.totalGlobalMem / 1073741824.0, cuda_runtime_version(),
	    cuda_nccl_version(), cuda_driver_version());
	rng_seed(&bench_rng, 42, 0);
	bench_mlp();
	if (bench_cuda_gpt() != 0)
		return 1;
	bench_topk(25u << 20);
	bench_nccl();
	cuda_blas_release();
	return 0;
}

const struct bench_entry bench_cuda_entry = {
	.name = "cuda",
	.summary = "the mlp and gpt S steps, top-k and NCCL on GPU 0, beside the CPU and cudaMemcpy",
	.run = bench_cuda,
};
