/*
 * bench-gpt.c: `hunter bench gpt`: one training step (forward, backward,
 * AdamW) of hunter's gpt on random tokens, as ms a step, tokens/s and
 * MFU (model FLOPs a second over the sgemm peak of the threads), for two
 * shapes on 1 and 2 OpenBLAS threads, each beside PyTorch's GPT-2 of the
 * same shape and batch (bench/gpt_torch.py with Debian's python3-torch,
 * the same threads, OMP_WAIT_POLICY=PASSIVE on 2) measured in the same
 * run, and their ratio.
 *
 *   S: L=4, H=4, C=256, T=128, V=256, B=8
 *   M: the GPT-2 124M shape, L=12, H=12, C=768, V=50257, T=128, B=4
 *
 * HUNTER_BENCH_GPT=S (or M) runs one shape.  The peak is the one `hunter
 * bench sgemm` cached, measured now when there is none.
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
#include "bench/bench-internal.h"

struct gpt_shape {
	const char	*name;
	int		 L, H, C, T, V, B, steps;
};

static const struct gpt_shape gpt_shapes[] = {
	{ "S", 4, 4, 256, 128, 256, 8, 5 },
	{ "M", 12, 12, 768, 128, 50257, 4, 3 },
};

void
bench_gpt_spec(struct job_spec *job, int L, int H, int C, int T, int V)
{
	spec_job_defaults(job);
	job->model.type = MODEL_GPT;
	job->model.layers = L;
	job->model.heads = H;
	job->model.channels[0] = C;
	job->model.n_channels = 1;
	job->model.context = T;
	job->model.vocab = V;
	job->data.format = FORMAT_TOKENS;
	job->train.optimizer.type = OPTIM_ADAMW;
}

/* hunter's ms a step for shape s on `threads` threads. */
static double
gpt_hunter(const struct gpt_shape *s, int threads, double *flops)
{
	struct job_spec	 job;
	struct model	*m;
	struct optimizer *o;
	struct rng	 r;
	int32_t		*tok, *tgt;
	size_t		 n = (size_t)s->B * s->T;
	double		 t0 = 0;

	openblas_set_num_threads(threads);
	bench_gpt_spec(&job, s->L, s->H, s->C, s->T, s->V);
	*flops = spec_model_kind(MODEL_GPT)->flops_per_sample(&job) * s->B;
	m = model_create(&job, s->T, 1, 1, s->V, s->B, 1);
	o = optimizer_create(&job, m->n_params);
	for (int i = 0; i < m->n_tensors; i++)
		if (m->tensors[i].no_decay)
			optimizer_no_decay(o, m->tensors[i].offset,
			    m->tensors[i].numel);
	tok = xmalloc(n * sizeof *tok);
	tgt = xmalloc(n * sizeof *tgt);
	rng_seed(&r, 1, 0);
	for (size_t i = 0; i < n; i++) {
		tok[i] = (int32_t)rng_below(&r, (uint32_t)s->V);
		tgt[i] = (int32_t)rng_below(&r, (uint32_t)s->V);
	}
	/* One untimed step first: allocations, OpenBLAS's buffers. */
	for (int step = 0; step <= s->steps; step++) {
		struct model_input in = { .tok = tok, .tgt = tgt };

		if (step == 1)
			t0 = clock_mono();
		memset(m->grads, 0, m->n_params * sizeof(float));
		model_forward(m, &in, s->B, NULL);
		model_backward(m, &in, s->B, 1.0f / (float)n);
		optimizer_step(o, m->params, m->grads, 3e-4f);
	}
	t0 = (clock_mono() - t0) / s->steps;
	free(tok);
	free(tgt);
	optimizer_free(o);
	model_free(m);
	return t0 * 1e3;
}

/* PyTorch's ms a step, or -1 when it could not run. */
static double
gpt_torch(const struct gpt_shape *s, int threads)
{
	char	 cmd[2048], line[256];
	double	 ms = -1;
	FILE	*p;

	snprintf(cmd, sizeof cmd, "OMP_NUM_THREADS=%d OPENBLAS_NUM_THREADS=%d "
	    "%s /usr/bin/python3 %s/bench/gpt_torch.py %d %d %d %d %d %d %d "
	    "2>&1", threads, threads, threads > 1 ? "OMP_WAIT_POLICY=PASSIVE" :
	    "", HUNTER_SRCDIR, s->L, s->H, s->C, s->T, s->V, s->B, s->steps);
	if ((p = popen(cmd, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof line, p) != NULL)
		if (sscanf(line, "torch %lf", &ms) != 1)
			fprintf(stderr, "  torch: %s", line);
	pclose(p);
	return ms;
}

static int
bench_gpt(void)
{
	const char	*only = getenv("HUNTER_BENCH_GPT");
	double		 peaks[3] = { 0, bench_sgemm_peak(1), bench_sgemm_peak(2) };

	printf("bench gpt: forward + backward + AdamW a step, random tokens; "
	    "sgemm peak %.1f GFLOP/s on 1 thread, %.1f on 2, of kernel %s\n",
	    peaks[1], peaks[2], openblas_get_corename());
	printf("  %-5s %-7s %10s %10s %7s %10s %7s\n", "shape", "threads",
	    "hunter ms", "tokens/s", "MFU", "torch ms", "ratio");
	for (size_t i = 0; i < sizeof gpt_shapes / sizeof gpt_shapes[0]; i++) {
		const struct gpt_shape *s = &gpt_shapes[i];

		if (only != NULL && strcmp(only, s->name) != 0)
			continue;
		for (int th = 1; th <= 2; th++) {
			double	 flops, ms = gpt_hunter(s, th, &flops);
			double	 tms = gpt_torch(s, th);
			char	 ratio[16] = "-", torch[16] = "-";

			if (tms > 0) {
				snprintf(torch, sizeof torch, "%.1f", tms);
				snprintf(ratio, sizeof ratio, "%.2fx", tms / ms);
			}
			printf("  %-5s %-7d %10.1f %10.0f %6.1f%% %10s %7s\n",
			    s->name, th, ms, s->B * s->T / (ms / 1e3),
			    peaks[th] > 0 ? 100 * flops / (ms / 1e3) /
			    (peaks[th] * 1e9) : 0, torch, ratio);
			fflush(stdout);
		}
	}
	return 0;
}

const struct bench_entry bench_gpt_entry = {
	.name = "gpt",
	.summary = "the gpt train step, shapes S and M on 1 and 2 threads, against PyTorch's GPT-2",
	.run = bench_gpt,
};
