/*
 * test-gpu-mock.c: the train loop's cuda path on a MOCK GPU
 * (mock-cuda.c: host memory and the CPU kernels behind the CUDA calls),
 * on a machine without a GPU.  What it can show is the bookkeeping of
 * backend/worker/model-gpu.c and train.c, not CUDA:
 *
 *  - a device: cuda job trains to the same bits as the same job on the
 *    CPU (same parameters CRC, same accuracy), accumulation included:
 *    micro-batches uploaded, gradients summed on the "device" and
 *    brought back, the update's parameters sent up again;
 *  - its kernels really ran on the device model (the mock counts them);
 *  - with micro: auto and a device smaller than the budget, the search
 *    fails the sizes the device cannot hold (an out-of-memory, peak
 *    bytes within the budget), its largest fit is the largest the device
 *    holds, and the job then trains at the size it chose;
 *  - the same for a small gpt on text (tokens and targets uploaded, the
 *    vocabulary loss written over the logits on the device, the
 *    transformer's layers through their device entry points), and its
 *    micro-batch search failing the sizes the device cannot hold;
 *  - every byte of "device" memory is given back;
 *  - every model kind of spec.h has a builder, and the device model runs
 *    exactly the kinds spec.h says cuda runs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/mock-cuda.h"
#include "lib/rng.h"
#include "backend/spec/spec.h"
#include "backend/worker/autotune.h"
#include "backend/worker/model-gpu.h"
#include "backend/worker/model.h"
#include "backend/worker/train.h"

static char	tg_dir[64];

/* A big-endian u32. */
static void
be32(FILE *f, uint32_t v)
{
	uint8_t	b[4] = { v >> 24, v >> 16, v >> 8, v };

	assert_int_equal(fwrite(b, 1, 4, f), 4);
}

/* n 28x28 images whose bright column is their label, plus noise. */
static void
write_set(const char *images, const char *labels, int n, uint64_t seed)
{
	char	 path[256];
	FILE	*fi, *fl;
	struct rng r;

	rng_seed(&r, seed, 0);
	snprintf(path, sizeof path, "%s/%s", tg_dir, images);
	assert_non_null(fi = fopen(path, "wb"));
	snprintf(path, sizeof path, "%s/%s", tg_dir, labels);
	assert_non_null(fl = fopen(path, "wb"));
	be32(fi, 0x803);
	be32(fi, (uint32_t)n);
	be32(fi, 28);
	be32(fi, 28);
	be32(fl, 0x801);
	be32(fl, (uint32_t)n);
	for (int i = 0; i < n; i++) {
		uint8_t	 y = (uint8_t)rng_below(&r, 10), px[784];

		for (int p = 0; p < 784; p++)
			px[p] = (uint8_t)(p % 28 == 2 + 2 * y ? 200 :
			    rng_below(&r, 60));
		assert_int_equal(fwrite(px, 1, sizeof px, fi), sizeof px);
		assert_int_equal(fwrite(&y, 1, 1, fl), 1);
	}
	fclose(fi);
	fclose(fl);
}

/* n bytes of words drawn from a few, for the gpt: text.txt. */
static void
write_text(size_t n, uint64_t seed)
{
	static const char *const words[] = { "the", "cat", "sat", "on", "a",
	    "mat", "and", "dog", "ran", "far", "away", "from", "home" };
	char	 path[256];
	size_t	 len = 0;
	FILE	*f;
	struct rng r;

	rng_seed(&r, seed, 0);
	snprintf(path, sizeof path, "%s/text.txt", tg_dir);
	assert_non_null(f = fopen(path, "wb"));
	while (len < n) {
		const char *w = words[rng_below(&r, sizeof words /
		    sizeof *words)];

		len += (size_t)fprintf(f, "%s%s", w, rng_below(&r, 8) == 0 ?
		    ".\n" : " ");
	}
	fclose(f);
}

static int
setup(void **state)
{
	(void)state;
	snprintf(tg_dir, sizeof tg_dir, "/tmp/test-gpu-mock.XXXXXX");
	assert_non_null(mkdtemp(tg_dir));
	write_set("train-images-idx3-ubyte", "train-labels-idx1-ubyte", 512, 1);
	write_set("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte", 128, 2);
	write_text(6000, 3);
	return 0;
}

