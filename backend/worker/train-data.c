/*
 * train-data.c: the data of a job as the train loop sees it (data.format):
 * Fashion-MNIST images with a test set for accuracy, or tokens (llm.c
 * shards, or text as bytes) with a validation part for the loss per
 * token.  It opens the data, sizes the model to it (images: 1 x 28 x 28
 * to 10 classes; tokens: the context to the vocabulary), points the
 * loader at it, gives the autotuner its probe samples, and evaluates.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "lib/errf.h"
#include "lib/files.h"
#include "lib/xmalloc.h"
#include "backend/worker/train-internal.h"

/* Validation windows a token evaluation reads at the most, spread evenly
 * over the validation part: enough for a loss to 1% at these sizes,
 * few enough that evaluating every few hundred steps costs little. */
#define EVAL_WINDOWS	32

/* The worker's log gets the files a text corpus skipped. */
static void
train_data_note(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "data: %s\n", msg);
}

static int
train_data_tokens(struct trainer *t, char *err, size_t errlen)
{
	const struct job_spec *job = t->job;
	int	 vocab = spec_vocab(job);
	int	 T = job->model.context;
	uint64_t windows;

	if (job->data.format == FORMAT_TOKENS) {
		if (tokens_open_shards(&t->corpus, job->data.train,
		    job->data.val, vocab, err, errlen) != 0)
			return -1;
	} else if (tokens_open_text(&t->corpus, job->data.path[0] != '\0' ?
	    job->data.path : SPEC_TEXT_DEFAULT, train_data_note, NULL, err,
	    errlen) != 0)
		return -1;
	windows = tokens_windows(&t->corpus.train, T);
	t->T = T;
	t->steps_per_epoch = (long)(t->corpus.train.ntokens /
	    ((size_t)job->train.batch.global * T));
	if (windows == 0 || t->steps_per_epoch == 0) {
		errf(err, errlen, "the training data has %zu tokens, fewer "
		    "than one global batch of %d windows of %d",
		    t->corpus.train.ntokens, job->train.batch.global, T);
		return -1;
	}
	if (tokens_windows(&t->corpus.val, T) == 0) {
		errf(err, errlen, "the validation data (%zu tokens) holds no "
		    "window of %d + 1 tokens", t->corpus.val.ntokens, T);
		return -1;
	}
	return 0;
}

int
train_data_open(struct trainer *t, char *err, size_t errlen)
{
	const struct job_spec *job = t->job;

	if (job->data.format != FORMAT_IMAGES)
		return train_data_tokens(t, err, errlen);
	if (data_load_fmnist(job->data.path, 1, &t->train, err, errlen) != 0 ||
	    data_load_fmnist(job->data.path, 0, &t->test, err, errlen) != 0)
		return -1;
	if (t->train.n < job->train.batch.global) {
		errf(err, errlen, "the training set has %d samples, fewer "
		    "than one global batch of %d", t->train.n,
		    job->train.batch.global);
		return -1;
	}
	t->steps_per_epoch = t->train.n / job->train.batch.global;
	return 0;
}

void
train_data_close(struct trainer *t)
{
	data_free(&t->train);
	data_free(&t->test);
	tokens_close(&t->corpus);
	free(t->probe_tok);
}

long long
train_data_samples(const struct trainer *t)
{
	return t->T > 0 ? (long long)t->corpus.train.ntokens : t->train.n;
}

long
train_epoch_samples(const struct trainer *t)
{
	return t->T > 0 ? (long)(t->corpus.train.ntokens / (size_t)t->T) :
	    t->train.n;
}

struct model *
train_data_model(struct trainer *t, int max_batch)
{
	if (t->T > 0)
		return model_create(t->job, t->T, 1, 1, t->corpus.vocab,
		    max_batch, t->job->train.seed);
	return model_create(t->job, 1, t->train.rows, t->train.cols, 10,
	    max_batch, t->job->train.seed);
}

void
train_data_source(const struct trainer *t, struct loader_source *src)
{
	memset(src, 0, sizeof *src);
	src->steps_per_epoch = t->steps_per_epoch;
	src->skew = t->skew;
	src->first_steps = t->epoch_steps;
	if (t->T > 0) {
		src->tokens = &t->corpus.train;
		src->T = t->T;
	} else
		src->images = &t->train;
}

/* The first n samples of the training data, for the autotuner's trials:
 * images as they are, token windows copied out once. */
