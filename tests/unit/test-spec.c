/*
 * test-spec.c: backend/spec against the files people will really write.
 * Each bad input is checked for the exact line and column of its error and
 * for the words of the message; good inputs for the values they yield,
 * defaults included.  The examples/ files are read from SRCDIR.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <unistd.h>

#include "backend/spec/spec.h"

static struct spec_errors	errs;
static struct job_spec		job;
static struct cluster_spec	cl;

static int
reset(void **state)
{
	(void)state;
	spec_errors_free(&errs);
	spec_cluster_free(&cl);
	return 0;
}

static int
parse(const char *text)
{
	spec_errors_free(&errs);
	return spec_parse_job("t.yaml", text, strlen(text), &job, &errs);
}

static int
parse_cluster(const char *text)
{
	spec_errors_free(&errs);
	spec_cluster_free(&cl);
	return spec_parse_cluster("c.yaml", text, strlen(text), &cl, &errs);
}

/* Fail unless some error sits at line:col and its message holds want. */
static void
expect_error(int line, int col, const char *want)
{
	size_t	i;

	for (i = 0; i < errs.n; i++) {
		if (errs.v[i].line == line && errs.v[i].col == col &&
		    strstr(errs.v[i].msg, want) != NULL)
			return;
	}
	spec_errors_print(stderr, &errs);
	fail_msg("no error at %d:%d holding \"%s\" (%zu errors)", line, col,
	    want, errs.n);
}

/* The only error is at line:col and holds want. */
static void
expect_job_error(const char *text, int line, int col, const char *want)
{
	assert_int_equal(parse(text), -1);
	expect_error(line, col, want);
	if (errs.n != 1)
		spec_errors_print(stderr, &errs);
	assert_int_equal(errs.n, 1);
}

static void
t_defaults(void **state)
{
	assert_int_equal(parse("name: x\n"), 0);
	assert_int_equal(errs.n, 0);
	assert_string_equal(job.name, "x");
	assert_string_equal(job.file, "t.yaml");
	assert_int_equal(job.priority, PRIORITY_NORMAL);
	assert_int_equal(job.resources.ranks, 4);
	assert_int_equal(job.resources.device, DEVICE_CPU);
	assert_true(job.resources.memory_per_rank == 2ULL << 30);
	assert_int_equal(job.resources.placement, PLACEMENT_RACK);
	assert_int_equal(job.resources.group_size, 0);	/* follows the job */
	assert_false(job.resources.strict);
	assert_int_equal(job.model.type, MODEL_MLP);
	assert_int_equal(job.model.n_hidden, 2);
	assert_int_equal(job.model.hidden[1], 256);
	assert_int_equal(job.model.n_channels, 2);
	assert_int_equal(job.model.channels[1], 32);
	assert_string_equal(job.data.dataset, "fashion-mnist");
	assert_int_equal(job.data.prefetch, 8);
	assert_int_equal(job.train.epochs, 5);
	assert_true(job.train.seed == 42);
	assert_true(job.train.optimizer.beta2 == 0.999);
	assert_true(job.train.lr.base == 0.05);
	assert_int_equal(job.train.lr.schedule, SCHEDULE_COSINE);
	assert_int_equal(job.train.batch.global, 256);
	assert_int_equal(job.train.batch.micro, 0);
	assert_int_equal(job.train.batch.steps_per_trial, 3);
	assert_int_equal(job.compression.method, COMPRESS_NONE);
	assert_true(job.compression.density == 0.001);
	assert_true(job.compression.error_feedback);
	assert_int_equal(job.checkpoint.every_steps, 200);
	assert_int_equal(job.checkpoint.keep, 3);
	assert_true(job.policy.low_util == 0.5);
	assert_true(job.policy.heartbeat_timeout_s == 10);
	assert_true(job.policy.leak_growth_limit == 64ULL << 20);

	assert_int_equal(parse("name: x\nmodel: {type: cnn}\n"), 0);
	assert_int_equal(job.model.n_hidden, 0);
	assert_int_equal(parse("name: x\nmodel: {type: cnn, hidden: [64]}\n"),
	    0);
	assert_int_equal(job.model.n_hidden, 1);
	assert_int_equal(job.model.hidden[0], 64);
}

static const char full_job[] =
	"name: fmnist-mlp\npriority: high\n"
	"resources:\n  ranks: 4\n  device: cuda\n  memory_per_rank: 512MiB\n"
	"  placement: spread\n  group_size: 2\n"
	"model: {type: mlp, hidden: [128, 64, 32]}\n"
	"data: {dataset: fashion-mnist, prefetch: 4, path: /data/fm}\n"
	"train:\n  epochs: 7\n  seed: 18446744073709551615\n"
	"  optimizer: {type: adamw, beta1: 0.8, beta2: 0.99, eps: 1e-7}\n"
	"  lr: {base: 0.1, schedule: adaptive, warmup_steps: 0}\n"
	"  batch: {global: 256, micro: 32}\n"
	"compression:\n  method: threshold\n  density: 1\n"
	"  error_feedback: off\n  momentum_correction: No\n"
	"  warmup_epochs: 0\n"
	"checkpoint: {every_steps: 0, keep: 1, dir: ck}\n"
	"policy:\n  failover: {low_util: 12.5%, for: 2m, "
	"heartbeat_timeout: 500ms}\n"
	"  leak: {check_every: 10, growth_limit: 1GB}\n";