static int
teardown(void **state)
{
	static const char *const names[] = { "train-images-idx3-ubyte",
	    "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
	    "t10k-labels-idx1-ubyte", "text.txt" };
	char	 path[256];

	(void)state;
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		snprintf(path, sizeof path, "%s/%s", tg_dir, names[i]);
		unlink(path);
	}
	rmdir(tg_dir);
	return 0;
}

struct tg_run {
	struct train_summary	 sum;
	struct autotune_trial	 trials[AUTOTUNE_MAX_TRIALS];
	int			 ntrials, micro;
};

static void
tg_on_autotune(void *ctx, const struct autotune_trial *t, int n, int micro,
    int accum, double seconds)
{
	struct tg_run	*run = ctx;

	(void)accum;
	(void)seconds;
	memcpy(run->trials, t, (size_t)n * sizeof *t);
	run->ntrials = n;
	run->micro = micro;
}

/* Train the job of yaml on one rank; 0 or fail. */
static void
tg_train_yaml(const char *yaml, const char *device, struct tg_run *run)
{
	struct train_hooks	 hooks = { .ctx = run,
	    .on_autotune = tg_on_autotune };
	struct train_config	 cfg = { .rank = 0, .world = 1,
	    .checkpoint_dir = "" };
	struct spec_errors	 errs = { 0 };
	struct job_spec		 job;
	char			 err[512];

	if (spec_parse_job("g.yaml", yaml, strlen(yaml), &job, &errs) != 0)
		fail_msg("job: %s", errs.v[0].msg);
	cfg.job = &job;
	memset(run, 0, sizeof *run);
	hooks.ctx = run;
	if (train_run(&cfg, &hooks, &run->sum, err, sizeof err) != 0)
		fail_msg("%s run: %s", device, err);
	assert_string_equal(run->sum.f.state, "finished");
}

/* Train the mlp job (device and batch as given) on one rank. */
static void
tg_train(const char *device, const char *batch, const char *memory,
    struct tg_run *run)
{
	char	 yaml[1024];

	snprintf(yaml, sizeof yaml,
	    "name: g\n"
	    "resources: {ranks: 1, device: %s, memory_per_rank: %s}\n"
	    "model: {type: mlp, hidden: [64, 32]}\n"
	    "data: {path: %s, prefetch: 2}\n"
	    "train:\n"
	    "  epochs: 3\n"
	    "  seed: 5\n"
	    "  optimizer: {type: sgd, momentum: 0.9, weight_decay: 5e-4}\n"
	    "  lr: {base: 0.05, schedule: cosine, warmup_steps: 5}\n"
	    "  batch: %s\n"
	    "compression: {method: none}\n", device, memory, tg_dir, batch);
	tg_train_yaml(yaml, device, run);
}

/* A small gpt (GPT-2's defaults: AdamW, clipping) on text.txt. */
#define TG_GPT_MODEL	"{type: gpt, layers: 2, heads: 2, channels: 32, " \
	"context: 16}"

static void
tg_train_gpt(const char *device, const char *batch, struct tg_run *run)
{
	char	 yaml[1024];

	snprintf(yaml, sizeof yaml,
	    "name: g\n"
	    "resources: {ranks: 1, device: %s, memory_per_rank: 2GiB}\n"
	    "model: " TG_GPT_MODEL "\n"
	    "data: {format: text, path: %s/text.txt, prefetch: 2}\n"
	    "train:\n"
	    "  epochs: 1\n"
	    "  seed: 11\n"
	    "  lr: {base: 0.003, schedule: cosine, warmup_steps: 10}\n"
	    "  batch: %s\n"
	    "  eval_every: 20\n"
	    "compression: {method: none}\n", device, tg_dir, batch);
	tg_train_yaml(yaml, device, run);
}

