/*
 * bench-gpt.c: `hunter bench gpt`: one training step (forward, backward,
 * AdamW) of hunter's gpt on random tokens, as ms a step, tokens/s, MFU
 * and the share of the step spent outside sgemm, for three shapes, each
 * beside PyTorch's GPT-2 of the same shape and batch
 * (bench/gpt_torch.py with Debian's python3-torch, the same threads,
 * OMP_WAIT_POLICY=PASSIVE on 2), the two measured one after the other in
 * the same run, with their ratio and the peak RSS of each process:
 *
 *   S: L=4, H=4, C=256, T=128, V=256, B=8           1 and 2 threads
 *   M: the GPT-2 124M shape, V=50257, T=128, B=4    1 and 2 threads
 *   L: GPT-2 124M at its full context, T=1024, B=1  1 thread
 *
 * Each hunter measurement runs in a child process of its own (fork), so
 * its peak RSS is the shape's alone.  Shape S is measured three times,
 * hunter and torch in turn, and each side's best is shown: on a shared
 * machine another process's burst lands on one run, not on all three.
 * The MFU is the model's FLOPs a second over cblas_sgemm's rate
 * measured beside each run at the same threads (2048 x 2048, the best of
 * a second; the best of the runs), so both see the same machine; the
 * peak `hunter bench sgemm` cached is printed in the heading.  The share
 * outside GEMM is 1 - the sgemm seconds the kernels counted
 * (transformer_gemm_seconds, summed over the threads) over the step's
 * seconds times the threads.  The load average is printed with each
 * row: on a shared machine the figures move with it.
 *
 * HUNTER_BENCH_GPT=S (or M, or L) runs one shape.  A ratio is torch's ms
 * over hunter's: above 1, hunter is faster.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cblas.h>

#include "lib/blas.h"
#include "lib/clock.h"
#include "lib/peak.h"
#include "lib/rng.h"
#include "lib/xmalloc.h"
#include "kernels/cpu/transformer.h"
#include "backend/worker/model.h"
#include "backend/worker/optimizer.h"
#include "bench/bench.h"
#include "bench/bench-internal.h"

struct gpt_shape {
	const char	*name;
	int		 L, H, C, T, V, B, steps, max_threads;
	int		 reps;		/* hunter, torch, ... alternately */
};

static const struct gpt_shape gpt_shapes[] = {
	{ "S", 4, 4, 256, 128, 256, 8, 5, 2, 3 },
	{ "M", 12, 12, 768, 128, 50257, 4, 2, 2, 1 },
	{ "L", 12, 12, 768, 1024, 50257, 1, 2, 1, 1 },
};

/* What one side measured. */
struct gpt_result {
	double	 ms;		/* a step; < 0: it did not run */
	double	 gemm_s;	/* sgemm seconds a step, over the threads */
	double	 loss0, loss1;	/* the first step's loss, the last's */
	long	 rss_kb;	/* the process's peak */
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

/* The load average over the last minute, as uptime prints it. */
static double
gpt_load(void)
{
	double	 l = -1;
	FILE	*f = fopen("/proc/loadavg", "r");

	if (f != NULL) {
		if (fscanf(f, "%lf", &l) != 1)
			l = -1;
		fclose(f);
	}
	return l;
}

/*
 * cblas_sgemm's GFLOP/s at 2048 x 2048 on `threads` threads, the best of
 * a second.  Its matrices are mapped and unmapped here, not taken from
 * malloc, whose heap would keep them resident in this process and so in
 * every child forked after (their peak RSS).
 */
static double
gpt_sgemm_rate(int threads)
{
	int	 n = 2048;
	size_t	 nn = (size_t)n * n, bytes = 3 * nn * sizeof(float);
	float	*a = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	float	*b = a + nn, *c = b + nn;
	double	 t0, top = 0;
	struct rng r;

	if (a == MAP_FAILED)
		return 0;
	openblas_set_num_threads(threads);
	rng_seed(&r, 2, 0);
	for (size_t i = 0; i < nn; i++) {
		a[i] = rng_float(&r) - 0.5f;
		b[i] = rng_float(&r) - 0.5f;
	}
	t0 = clock_mono();
	for (int reps = 0; clock_mono() - t0 < 1.0 || reps < 3; reps++) {
		double t = clock_mono(), g;

		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n,
		    1.0f, a, n, b, n, 0.0f, c, n);
		g = 2.0 * n * n * (double)n / (clock_mono() - t) * 1e-9;
		top = g > top ? g : top;
	}
	munmap(a, bytes);
	return top;
}

/* The steps of shape s on `threads` threads, in this process: the
 * results but the RSS. */
static void
gpt_hunter_steps(const struct gpt_shape *s, int threads,
    struct gpt_result *res)
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
		double	 loss;

		if (step == 1) {
			transformer_gemm_count(1);
			t0 = clock_mono();
		}
		memset(m->grads, 0, m->n_params * sizeof(float));
		loss = model_forward(m, &in, s->B, NULL) / (double)n;
		model_backward(m, &in, s->B, 1.0f / (float)n);
		optimizer_step(o, m->params, m->grads, 3e-4f);
		if (step == 0)
			res->loss0 = loss;
		res->loss1 = loss;
	}
	res->ms = (clock_mono() - t0) / s->steps * 1e3;
	res->gemm_s = transformer_gemm_seconds() / s->steps;
	transformer_gemm_count(0);
	free(tok);
	free(tgt);
	optimizer_free(o);
	model_free(m);
}