static void
t_full(void **state)
{
	assert_int_equal(parse(full_job), 0);
	assert_int_equal(job.priority, PRIORITY_HIGH);
	assert_int_equal(job.resources.device, DEVICE_CUDA);
	assert_true(job.resources.memory_per_rank == 512ULL << 20);
	assert_int_equal(job.resources.placement, PLACEMENT_SPREAD);
	assert_int_equal(job.model.n_hidden, 3);
	assert_int_equal(job.model.hidden[2], 32);
	assert_string_equal(job.data.path, "/data/fm");
	assert_int_equal(job.data.prefetch, 4);
	assert_true(job.train.seed == UINT64_MAX);
	assert_int_equal(job.train.optimizer.type, OPTIM_ADAMW);
	assert_true(job.train.optimizer.eps == 1e-7);
	assert_int_equal(job.train.lr.schedule, SCHEDULE_ADAPTIVE);
	assert_int_equal(job.train.batch.micro, 32);
	assert_int_equal(job.compression.method, COMPRESS_THRESHOLD);
	assert_false(job.compression.error_feedback);
	assert_false(job.compression.momentum_correction);
	assert_string_equal(job.checkpoint.dir, "ck");
	assert_true(job.policy.low_util == 0.125);
	assert_true(job.policy.low_util_for_s == 120);
	assert_true(job.policy.heartbeat_timeout_s == 0.5);
	assert_true(job.policy.leak_growth_limit == 1000000000ULL);
}

/* Every prefix of a good file: errors or success, never a crash. */
static void
t_prefixes(void **state)
{
	size_t	len;

	for (len = 0; len <= sizeof full_job - 1; len++) {
		spec_errors_free(&errs);
		spec_parse_job("t.yaml", full_job, len, &job, &errs);
	}
}

static void
t_unknown_key(void **state)
{
	expect_job_error("name: x\ntrain:\n  epochz: 5\n", 3, 3,
	    "unknown key 'epochz' in train (did you mean 'epochs'?)");
	expect_job_error("name: x\nwibble: 1\n", 2, 1, "unknown key 'wibble'");
	assert_null(strstr(errs.v[0].msg, "did you mean"));
	expect_job_error("name: x\nresources: {rank: 2}\n", 2, 13,
	    "(did you mean 'ranks'?)");
}

static void
t_wrong_type(void **state)
{
	expect_job_error("name: x\ntrain:\n  epochs: ten\n", 3, 11,
	    "train.epochs: expected an integer, got 'ten'");
	expect_job_error("name: x\ntrain: 5\n", 2, 8,
	    "train: expected a mapping, got '5'");
	expect_job_error("name: x\nmodel: {hidden: 5}\n", 2, 17,
	    "model.hidden: expected a list");
	expect_job_error("name: x\ncompression: {error_feedback: maybe}\n",
	    2, 31, "expected true or false, got 'maybe'");
	expect_job_error("name: x\ntrain: {lr: {base: nan}}\n", 2, 20,
	    "train.lr.base: expected a number, got 'nan'");
	expect_job_error("name: x\ntrain: {epochs: 99999999999}\n", 2, 17,
	    "too large");
	expect_job_error("name: [x]\n", 1, 7, "name: expected a string, "
	    "got a list");
}

static void
t_ranges(void **state)
{
	expect_job_error("name: x\nresources: {ranks: 0}\n", 2, 20,
	    "resources.ranks: must be > 0, got 0");
	expect_job_error("name: x\ncompression:\n  density: 0\n", 3, 12,
	    "compression.density: must be in (0, 1], got 0");
	expect_job_error("name: x\ncompression:\n  density: 1.5\n", 3, 12,
	    "compression.density: must be in (0, 1], got 1.5");
	/* The default method is none: a density alone asks for nothing. */
	expect_job_error("name: x\ncompression: {density: 0.01}\n", 2, 15,
	    "compression.density: applies to method topk or threshold, and "
	    "the method defaults to none");
	expect_job_error("name: x\ntrain:\n  batch: {global: 0}\n", 3, 19,
	    "train.batch.global: must be > 0, got 0");
	expect_job_error("name: x\ntrain: {seed: -1}\n", 2, 15,
	    "train.seed: must be >= 0, got -1");
	expect_job_error("name: x\nmodel: {hidden: [8, 0]}\n", 2, 21,
	    "model.hidden[1]: must be > 0, got 0");
	expect_job_error("name: x\nmodel: {channels: []}\n", 2, 19,
	    "model.channels: must hold 1 to 4 values, got 0");
	expect_job_error("name: x\nmodel: {hidden: [1,2,3,4,5,6,7,8,9]}\n",
	    2, 17, "must hold 0 to 8 values, got 9");
}

static void
t_enums(void **state)
{
	expect_job_error("name: x\nmodel: {type: resnet}\n", 2, 15,
	    "model.type: unknown model 'resnet' (known: mlp, cnn, gpt)");
	assert_null(strstr(errs.v[0].msg, "did you mean"));
	expect_job_error("name: x\ntrain:\n  optimizer: {type: adam}\n", 3, 21,
	    "train.optimizer.type: unknown optimizer 'adam' "
	    "(known: sgd, adamw) (did you mean 'adamw'?)");
	expect_job_error("name: x\ndata: {dataset: mnist}\n", 2, 17,
	    "unknown dataset 'mnist'");
}