static void
t_same_bits(void **state)
{
	struct tg_run	 cpu, gpu;
	long		 calls;

	(void)state;
	tg_train("cpu", "{global: 64, micro: 16}", "2GiB", &cpu);
	calls = mock_cuda_calls;
	tg_train("cuda", "{global: 64, micro: 16}", "2GiB", &gpu);
	print_message("    cpu: crc %s acc %.4f; mock GPU: crc %s acc %.4f, "
	    "%ld kernels\n", cpu.sum.params_crc32, cpu.sum.f.test_acc,
	    gpu.sum.params_crc32, gpu.sum.f.test_acc, mock_cuda_calls - calls);
	/* 24 steps of 4 micro-batches, 7 kernels each way and the loss. */
	assert_true(mock_cuda_calls - calls >= 24L * 4 * 7);
	assert_string_equal(gpu.sum.params_crc32, cpu.sum.params_crc32);
	assert_true(gpu.sum.f.test_acc == cpu.sum.f.test_acc);
	assert_true(cpu.sum.f.test_acc > 0.5);	/* it learned something */
	assert_int_equal(gpu.sum.f.accum, 4);
	assert_int_equal(mock_cuda_used, 0);
}

static void
t_device_oom(void **state)
{
	struct tg_run	 run;
	int		 oom = 0, fit = 0;

	(void)state;
	/* Room for the device model at 64 samples, not at 128: parameters
	 * and gradients (2 x 52650 floats, 421200 bytes) and per sample
	 * 4025 bytes (the input, a label, probabilities, and out and dout of
	 * the three linear layers): 678808 bytes at 64, 936408 at 128. */
	mock_cuda_capacity = 800000;
	tg_train("cuda", "{global: 256, micro: auto}", "2GiB", &run);
	mock_cuda_capacity = 0;
	for (int i = 0; i < run.ntrials; i++) {
		const struct autotune_trial *t = &run.trials[i];

		print_message("    size %4d  %-4s  %8zu tracked bytes\n", t->size,
		    t->fit ? "fit" : "over", t->peak_bytes);
		if (t->fit)
			fit = fit > t->size ? fit : t->size;
		else if (t->peak_bytes <= 2ULL << 30)
			oom++;			/* the device said no */
	}
	assert_true(oom >= 1);
	assert_int_equal(fit, 64);
	/* The largest fit, or a smaller size the trials timed 3% faster. */
	assert_true(run.micro >= 1 && run.micro <= 64 && 256 % run.micro == 0);
	assert_int_equal(run.sum.f.micro_batch, run.micro);
	assert_int_equal(run.sum.f.accum, 256 / run.micro);
	assert_int_equal(mock_cuda_used, 0);
}

/* The gpt on the device: the same bits as on the host. */
static void
t_gpt_same_bits(void **state)
{
	struct tg_run	 cpu, gpu;
	long		 calls;

	(void)state;
	tg_train_gpt("cpu", "{global: 8, micro: 2}", &cpu);
	calls = mock_cuda_calls;
	tg_train_gpt("cuda", "{global: 8, micro: 2}", &gpu);
	print_message("    gpt cpu: crc %s val_loss %.6f, %lld steps; mock GPU: "
	    "crc %s val_loss %.6f, %lld steps, %ld kernels\n",
	    cpu.sum.params_crc32, cpu.sum.f.val_loss, cpu.sum.f.steps,
	    gpu.sum.params_crc32, gpu.sum.f.val_loss, gpu.sum.f.steps,
	    mock_cuda_calls - calls);
	/* Each micro-batch: 2 blocks of 10 layers, the embedding, ln_f and
	 * the head forward (23), the same backward but for the 4 residual
	 * adds, which copy their gradient (19), and the loss: 43 kernels. */
	assert_true(gpu.sum.f.steps >= 20);
	assert_true(mock_cuda_calls - calls >= gpu.sum.f.steps * 4 * 43);
	assert_string_equal(gpu.sum.params_crc32, cpu.sum.params_crc32);
	assert_true(SUMMARY_HAS(&gpu.sum.f, val_loss) &&
	    !SUMMARY_HAS(&gpu.sum.f, test_acc));
	/* 16 tokens a sample */
	assert_true(fabs(gpu.sum.f.tokens_per_s - 16 *
	    gpu.sum.f.samples_per_s) <= 1e-9 * gpu.sum.f.tokens_per_s);
	assert_true(gpu.sum.f.val_loss == cpu.sum.f.val_loss);
	assert_true(cpu.sum.f.val_loss < 5.0);	/* below ln 256: it learned */
	assert_int_equal(gpu.sum.f.accum, 4);
	assert_int_equal(mock_cuda_used, 0);
}