/* hunter's figures for shape s, from a child process of its own. */
static void
gpt_hunter(const struct gpt_shape *s, int threads, struct gpt_result *res)
{
	struct rusage	 ru;
	int		 fd[2], st;
	pid_t		 pid;

	res->ms = -1;
	fflush(stdout);
	if (pipe(fd) != 0 || (pid = fork()) < 0)
		return;
	if (pid == 0) {
		close(fd[0]);
		gpt_hunter_steps(s, threads, res);
		_exit(write(fd[1], res, sizeof *res) == sizeof *res ? 0 : 1);
	}
	close(fd[1]);
	if (read(fd[0], res, sizeof *res) != sizeof *res)
		res->ms = -1;
	close(fd[0]);
	if (wait4(pid, &st, 0, &ru) == pid)
		res->rss_kb = ru.ru_maxrss;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		res->ms = -1;
}

/* PyTorch's figures for shape s (bench/gpt_torch.py). */
static void
gpt_torch(const struct gpt_shape *s, int threads, struct gpt_result *res)
{
	char	 cmd[2048], line[256];
	FILE	*p;

	res->ms = -1;
	snprintf(cmd, sizeof cmd, "OMP_NUM_THREADS=%d OPENBLAS_NUM_THREADS=%d "
	    "%s /usr/bin/python3 %s/bench/gpt_torch.py %d %d %d %d %d %d %d "
	    "2>&1", threads, threads, threads > 1 ? "OMP_WAIT_POLICY=PASSIVE" :
	    "", HUNTER_SRCDIR, s->L, s->H, s->C, s->T, s->V, s->B, s->steps);
	fflush(stdout);
	if ((p = popen(cmd, "r")) == NULL)
		return;
	while (fgets(line, sizeof line, p) != NULL)
		if (sscanf(line, "torch %lf %*f %*d %lf %lf %ld", &res->ms,
		    &res->loss0, &res->loss1, &res->rss_kb) != 4)
			fprintf(stderr, "  torch: %s", line);
	pclose(p);
}

static void
gpt_row(const struct gpt_shape *s, int th)
{
	struct gpt_result h = { 0 }, t = { 0 };
	double	 flops, load = gpt_load(), rate = 0;
	struct job_spec	 job;
	char	 ratio[16] = "-", torch[16] = "-", trss[16] = "-";

	bench_gpt_spec(&job, s->L, s->H, s->C, s->T, s->V);
	flops = spec_model_kind(MODEL_GPT)->flops_per_sample(&job) * s->B;
	h.ms = t.ms = -1;
	for (int r = 0; r < s->reps; r++) {
		struct gpt_result hr = { 0 }, tr = { 0 };
		double	 g = gpt_sgemm_rate(th);

		rate = g > rate ? g : rate;
		gpt_hunter(s, th, &hr);
		gpt_torch(s, th, &tr);
		if (hr.ms > 0 && (h.ms <= 0 || hr.ms < h.ms))
			h = hr;
		if (tr.ms > 0 && (t.ms <= 0 || tr.ms < t.ms))
			t = tr;
	}
	if (h.ms <= 0) {
		printf("  %-5s %-7d hunter's step did not run\n", s->name, th);
		return;
	}
	if (t.ms > 0) {
		snprintf(torch, sizeof torch, "%.1f", t.ms);
		snprintf(ratio, sizeof ratio, "%.2fx", t.ms / h.ms);
		snprintf(trss, sizeof trss, "%.0f", t.rss_kb / 1024.0);
	}
	printf("  %-5s %-7d %10.1f %9.0f %6.1f%% %6.1f%% %10s %7s  %6.0f %6s"
	    "  %.3f>%.3f %6.1f %5.1f\n", s->name, th, h.ms, s->B * s->T /
	    (h.ms / 1e3), rate > 0 ? 100 * flops / (h.ms / 1e3) / (rate *
	    1e9) : 0, 100 * (1 - h.gemm_s / th / (h.ms / 1e3)), torch, ratio,
	    h.rss_kb / 1024.0, trss, h.loss0, h.loss1, rate, load);
	fflush(stdout);
}

static int
bench_gpt(void)
{
	const char	*only = getenv("HUNTER_BENCH_GPT");
	struct blas_info bi;
	struct peak_key	 k;
	double		 cached;

	/* The cached one-thread peak of this kernel, for the heading. */
	blas_info(&bi);
	k = (struct peak_key){ bi.cpu, bi.library, bi.kernel, 1 };
	if (peak_read(NULL, &k, &cached) != 0)
		cached = 0;
	printf("bench gpt: forward + backward + AdamW a step, random tokens, "
	    "kernel %s; MFU against cblas_sgemm 2048^2 at the same threads in "
	    "the same run (sgemm, GFLOP/s; the peak cached by bench sgemm is "
	    "%.1f a thread); !GEMM: the step's share outside sgemm\n",
	    bi.kernel, cached);
	printf("  %-5s %-7s %10s %9s %7s %7s %10s %7s  %6s %6s  %-11s %6s "
	    "%5s\n", "shape", "threads", "hunter ms", "tokens/s", "MFU",
	    "!GEMM", "torch ms", "ratio", "RSS MB", "torch", "loss", "sgemm",
	    "load");
	for (size_t i = 0; i < sizeof gpt_shapes / sizeof gpt_shapes[0]; i++) {
		const struct gpt_shape *s = &gpt_shapes[i];

		if (only != NULL && strcmp(only, s->name) != 0)
			continue;
		for (int th = 1; th <= s->max_threads; th++)
			gpt_row(s, th);
	}
	openblas_set_num_threads(1);
	return 0;
}

const struct bench_entry bench_gpt_entry = {
	.name = "gpt",
	.summary = "the gpt train step (shapes S, M on 1 and 2 threads; L, "
	    "GPT-2 124M at T=1024) against PyTorch's GPT-2",
	.run = bench_gpt,
};