/* Each model kind says which keys of model: it takes; its name comes
 * from the one table. */
static void
t_model_kinds(void **state)
{
	expect_job_error("name: x\nmodel: {type: mlp, channels: [8]}\n", 2, 20,
	    "model.channels: model type mlp takes no 'channels' (it takes: "
	    "type, hidden)");
	assert_int_equal(parse("name: x\nmodel: {type: cnn, channels: [8], "
	    "hidden: [16]}\n"), 0);
	expect_job_error("name: x\nmodel: {type: cnm}\n", 2, 15,
	    "(known: mlp, cnn, gpt) (did you mean 'cnn'?)");
	assert_string_equal(spec_model_kind(MODEL_MLP)->name, "mlp");
	assert_true(spec_model_kind(MODEL_MLP)->cuda);
	assert_false(spec_model_kind(MODEL_CNN)->cuda);
	assert_true(spec_model_kind(MODEL_GPT)->cuda);
	assert_null(spec_model_kind((enum spec_model)7));
	assert_string_equal(spec_model_name((enum spec_model)7), "?");
}

/* The gpt's keys, defaults and checks. */
static void
t_gpt(void **state)
{
	assert_int_equal(parse("name: x\nmodel: {type: gpt, layers: 2, heads: 4, "
	    "channels: 64, context: 32}\n"), 0);
	assert_int_equal(job.model.channels[0], 64);
	assert_int_equal(job.model.n_channels, 1);
	assert_int_equal(job.data.format, FORMAT_TEXT);
	assert_int_equal(job.train.optimizer.type, OPTIM_ADAMW);
	assert_true(job.train.grad_clip == 1.0);
	assert_int_equal(spec_vocab(&job), 256);
	expect_job_error("name: x\nmodel: {type: gpt, channels: 30, heads: 4}\n",
	    2, 34, "model.heads: 30 channels do not divide into 4 heads");
	expect_job_error("name: x\nmodel: {type: gpt, channels: [8, 8]}\n", 2,
	    20, "model.channels: a gpt has one width");
	expect_job_error("name: x\nmodel: {type: gpt, vocab: 300}\n", 2, 20,
	    "model.vocab: text is bytes: its vocabulary is 256");
	expect_job_error("name: x\nmodel: {type: gpt}\ndata: {format: images}\n",
	    3, 8, "data.format: model type gpt trains on tokens or text, not "
	    "images");
	expect_job_error("name: x\nmodel: {type: mlp}\ndata: {format: text}\n",
	    3, 8, "data.format: model type mlp trains on images, not text");
	expect_job_error("name: x\nmodel: {type: gpt}\ndata: {format: tokens}\n",
	    3, 8, "data.format: format tokens needs data.train");
	expect_job_error("name: x\nmodel: {type: mlp, hidden: 5}\n", 2, 28,
	    "model.hidden: expected a list");
	assert_int_equal(parse("name: x\nmodel: {type: gpt}\ndata: {format: "
	    "tokens, train: \"/d/train_*.bin\"}\n"), 0);
	assert_int_equal(spec_vocab(&job), 50257);
}

static void
t_missing_name(void **state)
{
	expect_job_error("train: {epochs: 3}\n", 1, 1,
	    "missing required key 'name'");
	expect_job_error("# a comment\n\ntrain: {epochs: 3}\n", 1, 1,
	    "missing required key 'name'");
}

static void
t_duplicate_key(void **state)
{
	expect_job_error("name: x\ntrain:\n  epochs: 3\n  epochs: 4\n", 4, 3,
	    "duplicate key 'epochs' (first at line 3)");
	assert_int_equal(job.train.epochs, 3);
}

static void
t_malformed_units(void **state)
{
	expect_job_error("name: x\nresources: {memory_per_rank: 2GB!}\n",
	    2, 30, "resources.memory_per_rank: malformed size '2GB!' "
	    "(examples: 512MiB, 2GiB)");
	expect_job_error("name: x\npolicy:\n  failover: {for: 10 parsecs}\n",
	    3, 19, "policy.failover.for: malformed duration '10 parsecs'");
	expect_job_error("name: x\npolicy:\n  failover: {low_util: half}\n",
	    3, 24, "policy.failover.low_util: malformed percent 'half'");
	expect_job_error("name: x\npolicy:\n  failover: {low_util: 150%}\n",
	    3, 24, "must be in 0%..100%, got 150%");
}

static void
t_micro(void **state)
{
	assert_int_equal(parse("name: x\ntrain: {batch: {micro: auto}}\n"), 0);
	assert_int_equal(job.train.batch.micro, 0);
	expect_job_error("name: x\ntrain:\n  batch: {global: 64, micro: 128}\n",
	    3, 23, "train.batch.micro: must be <= train.batch.global (64), "
	    "got 128");
	expect_job_error("name: x\ntrain:\n  batch: {global: 256, micro: 48}\n",
	    3, 24, "(48 x 4 = 192)");
	expect_job_error("name: x\ntrain: {batch: {micro: lots}}\n", 2, 24,
	    "expected an integer or 'auto', got 'lots'");
	assert_int_equal(parse("name: x\ntrain: {batch: {micro: auto, "
	    "steps_per_trial: 5}}\n"), 0);
	assert_int_equal(job.train.batch.steps_per_trial, 5);
	expect_job_error("name: x\nresources: {device: cuda}\n"
	    "model: {type: cnn}\n", 2, 13, "resources.device: cuda runs mlp, "
	    "gpt models only");
	assert_int_equal(parse("name: x\nresources: {device: cuda}\n"
	    "model: {type: gpt}\n"), 0);
	expect_job_error("name: x\ntrain: {batch: {steps_per_trial: 0}}\n", 2,
	    34, "train.batch.steps_per_trial: must be > 0, got 0");
}