const struct model_input *
train_data_probe(struct trainer *t, int n)
{
	int32_t	*w;
	int	 T = t->T;

	if (T == 0) {
		t->probe = (struct model_input){ .x = t->train.x,
		    .y = t->train.y };
		return &t->probe;
	}
	free(t->probe_tok);
	t->probe_tok = xmalloc(2 * (size_t)n * T * sizeof *t->probe_tok);
	w = xmalloc(((size_t)T + 1) * sizeof *w);
	for (int i = 0; i < n; i++) {
		tokens_window(&t->corpus.train, (uint64_t)i %
		    tokens_windows(&t->corpus.train, T), T, w);
		memcpy(t->probe_tok + (size_t)i * T, w, (size_t)T * sizeof *w);
		memcpy(t->probe_tok + ((size_t)n + i) * T, w + 1,
		    (size_t)T * sizeof *w);
	}
	free(w);
	t->probe = (struct model_input){ .tok = t->probe_tok,
	    .tgt = t->probe_tok + (size_t)n * T };
	return &t->probe;
}

/* Images: accuracy and mean loss over the test set. */
static void
train_data_eval_images(struct trainer *t, struct train_eval *e)
{
	struct model_input in = { .x = t->test.x, .y = t->test.y };
	double	 loss = 0;
	int	 correct = model_evaluate(t->model, &in, t->test.n, &loss);

	e->acc = (double)correct / t->test.n;
	e->loss = loss / t->test.n;
	e->has_acc = 1;
}

/* Tokens: the mean loss a token (nats) over EVAL_WINDOWS windows spread
 * evenly over the validation part; the same windows every time. */
static void
train_data_eval_tokens(struct trainer *t, struct train_eval *e)
{
	int	 T = t->T, B = t->model->max_batch;
	uint64_t nw = tokens_windows(&t->corpus.val, T);
	int	 k = nw < EVAL_WINDOWS ? (int)nw : EVAL_WINDOWS;
	int32_t	*buf = xmalloc(2 * (size_t)B * T * sizeof *buf);
	int32_t	*w = xmalloc(((size_t)T + 1) * sizeof *w);
	double	 loss = 0;

	for (int off = 0; off < k; off += B) {
		int	 n = k - off < B ? k - off : B;
		struct model_input in = { .tok = buf, .tgt = buf +
		    (size_t)B * T };

		for (int i = 0; i < n; i++) {
			tokens_window(&t->corpus.val, (uint64_t)(off + i) *
			    nw / (uint64_t)k, T, w);
			memcpy(buf + (size_t)i * T, w, (size_t)T * sizeof *w);
			memcpy(buf + ((size_t)B + i) * T, w + 1,
			    (size_t)T * sizeof *w);
		}
		/* A batch of n: the targets follow at B * T, so a short
		 * last batch keeps its layout. */
		loss += model_forward(t->model, &in, n, NULL);
	}
	free(buf);
	free(w);
	e->loss = loss / ((double)k * T);
	e->has_acc = 0;
}

void
train_data_eval(struct trainer *t, struct train_eval *e)
{
	memset(e, 0, sizeof *e);
	if (t->T > 0)
		train_data_eval_tokens(t, e);
	else
		train_data_eval_images(t, e);
}

/*
 * Beside a token model's checkpoints, config.json with the fields of a
 * GPT-2 config (n_layer, n_head, n_embd, n_positions, vocab_size), so
 * that the PyTorch ecosystem builds the model the tensors fit.  Written
 * once a run, through a temporary file and a rename.  The directory may
 * be shared (checkpoint.dir), so the temporary file is one nobody can
 * guess or plant a link under (lib/files.h), as the checkpoints' are.
 * 0, or -1 with err.
 */
int
train_data_config(struct trainer *t, const char *dir, char *err,
    size_t errlen)
{
	const struct job_spec *job = t->job;
	char	 path[4096], tmp[4096];
	json_t	*c;
	int	 rc, fd;

	if (t->T == 0 || t->config_written)
		return 0;
	c = json_pack("{s:s, s:[s], s:i, s:i, s:i, s:i, s:i, s:i, s:s, s:f, "
	    "s:b}", "model_type", "gpt2", "architectures", "GPT2LMHeadModel",
	    "n_layer", job->model.layers, "n_head", job->model.heads,
	    "n_embd", job->model.channels[0], "n_positions", t->T,
	    "n_ctx", t->T, "vocab_size", t->corpus.vocab,
	    "activation_function", "gelu_new", "layer_norm_epsilon", 1e-5,
	    "tie_word_embeddings", 1);
	if (c == NULL) {
		errf(err, errlen, "config.json: cannot build it");
		return -1;
	}
	snprintf(path, sizeof path, "%s/config.json", dir);
	if ((fd = file_tmp_open(dir, ".config.json", 0600, tmp,
	    sizeof tmp)) < 0) {
		errf(err, errlen, "%s: a temporary file in %s: %s", path, dir,
		    strerror(errno));
		json_decref(c);
		return -1;
	}
	rc = json_dumpfd(c, fd, JSON_INDENT(2) | JSON_SORT_KEYS);
	json_decref(c);
	if (rc != 0 || write(fd, "\n", 1) != 1) {
		errf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		unlink(tmp);
		return -1;
	}
	if (file_tmp_commit(fd, tmp, path, 1) != 0) {
		errf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	t->config_written = 1;
	return 0;
}
