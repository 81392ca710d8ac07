/*
 * bench-cuda-gpt.c: the gpt part of `hunter bench cuda`: the S shape of
 * `hunter bench gpt` (L=4, H=4, C=256, T=128, V=256, B=8) on the device
 * model (backend/worker/model-gpu.c), random tokens: forward and backward
 * alone, then the step as a cuda rank takes it (the gradients down, AdamW
 * on the host, the parameters up), as ms, tokens/s and model TFLOP/s.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "lib/clock.h"
#include "lib/rng.h"
#include "backend/worker/model-gpu.h"
#include "backend/worker/model.h"
#include "backend/worker/optimizer.h"
#include "bench/bench-internal.h"

static int
cuda_gpt_fail(const char *what, const char *why)
{
	fprintf(stderr, "cuda-bench: %s: %s\n", what, why);
	return 1;
}

/* One step of the gpt on the device; with full, the update as a cuda
 * rank makes it too. */
static int
gpt_step(int full, struct model *m, struct model_gpu *g,
    struct optimizer *o, const struct model_input *in, int bs, float scale)
{
	char	 err[512];
	double	 loss = 0;

	if (model_gpu_zero_grads(g, err, sizeof err) != 0 ||
	    model_gpu_step(g, in, bs, scale, &loss, err, sizeof err) != 0)
		return cuda_gpt_fail("gpt step", err);
	if (!full)
		return 0;
	if (model_gpu_get_grads(g, m->grads, err, sizeof err) != 0)
		return cuda_gpt_fail("gpt gradients", err);
	optimizer_step(o, m->params, m->grads, 3e-4f);
	if (model_gpu_set_params(g, m->params, err, sizeof err) != 0)
		return cuda_gpt_fail("gpt parameters", err);
	return 0;
}

/* Seconds a step takes, over 2 s after 3 untimed; -1 on a failure. */
static double
gpt_time(int full, struct model *m, struct model_gpu *g, struct optimizer *o,
    const struct model_input *in, int bs, float scale)
{
	double	 t;
	int	 n = 0;

	for (int i = 0; i < 3; i++)
		if (gpt_step(full, m, g, o, in, bs, scale) != 0)
			return -1;
	t = clock_mono();
	do {
		if (gpt_step(full, m, g, o, in, bs, scale) != 0)
			return -1;
		n++;
	} while (clock_mono() - t < 2.0);
	return (clock_mono() - t) / n;
}

int
bench_cuda_gpt(void)
{
	const int	 L = 4, H = 4, C = 256, T = 128, V = 256, bs = 8;
	struct job_spec	 job;
	struct model	*m = NULL;
	struct model_gpu *g;
	struct optimizer *o;
	int32_t		*tok = malloc(2 * (size_t)bs * T * sizeof *tok);
	struct model_input in = { .tok = tok, .tgt = tok + bs * T };
	double		 flops, tf, ts;
	char		 err[512];
	struct rng	 r;
	int		 oom;

	bench_gpt_spec(&job, L, H, C, T, V);
	flops = spec_model_kind(MODEL_GPT)->flops_per_sample(&job) * bs;
	if (tok == NULL || (m = model_create(&job, T, 1, 1, V, 1, 1)) == NULL) {
		free(tok);
		return cuda_gpt_fail("gpt", "no model");
	}
	o = optimizer_create(&job, m->n_params);
	rng_seed(&r, 42, 1);
	for (int i = 0; i < 2 * bs * T; i++)
		tok[i] = (int32_t)rng_below(&r, V);
	if ((g = model_gpu_create(m, bs, &oom, err, sizeof err)) == NULL ||
	    model_gpu_set_params(g, m->params, err, sizeof err) != 0) {
		model_gpu_free(g);
		optimizer_free(o);
		model_free(m);
		free(tok);
		return cuda_gpt_fail("gpt device model", err);
	}
	tf = gpt_time(0, m, g, o, &in, bs, 1.0f / (bs * T));
	ts = tf < 0 ? -1 : gpt_time(1, m, g, o, &in, bs, 1.0f / (bs * T));
	if (ts < 0) {
		model_gpu_free(g);
		optimizer_free(o);
		model_free(m);
		free(tok);
		return 1;
	}
	printf("gpt: S shape (L=%d, H=%d, C=%d, T=%d, V=%d), batch %d, %zu "
	    "parameters, device model\n", L, H, C, T, V, bs, m->n_params);
	printf("  fwd+bwd        %8.2f ms  %10.0f tokens/s  %6.2f TFLOP/s\n",
	    tf * 1e3, bs * T / tf, flops / tf / 1e12);
	printf("  + host AdamW   %8.2f ms  %10.0f tokens/s  %6.2f TFLOP/s  "
	    "(a cuda rank's step)\n", ts * 1e3, bs * T / ts, flops / ts / 1e12);
	model_gpu_free(g);
	optimizer_free(o);
	model_free(m);
	free(tok);
	return 0;
}