static void
t_strings(void **state)
{
	char	text[200];

	snprintf(text, sizeof text, "name: %064d\n", 7);
	expect_job_error(text, 1, 7, "name: too long (64 bytes, limit 63)");
	expect_job_error("name: 'a;rm -rf'\n", 1, 7, "job name 'a;rm -rf' "
	    "may only hold letters, digits, '.', '_' and '-'");
	expect_job_error("name: -x\n", 1, 7, "must not start with '-'");
	expect_job_error("name: ''\n", 1, 7, "must not be empty");
	expect_job_error("name: x\ncheckpoint: {dir: '$(reboot)'}\n", 2, 19,
	    "path '$(reboot)' may only hold");
	expect_job_error("name: \"a\\x1b[2J\"\n", 1, 7, "'a?[2J'");
}

static void
t_not_yaml(void **state)
{
	expect_job_error("{{{ not yaml", 1, 2, "a key must be a plain word");
	expect_job_error("name: x\ntrain: [1, 2\n", 3, 1,
	    "YAML syntax error: did not find expected ',' or ']'");
	expect_job_error("name: x\nsome text: here: there\n", 2, 16,
	    "YAML syntax error: mapping values are not allowed");
	expect_job_error("hello world\n", 1, 1,
	    "expected a mapping at top level, got 'hello world'");
	expect_job_error("- a\n- b\n", 1, 1,
	    "expected a mapping at top level, got a list");
	expect_job_error("name: x\n---\nname: y\n", 2, 1,
	    "more than one YAML document");
	expect_job_error("{a: 1}: 2\n", 1, 1, "a key must be a plain word");
}

static void
t_empty(void **state)
{
	expect_job_error("", 1, 1, "empty file");
	expect_job_error("# nothing here\n\n", 1, 1, "empty file");
}

static void
t_too_large(void **state)
{
	size_t	 len = 10 * 1024 * 1024;
	char	*big = malloc(len);

	assert_non_null(big);
	memset(big, 'a', len);
	assert_int_equal(spec_parse_job("big.yaml", big, len, &job, &errs),
	    -1);
	free(big);
	expect_error(1, 1, "file too large (10485760 bytes, limit 1 MiB)");
	assert_int_equal(errs.n, 1);
}

static void
t_tabs(void **state)
{
	expect_job_error("name: x\ntrain:\n\tepochs: 5\n", 3, 1, "tab");
	expect_job_error("name: x\ntrain:\n  epochs: 5\n\tseed: 1\n", 4, 1,
	    "tab character in indentation");
}

static void
t_binary(void **state)
{
	unsigned char	buf[4096];
	uint32_t	x = 12345;
	size_t		i;

	expect_job_error("name: x\n\x01\x00\xff", 2, 1, "binary data");
	expect_job_error("name: caf\xe9\n", 1, 10, "not UTF-8");
	for (i = 0; i < sizeof buf; i++) {
		x = x * 1103515245 + 12345;
		buf[i] = (unsigned char)(x >> 16);
	}
	buf[0] = 'x';
	buf[100] = 0;
	spec_errors_free(&errs);
	assert_int_equal(spec_parse_job("r.bin", (const char *)buf,
	    sizeof buf, &job, &errs), -1);
	assert_int_equal(errs.n, 1);
	assert_true(errs.v[0].line >= 1 && errs.v[0].col >= 1);
	assert_true(strstr(errs.v[0].msg, "binary data") != NULL ||
	    strstr(errs.v[0].msg, "not UTF-8") != NULL);
}

static void
t_alias_bomb(void **state)
{
	char	text[2048];
	size_t	o = 0;
	int	level, i;

	o += snprintf(text + o, sizeof text - o,
	    "name: x\na0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n");
	for (level = 1; level <= 9; level++) {
		o += snprintf(text + o, sizeof text - o, "a%d: &a%d [", level,
		    level);
		for (i = 0; i < 9; i++)
			o += snprintf(text + o, sizeof text - o, "%s*a%d",
			    i ? "," : "", level - 1);
		o += snprintf(text + o, sizeof text - o, "]\n");
	}
	expect_job_error(text, 3, 10, "aliases are not supported (*a0)");
}

static void
t_deep(void **state)
{
	char	text[300];

	memset(text, '[', 200);
	strcpy(text + 200, "\n");
	expect_job_error(text, 1, 65, "nested too deeply (limit 64 levels)");
}

static void
t_many_errors(void **state)
{
	assert_int_equal(parse("train:\n  epochz: 5\n  seed: x\n"
	    "resources: {ranks: 0, placement: rak}\n"
	    "compression: {density: 2}\n"), -1);
	expect_error(1, 1, "missing required key 'name'");
	expect_error(2, 3, "unknown key 'epochz'");
	expect_error(3, 9, "train.seed: expected a non-negative integer");
	expect_error(4, 20, "resources.ranks: must be > 0");
	expect_error(4, 34, "unknown placement 'rak'");
	expect_error(5, 24, "compression.density: must be in (0, 1]");
	assert_int_equal(errs.n, 6);
}