/* Device bytes of the gpt's device model for B samples. */
static size_t
tg_gpt_bytes(int B)
{
	struct spec_errors errs = { 0 };
	struct job_spec	 job;
	struct model	*m;
	struct model_gpu *g;
	const char	*yaml = "name: g\nmodel: " TG_GPT_MODEL "\n";
	char		 err[256];
	size_t		 used;
	int		 oom;

	assert_int_equal(spec_parse_job("g.yaml", yaml, strlen(yaml), &job,
	    &errs), 0);
	assert_non_null(m = model_create(&job, 16, 1, 1, 256, 1, 1));
	if ((g = model_gpu_create(m, B, &oom, err, sizeof err)) == NULL)
		fail_msg("model_gpu_create: %s", err);
	used = mock_cuda_used;
	model_gpu_free(g);
	model_free(m);
	return used;
}

/* A gpt's micro-batch search on a device that holds 4 samples, not 8. */
static void
t_gpt_device_oom(void **state)
{
	struct tg_run	 run;
	size_t		 b4 = tg_gpt_bytes(4), b8 = tg_gpt_bytes(8);
	int		 oom = 0, fit = 0;

	(void)state;
	print_message("    gpt device model: %zu bytes at 4 samples, %zu at "
	    "8\n", b4, b8);
	assert_true(b4 < b8);
	mock_cuda_capacity = (b4 + b8) / 2;
	tg_train_gpt("cuda", "{global: 16, micro: auto}", &run);
	mock_cuda_capacity = 0;
	for (int i = 0; i < run.ntrials; i++) {
		const struct autotune_trial *t = &run.trials[i];

		print_message("    size %4d  %-4s  %8zu tracked bytes\n", t->size,
		    t->fit ? "fit" : "over", t->peak_bytes);
		if (t->fit)
			fit = fit > t->size ? fit : t->size;
		else if (t->peak_bytes <= 2ULL << 30)
			oom++;			/* the device said no */
	}
	assert_true(oom >= 1);
	assert_int_equal(fit, 4);
	assert_true(run.micro >= 1 && run.micro <= 4 && 16 % run.micro == 0);
	assert_int_equal(run.sum.f.micro_batch, run.micro);
	assert_int_equal(run.sum.f.accum, 16 / run.micro);
	assert_int_equal(mock_cuda_used, 0);
}

static void
t_kinds(void **state)
{
	const struct spec_model_kind *k;

	(void)state;
	for (int i = 0; (k = spec_model_kind((enum spec_model)i)) != NULL;
	    i++) {
		struct job_spec	 job;
		struct model	*m;
		struct model_gpu *g;
		char		 err[256] = "";
		int		 oom;

		spec_job_defaults(&job);
		job.model.type = (enum spec_model)i;
		if ((m = model_create(&job, 1, 28, 28, 10, 8, 1)) == NULL)
			fail_msg("model %s: no builder", k->name);
		g = model_gpu_create(m, 8, &oom, err, sizeof err);
		print_message("    %s: %s\n", k->name, g != NULL ? "runs on "
		    "the device" : err);
		if ((g != NULL) != k->cuda)
			fail_msg("model %s: spec.h says cuda %s", k->name,
			    k->cuda ? "runs it" : "does not");
		model_gpu_free(g);
		model_free(m);
	}
	assert_int_equal(mock_cuda_used, 0);
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(t_same_bits),
		cmocka_unit_test(t_device_oom),
		cmocka_unit_test(t_gpt_same_bits),
		cmocka_unit_test(t_gpt_device_oom),
		cmocka_unit_test(t_kinds),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
