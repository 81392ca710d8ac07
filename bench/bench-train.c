/*
 * bench-train.c: `hunter bench train`: the mlp train step at batch 128 on
 * one BLAS thread, against cblas_sgemm alone on the same shapes, so the
 * share of the step that is not GEMM shows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "lib/clock.h"
#include "lib/rng.h"
#include "lib/xmalloc.h"
#include "backend/worker/model.h"
#include "backend/worker/optimizer.h"
#include "bench/bench.h"

#define BENCH_SECONDS 3.0

/* The GEMMs of one linear-layer train step, as the kernels issue them. */
static void
bench_gemms(const struct model *m, float *a, float *b, float *c, int B)
{
	for (int i = 0; i < m->n_layers; i++) {
		const struct layer *l = &m->layers[i];
		int	 in = (int)l->in_size, out = (int)l->out_size;

		if (l->type != &layer_linear)
			continue;
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, out, in,
		    1.0f, a, in, b, in, 0.0f, c, out);
		cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, out, in, B,
		    1.0f, c, out, a, in, 1.0f, b, in);
		if (i > 0)
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B,
			    in, out, 1.0f, c, out, b, in, 0.0f, a, in);
	}
}

static double
bench_flops(const struct model *m, int B)
{
	double	 f = 0;

	for (int i = 0; i < m->n_layers; i++) {
		const struct layer *l = &m->layers[i];

		if (l->type == &layer_linear)
			f += 2.0 * B * l->in_size * l->out_size * (i > 0 ? 3 : 2);
	}
	return f;
}

static int
bench_train(void)
{
	const int	 B = 128;
	struct job_spec	 job;
	struct model	*m;
	struct optimizer *o;
	struct rng	 r;
	float		*x, *a, *b, *c;
	uint8_t		*y;
	double		 t0, step_s, gemm_s, flops;
	long		 steps = 0, reps = 0;

	openblas_set_num_threads(1);
	spec_job_defaults(&job);
	job.model.type = MODEL_MLP;
	job.model.n_hidden = 2;
	job.model.hidden[0] = job.model.hidden[1] = 256;
	m = model_create(&job, 1, 28, 28, 10, B, 42);
	o = optimizer_create(&job, m->n_params);
	x = xmalloc_aligned((size_t)B * 784 * sizeof(float));
	y = xmalloc((size_t)B);
	rng_seed(&r, 7, 0);
	for (int i = 0; i < B * 784; i++)
		x[i] = rng_float(&r) * 2 - 1;
	for (int i = 0; i < B; i++)
		y[i] = (uint8_t)rng_below(&r, 10);

	for (t0 = clock_mono(); clock_mono() - t0 < BENCH_SECONDS || steps < 20; steps++) {
		memset(m->grads, 0, m->n_params * sizeof(float));
		model_forward(m, &(struct model_input){ .x = x, .y = y }, B,
		    NULL);
		model_backward(m, &(struct model_input){ .x = x, .y = y }, B,
		    1.0f / B);
		optimizer_step(o, m->params, m->grads, 0.01f);
	}
	step_s = (clock_mono() - t0) / steps;

	a = xmalloc_aligned((size_t)B * 784 * sizeof(float));
	b = xmalloc_aligned((size_t)784 * 256 * sizeof(float));
	c = xmalloc_aligned((size_t)B * 256 * sizeof(float));
	memcpy(a, x, (size_t)B * 784 * sizeof(float));
	memcpy(b, m->params, (size_t)784 * 256 * sizeof(float));
	memset(c, 0, (size_t)B * 256 * sizeof(float));
	for (t0 = clock_mono(); clock_mono() - t0 < BENCH_SECONDS || reps < 20; reps++)
		bench_gemms(m, a, b, c, B);
	gemm_s = (clock_mono() - t0) / reps;
	flops = bench_flops(m, B);

	printf("bench train: mlp 784-256-256-10, batch %d, SGD, 1 BLAS thread, "
	    "%ld steps\n", B, steps);
	printf("  samples/s                 %10.0f\n", B / step_s);
	printf("  step time                 %10.3f ms\n", step_s * 1e3);
	printf("  GEMM time (same shapes)   %10.3f ms  (%.1f%% of the step)\n",
	    gemm_s * 1e3, 100 * gemm_s / step_s);
	printf("  non-GEMM overhead         %10.1f%%  (target <= 15%%)\n",
	    100 * (1 - gemm_s / step_s));
	printf("  GFLOP/s in the step       %10.2f\n", flops / step_s * 1e-9);
	printf("  GFLOP/s cblas_sgemm alone %10.2f  (ratio %.2f)\n",
	    flops / gemm_s * 1e-9, gemm_s / step_s);
	printf("  reference: a well-known Python framework, same model, OpenBLAS "
	    "on one thread, was quoted at 15-19k samples/s on these machines "
	    "(not measured in this run); 1.5x target = 28500\n");
	free(x); free(y); free(a); free(b); free(c);
	model_free(m);
	optimizer_free(o);
	return 0;
}

const struct bench_entry bench_train_entry = {
	.name = "train",
	.summary = "the mlp train step at batch 128 on one thread, against cblas_sgemm alone",
	.run = bench_train,
};