/* strict: rack placement's, written beside placement: rack. */
static void
t_strict(void **state)
{
	assert_int_equal(parse("name: x\nresources: {placement: rack, "
	    "strict: true}\n"), 0);
	assert_true(job.resources.strict);
	expect_job_error("name: x\nresources: {placement: pack, strict: true}\n",
	    2, 30, "resources.strict: true applies to rack placement only, "
	    "and this job has placement: pack");
	expect_job_error("name: x\nresources: {strict: true}\n", 2, 13,
	    "write placement: rack beside it");
	expect_job_error("name: x\nresources: {strict: 3}\n", 2, 21,
	    "resources.strict");
}

/* train.zero and train.overlap: the values and the jobs they refuse. */
static void
t_zero_overlap(void **state)
{
	assert_int_equal(parse("name: x\ntrain: {zero: 1, overlap: true, "
	    "bucket_size: 64KiB}\ncompression: {method: none}\n"), 0);
	assert_int_equal(job.train.zero, 1);
	assert_true(job.train.overlap);
	assert_int_equal(job.train.bucket_size, 65536);
	expect_job_error("name: x\ntrain: {zero: 2}\ncompression: {method: "
	    "none}\n", 2, 9, "train.zero: 0 (off) or 1");
	assert_int_equal(parse("name: x\ntrain: {zero: 1}\n"), 0);
	expect_job_error("name: x\ntrain: {zero: 1}\ncompression: {method: "
	    "topk}\n", 2, 9, "train.zero: 1 "
	    "needs compression: {method: none}, and this job has topk: ZeRO-1 "
	    "allgathers the dense parameters");
	expect_job_error("name: x\ntrain: {zero: 1}\ncompression: {method: "
	    "fp16}\n", 2, 9, "fp16 gathers every rank's whole");
	expect_job_error("name: x\ntrain: {overlap: true, lr: {schedule: "
	    "adaptive}}\n", 2, 9, "train.overlap: lr.schedule adaptive");
	expect_job_error("name: x\ntrain: {bucket_size: 0}\n", 2, 22,
	    "train.bucket_size");
}

static void
t_units(void **state)
{
	static const struct { const char *s; uint64_t v; int rc; } sizes[] = {
		{ "0", 0, 0 }, { "1000", 1000, 0 }, { "1B", 1, 0 },
		{ "512k", 512000, 0 }, { "1K", 1000, 0 }, { "1KB", 1000, 0 },
		{ "1KiB", 1024, 0 }, { "1ki", 1024, 0 },
		{ "64MiB", 64ULL << 20, 0 }, { "2GiB", 2ULL << 30, 0 },
		{ "2GB", 2000000000ULL, 0 }, { "1.5GiB", 3ULL << 29, 0 },
		{ "1 TiB", 1ULL << 40, 0 }, { "3T", 3000000000000ULL, 0 },
		{ "15EiB", 15ULL << 60, 0 },
		{ "18446744073709551615", UINT64_MAX, 0 },
		{ "16EiB", 0, -1 }, { "18446744073709551616", 0, -1 },
		{ "99999999999999999999999", 0, -1 }, { "-1", 0, -1 },
		{ "", 0, -1 }, { "GiB", 0, -1 }, { "2GB!", 0, -1 },
		{ "1.5.3", 0, -1 }, { "1e3", 0, -1 }, { "1XB", 0, -1 },
		{ " 5", 0, -1 }, { "5 ", 0, -1 }, { "1.", 0, -1 },
	};
	static const struct { const char *s; double v; int rc; } durs[] = {
		{ "60", 60, 0 }, { "60s", 60, 0 }, { "10m", 600, 0 },
		{ "1h", 3600, 0 }, { "500ms", 0.5, 0 }, { "1.5h", 5400, 0 },
		{ "0", 0, 0 }, { "-1s", 0, -1 }, { "10 parsecs", 0, -1 },
		{ "", 0, -1 }, { "s", 0, -1 }, { "inf", 0, -1 },
		{ "1e400", 0, -1 },
	}, pcts[] = {
		{ "50%", 0.5, 0 }, { "0%", 0, 0 }, { "100%", 1, 0 },
		{ "12.5%", 0.125, 0 }, { "101%", 0, -1 }, { "-5%", 0, -1 },
		{ "50", 0, -1 }, { "%", 0, -1 }, { "", 0, -1 },
		{ "50%%", 0, -1 },
	};
	uint64_t	u;
	double		d;
	size_t		i;

	for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		u = 7;
		if (spec_parse_size(sizes[i].s, &u) != sizes[i].rc)
			fail_msg("size '%s': wrong result", sizes[i].s);
		if (sizes[i].rc == 0 && u != sizes[i].v)
			fail_msg("size '%s': got %llu", sizes[i].s,
			    (unsigned long long)u);
	}
	for (i = 0; i < sizeof durs / sizeof durs[0]; i++) {
		if (spec_parse_duration(durs[i].s, &d) != durs[i].rc ||
		    (durs[i].rc == 0 && d != durs[i].v))
			fail_msg("duration '%s'", durs[i].s);
	}
	for (i = 0; i < sizeof pcts / sizeof pcts[0]; i++) {
		if (spec_parse_percent(pcts[i].s, &d) != pcts[i].rc ||
		    (pcts[i].rc == 0 && d != pcts[i].v))
			fail_msg("percent '%s'", pcts[i].s);
	}
	assert_string_equal(spec_model_name(MODEL_CNN), "cnn");
	assert_string_equal(spec_optim_name(OPTIM_ADAMW), "adamw");
	assert_string_equal(spec_schedule_name(SCHEDULE_ADAPTIVE), "adaptive");
	assert_string_equal(spec_compress_name(COMPRESS_THRESHOLD),
	    "threshold");
	assert_string_equal(spec_placement_name(PLACEMENT_SPREAD), "spread");
	assert_string_equal(spec_priority_name(PRIORITY_LOW), "low");
	assert_string_equal(spec_device_name(DEVICE_CUDA), "cuda");
	assert_string_equal(spec_device_name((enum spec_device)7), "?");
}

static void
t_print(void **state)
{
	FILE	*f = tmpfile();
	char	 line[256];

	assert_non_null(f);
	parse("name: x\ntrain:\n  epochz: 5\n");
	spec_error_add(&errs, "other.yaml", 0, 0, "cannot open: %s", "gone");
	spec_errors_print(f, &errs);
	rewind(f);
	assert_non_null(fgets(line, sizeof line, f));
	assert_string_equal(line, "t.yaml:3:3: unknown key 'epochz' in train "
	    "(did you mean 'epochs'?)\n");
	assert_non_null(fgets(line, sizeof line, f));
	assert_string_equal(line, "other.yaml: cannot open: gone\n");
	fclose(f);
}

static const char *
srcpath(char *buf, size_t size, const char *rel)
{
	const char	*dir = getenv("SRCDIR");

	if (dir == NULL || *dir == '\0')
		dir = HUNTER_SRCDIR;
	snprintf(buf, size, "%s/%s", dir, rel);
	return buf;
}

static void
t_examples(void **state)
{
	struct cluster_spec	def;
	char			p[4096];
	int			i;

	if (spec_load_job(srcpath(p, sizeof p, "examples/jobs/fmnist-mlp.yaml"),
	    &job, &errs) != 0)
		spec_errors_print(stderr, &errs);
	assert_int_equal(errs.n, 0);
	assert_string_equal(job.name, "fmnist-mlp");
	assert_int_equal(job.resources.ranks, 1);
	assert_int_equal(job.train.epochs, 10);
	assert_int_equal(job.train.batch.global, 128);
	assert_int_equal(job.train.batch.micro, 128);
	assert_int_equal(job.compression.method, COMPRESS_NONE);
	assert_int_equal(job.checkpoint.every_steps, 500);
	assert_int_equal(job.model.n_hidden, 2);
	assert_false(spec_is_cluster_file(p));

	assert_int_equal(spec_load_job(srcpath(p, sizeof p,
	    "examples/jobs/fmnist-cnn.yaml"), &job, &errs), 0);
	assert_string_equal(job.name, "fmnist-cnn");
	assert_int_equal(job.model.type, MODEL_CNN);
	assert_int_equal(job.model.n_hidden, 0);
	assert_int_equal(job.model.n_channels, 2);
	assert_int_equal(job.model.channels[0], 16);

	assert_int_equal(spec_load_cluster(srcpath(p, sizeof p,
	    "examples/clusters/lab.yaml"), &cl, &errs), 0);
	assert_true(spec_is_cluster_file(p));
	assert_string_equal(cl.name, "lab");
	assert_int_equal(cl.n_nodes, 2);
	assert_string_equal(cl.nodes[0].user, "hunter");
	assert_string_equal(cl.nodes[1].host, "10.0.0.19");
	assert_string_equal(cl.nodes[1].rack, "r2");
	assert_int_equal(cl.nodes[1].cuda_slots, 8);
	assert_true(cl.nodes[1].spare);
	assert_int_equal(cl.nodes[1].line, 5);
	spec_cluster_free(&cl);

	assert_int_equal(spec_load_cluster(srcpath(p, sizeof p,
	    "examples/clusters/local.yaml"), &cl, &errs), 0);
	spec_cluster_default(&def);
	assert_string_equal(cl.name, def.name);
	assert_int_equal(cl.n_nodes, def.n_nodes);
	for (i = 0; i < def.n_nodes; i++) {
		assert_string_equal(cl.nodes[i].name, def.nodes[i].name);
		assert_string_equal(cl.nodes[i].host, def.nodes[i].host);
		assert_string_equal(cl.nodes[i].rack, def.nodes[i].rack);
		assert_int_equal(cl.nodes[i].cpu_slots, def.nodes[i].cpu_slots);
		assert_int_equal(cl.nodes[i].spare, def.nodes[i].spare);
	}
	spec_cluster_free(&def);
	assert_int_equal(errs.n, 0);

	assert_int_equal(spec_load_job("/nonexistent/x.yaml", &job, &errs), -1);
	expect_error(0, 0, "cannot open");
}

/* Write text to a fresh temporary file; its path goes in path. */
static void
write_temp(char *path, const char *text, size_t len)
{
	FILE	*f;
	int	 fd;

	strcpy(path, "/tmp/test-spec-XXXXXX");
	assert_true((fd = mkstemp(path)) >= 0);
	assert_non_null(f = fdopen(fd, "wb"));
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void
t_files(void **state)
{
	size_t	 len = 2 * 1024 * 1024;
	char	 path[64], *big = malloc(len);

	assert_non_null(big);
	memset(big, '#', len);
	write_temp(path, big, len);
	free(big);
	assert_int_equal(spec_load_job(path, &job, &errs), -1);
	expect_error(1, 1, "file too large (2097152 bytes, limit 1 MiB)");
	assert_false(spec_is_cluster_file(path));
	unlink(path);
	spec_errors_free(&errs);

	write_temp(path, "cluster: x\nnodes: [\n", 20);
	assert_true(spec_is_cluster_file(path));
	assert_int_equal(spec_load_cluster(path, &cl, &errs), -1);
	expect_error(3, 1, "YAML syntax error");
	unlink(path);
	spec_errors_free(&errs);

	write_temp(path, "\xef\xbb\xbfname: bom\r\ntrain: {epochs: 2}\r\n", 34);
	assert_false(spec_is_cluster_file(path));
	if (spec_load_job(path, &job, &errs) != 0)
		spec_errors_print(stderr, &errs);
	assert_int_equal(errs.n, 0);
	assert_string_equal(job.name, "bom");
	assert_string_equal(job.file, path);
	assert_int_equal(job.train.epochs, 2);
	unlink(path);
}

static void
t_cluster_default(void **state)
{
	spec_cluster_default(&cl);
	assert_string_equal(cl.name, "local");
	assert_int_equal(cl.n_nodes, 4);
	assert_string_equal(cl.nodes[0].name, "local0");
	assert_string_equal(cl.nodes[3].name, "local3");
	assert_string_equal(cl.nodes[2].host, "local");
	assert_string_equal(cl.nodes[1].rack, "r1");
	assert_string_equal(cl.nodes[2].rack, "r2");
	assert_int_equal(cl.nodes[0].cpu_slots, 2);
	assert_false(cl.nodes[2].spare);
	assert_true(cl.nodes[3].spare);
	assert_int_equal(cl.simulate, 0);
}

static void
t_cluster(void **state)
{
	assert_int_equal(parse_cluster("cluster: lab\nssh: {config: cfg, "
	    "known_hosts: kh}\nnodes:\n  - name: a\n    host: 127.0.0.1\n"
	    "    port: 2222\n    state_dir: /tmp/h-a\n"
	    "  - {name: b, host: 'fe80::1', devices: {cpu: 0, cuda: 2}}\n"), 0);
	assert_string_equal(cl.ssh.config, "cfg");
	assert_string_equal(cl.ssh.known_hosts, "kh");
	assert_int_equal(cl.n_nodes, 2);
	assert_int_equal(cl.nodes[0].port, 2222);
	assert_int_equal(cl.nodes[0].line, 4);
	assert_string_equal(cl.nodes[0].rack, "default");
	assert_string_equal(cl.nodes[0].state_dir, "/tmp/h-a");
	assert_int_equal(cl.nodes[0].cpu_slots, 1);
	assert_int_equal(cl.nodes[1].cpu_slots, 0);
	assert_int_equal(cl.nodes[1].cuda_slots, 2);

	assert_int_equal(parse_cluster("simulate: 8\n"), 0);
	assert_int_equal(cl.simulate, 8);
	assert_int_equal(cl.sim_racks, 2);
	assert_int_equal(cl.n_nodes, 0);
	assert_int_equal(parse_cluster("simulate: 4\nracks: 5\n"), -1);
	expect_error(2, 8, "racks: must be <= simulate (4), got 5");
}

/* scheduler: in both spellings, and what is refused. */
static void
t_cluster_sched(void **state)
{
	(void)state;
	assert_int_equal(parse_cluster("cluster: lab\nnodes:\n"
	    "  - {name: n01, host: h1}\n"
	    "scheduler: {policy: las, interval: 2m, restart: 500ms}\n"), 0);
	assert_string_equal(cl.sched.policy, "las");
	assert_true(cl.sched.interval_s == 120);
	assert_true(cl.sched.restart_s == 0.5);
	assert_int_equal(parse_cluster("cluster: lab\nnodes:\n"
	    "  - {name: n01, host: h1}\n"
	    "scheduler: {policy: goodput, interval_s: 60, restart_s: 30}\n"), 0);
	assert_true(cl.sched.interval_s == 60);
	assert_true(cl.sched.restart_s == 30);
	assert_int_equal(parse_cluster("cluster: lab\nnodes:\n"
	    "  - {name: n01, host: h1}\n"
	    "scheduler: {intervl: 60, restart: -1}\n"), -1);
	expect_error(4, 13, "unknown key 'intervl' in scheduler (did you mean "
	    "'interval'?)");
	assert_int_equal(errs.n, 2);
	assert_int_equal(parse_cluster("cluster: lab\nnodes:\n"
	    "  - {name: n01, host: h1}\nscheduler: goodput\n"), -1);
	expect_error(4, 12, "scheduler: expected a mapping");
}

static void
t_cluster_errors(void **state)
{
	assert_int_equal(parse_cluster("cluster: lab\nnodes:\n"
	    "  - {name: n01, host: h1}\n  - {name: n02, host: h2}\n"
	    "  - {name: n01, host: h3}\n"), -1);
	expect_error(5, 12, "nodes[2].name: duplicate node name 'n01' "
	    "(first at line 3)");
	assert_int_equal(errs.n, 1);
	assert_null(cl.nodes);

	assert_int_equal(parse_cluster("cluster: lab\nnodes:\n"
	    "  - {name: 'a;rm', host: 'h;ls', port: 70000}\n"
	    "  - {name: b, rack: 'r 1', user: '-oProxyCommand=x'}\n"), -1);
	expect_error(3, 12, "node name 'a;rm' may only hold letters, digits, "
	    "'.', '_' and '-'");
	expect_error(3, 26, "host 'h;ls' may only hold");
	expect_error(3, 40, "nodes[0].port: must be in 1..65535, got 70000");
	expect_error(4, 5, "missing required key 'host' in nodes[1]");
	expect_error(4, 21, "rack 'r 1' may only hold");
	expect_error(4, 34, "user '-oProxyCommand=x' may only hold");
	assert_int_equal(errs.n, 6);

	assert_int_equal(parse_cluster("nodes: []\nssh: {identtiy: k}\n"), -1);
	expect_error(1, 1, "missing required key 'cluster'");
	expect_error(1, 8, "nodes: must hold 1 to 4096 nodes, got 0");
	expect_error(2, 7, "unknown key 'identtiy' in ssh (did you mean "
	    "'identity'?)");
	assert_int_equal(parse_cluster("cluster: x\nnodes: [a]\n"), -1);
	expect_error(2, 9, "nodes[0]: expected a mapping, got 'a'");
}

/*
 * ssh paths up to the buffer's limit are taken as written (one of 63 bytes
 * or more used to be called "holds control characters": it was compared
 * with its quote, cut at 64 bytes); a control character is refused.
 */
static void
t_cluster_ssh_paths(void **state)
{
	char	text[4 * SPEC_PATH_MAX], path[SPEC_PATH_MAX];
	size_t	lens[] = { 62, 63, 64, 200, SPEC_PATH_MAX - 1 }, i;

	for (i = 0; i < sizeof lens / sizeof lens[0]; i++) {
		memset(path, 'k', lens[i]);
		memcpy(path, "/home/someone/", 14);
		path[lens[i]] = '\0';
		snprintf(text, sizeof text, "cluster: lab\nssh: {config: %s, "
		    "identity: %s, known_hosts: %s}\nnodes:\n"
		    "  - {name: a, host: h}\n", path, path, path);
		if (parse_cluster(text) != 0)
			spec_errors_print(stderr, &errs);
		assert_int_equal(errs.n, 0);
		assert_string_equal(cl.ssh.config, path);
		assert_string_equal(cl.ssh.identity, path);
		assert_string_equal(cl.ssh.known_hosts, path);
	}
	assert_int_equal(parse_cluster("cluster: lab\nssh: {known_hosts: "
	    "\"/home/someone/kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"
	    "kkkkkkkk\\e[2J\"}\nnodes: [{name: a, host: h}]\n"), -1);
	expect_error(2, 20, "holds control characters");
	assert_int_equal(errs.n, 1);
}

int
main(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test_teardown(t_defaults, reset),
		cmocka_unit_test_teardown(t_full, reset),
		cmocka_unit_test_teardown(t_prefixes, reset),
		cmocka_unit_test_teardown(t_unknown_key, reset),
		cmocka_unit_test_teardown(t_wrong_type, reset),
		cmocka_unit_test_teardown(t_ranges, reset),
		cmocka_unit_test_teardown(t_enums, reset),
		cmocka_unit_test_teardown(t_model_kinds, reset),
		cmocka_unit_test_teardown(t_gpt, reset),
		cmocka_unit_test_teardown(t_missing_name, reset),
		cmocka_unit_test_teardown(t_duplicate_key, reset),
		cmocka_unit_test_teardown(t_malformed_units, reset),
		cmocka_unit_test_teardown(t_micro, reset),
		cmocka_unit_test_teardown(t_strings, reset),
		cmocka_unit_test_teardown(t_not_yaml, reset),
		cmocka_unit_test_teardown(t_empty, reset),
		cmocka_unit_test_teardown(t_too_large, reset),
		cmocka_unit_test_teardown(t_tabs, reset),
		cmocka_unit_test_teardown(t_binary, reset),
		cmocka_unit_test_teardown(t_alias_bomb, reset),
		cmocka_unit_test_teardown(t_deep, reset),
		cmocka_unit_test_teardown(t_many_errors, reset),
		cmocka_unit_test_teardown(t_strict, reset),
		cmocka_unit_test_teardown(t_zero_overlap, reset),
		cmocka_unit_test_teardown(t_units, reset),
		cmocka_unit_test_teardown(t_print, reset),
		cmocka_unit_test_teardown(t_examples, reset),
		cmocka_unit_test_teardown(t_files, reset),
		cmocka_unit_test_teardown(t_cluster_default, reset),
		cmocka_unit_test_teardown(t_cluster, reset),
		cmocka_unit_test_teardown(t_cluster_sched, reset),
		cmocka_unit_test_teardown(t_cluster_errors, reset),
		cmocka_unit_test_teardown(t_cluster_ssh_paths, reset),
	};

	return cmocka_run_group_tests(t, NULL, NULL);
}
