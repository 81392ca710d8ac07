/*
 * cmd-sample.c: `hunter sample CKPT`, text from a gpt checkpoint: a file,
 * or a job's name for its newest checkpoint in the state directory.  The
 * model is built from the config.json beside the checkpoint (GPT-2's
 * fields), its weights loaded and checked as a resume loads them, and
 * tokens drawn one at a time: the context is the last n_positions tokens,
 * the logits at its last position are divided by the temperature, cut to
 * the top k, and a token is drawn from their softmax with a generator
 * seeded by --seed, so the same flags give the same text.  A byte-level
 * model (vocabulary 256) prints its bytes as text, line by line through
 * the sanitizer; a token model prints ids, or text with --tokenizer FILE
 * in llm.c's format (a header of 256 uint32: magic 20240328, version,
 * vocabulary size, ...; then each token's bytes behind a length byte).
 */
#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "lib/files.h"
#include "lib/rng.h"
#include "lib/statedir.h"
#include "lib/xmalloc.h"
#include "backend/worker/checkpoint.h"
#include "backend/worker/model.h"
#include "backend/worker/optimizer.h"
#include "tui/sanitize.h"
#include "cmd/cmd.h"

#define TOKENIZER_MAGIC	20240328

struct sample_opts {
	const char	*prompt, *tokenizer;
	int		 tokens, top_k;
	double		 temperature;
	uint64_t	 seed;
};

/* A tokenizer's byte strings, one a token. */
struct tokenizer {
	char	**text;
	int	 n;
};

/* The config's fields in spec_gpt_shape's order, and the job keys it
 * blames for them. */
static const char *const config_keys[] = { "n_layer", "n_head", "n_embd",
	"n_positions", "vocab_size" };
static const char *const spec_keys[] = { "model.layers", "model.heads",
	"model.channels", "model.context", "model.vocab" };

/*
 * The model of config.json beside ckpt, into job.  Every field must be
 * an integer within spec_gpt_shape's bounds, and the weights it
 * describes must fit in the checkpoint's size, before anything is
 * allocated: a config that is not the checkpoint's is refused with a
 * message, never an abort.
 */
static int
sample_config(const char *ckpt, struct job_spec *job)
{
	char		 path[4096], dir[4096], msg[256];
	long long	 v[5];
	const char	*bad;
	json_error_t	 je;
	struct stat	 st;
	json_t		*c, *f;
	size_t		 params;
	int		 rc = -1, fd;

	snprintf(dir, sizeof dir, "%s", ckpt);
	snprintf(path, sizeof path, "%s/config.json", dirname(dir));
	if ((fd = file_open_regular(path, 0, msg, sizeof msg)) < 0) {
		fprintf(stderr, "hunter sample: %s\n", msg);
		return -1;
	}
	c = json_loadfd(fd, 0, &je);
	close(fd);
	if (c == NULL) {
		fprintf(stderr, "hunter sample: %s: %s\n", path, je.text);
		return -1;
	}
	for (int i = 0; i < 5; i++) {
		f = json_object_get(c, config_keys[i]);
		if (!json_is_integer(f)) {
			fprintf(stderr, "hunter sample: %s: %s is %s, not an "
			    "integer (a GPT-2 config has n_layer, n_head, "
			    "n_embd, n_positions, vocab_size)\n", path,
			    config_keys[i], f == NULL ? "missing" :
			    "of another type");
			goto out;
		}
		v[i] = json_integer_value(f);
	}
	if ((bad = spec_gpt_shape(v[0], v[1], v[2], v[3], v[4], &params, msg,
	    sizeof msg)) != NULL) {
		for (int i = 0; i < 5; i++) {	/* the config's name for it */
			if (strcmp(bad, spec_keys[i]) == 0)
				bad = config_keys[i];
		}
		fprintf(stderr, "hunter sample: %s: %s: %s\n", path, bad, msg);
		goto out;
	}
	if (stat(ckpt, &st) != 0) {
		fprintf(stderr, "hunter sample: %s: %s\n", ckpt, strerror(errno));
		goto out;
	}
	if (params > (size_t)st.st_size / sizeof(float)) {
		fprintf(stderr, "hunter sample: %s describes %zu parameters "
		    "(%zu MiB of weights), more than %s holds (%lld bytes): it "
		    "is not this checkpoint's config\n", path, params,
		    params * sizeof(float) >> 20, ckpt, (long long)st.st_size);
		goto out;
	}
	spec_job_defaults(job);
	job->model.type = MODEL_GPT;
	job->train.optimizer.type = OPTIM_ADAMW;
	job->model.layers = (int)v[0];
	job->model.heads = (int)v[1];
	job->model.channels[0] = (int)v[2];
	job->model.n_channels = 1;
	job->model.context = (int)v[3];
	job->model.vocab = (int)v[4];
	rc = 0;
out:
	json_decref(c);
	return rc;
}

/* The checkpoint arg names: a file, or else, for a job's name, its
 * newest in the state directory (STATE/checkpoints/JOB/step-N.safetensors,
 * the highest N).  0, or -1 after saying why. */
static int
sample_find(const char *arg, char *path, size_t size)
{
	char		 state[PATH_MAX], dir[PATH_MAX + 80];
	long		 best = -1, n;
	struct dirent	*de;
	DIR		*d;
	char		*end;

	if (access(arg, F_OK) == 0 || strchr(arg, '/') != NULL ||
	    arg[0] == '.' || arg[0] == '\0') {
		snprintf(path, size, "%s", arg);
		return 0;
	}
	if (statedir_path(state, sizeof state) != 0) {
		fprintf(stderr, "hunter sample: %s: no such file, and no state "
		    "directory to look for a job of that name in\n", arg);
		return -1;
	}
	snprintf(dir, sizeof dir, "%s/checkpoints/%s", state, arg);
	if ((d = opendir(dir)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			if (strncmp(de->d_name, "step-", 5) != 0)
				continue;
			n = strtol(de->d_name + 5, &end, 10);
			if (end != de->d_name + 5 && strcmp(end,
			    ".safetensors") == 0 && n > best) {
				best = n;
				snprintf(path, size, "%s/%s", dir, de->d_name);
			}
		}
		closedir(d);
	}
	if (best < 0) {
		fprintf(stderr, "hunter sample: %s: no such file, and no "
		    "checkpoint of a job %s in %s (a job whose checkpoint.dir "
		    "is elsewhere: name its file)\n", arg, arg, dir);
		return -1;
	}
	fprintf(stderr, "hunter sample: the newest checkpoint of %s: %s\n",
	    arg, path);
	return 0;
}

/* The model of ckpt with its weights; NULL after saying why. */
static struct model *
sample_load(const char *ckpt, struct job_spec *job)
{
	static const enum spec_optim optims[] = { OPTIM_ADAMW, OPTIM_SGD };
	struct model	*m;
	struct ckpt_meta cm;
	char		 err[1024] = "";

	if (sample_config(ckpt, job) != 0)
		return NULL;
	m = model_create(job, job->model.context, 1, 1, job->model.vocab, 1,
	    job->train.seed);
	/* The optimizer state is in the file too; either kind will do. */
	for (size_t i = 0; m != NULL && i < 2; i++) {
		struct optimizer *o;
		int	 rc;

		job->train.optimizer.type = optims[i];
		o = optimizer_create(job, m->n_params);
		rc = checkpoint_load(ckpt, m, o, &cm, err, sizeof err);
		optimizer_free(o);
		if (rc == 0) {
			checkpoint_meta_free(&cm);
			return m;
		}
	}
	fprintf(stderr, "hunter sample: %s\n", err);
	model_free(m);
	return NULL;
}

static int
tokenizer_load(const char *path, int vocab, struct tokenizer *tk)
{
	uint32_t h[256];
	char	 err[PATH_MAX + 64];
	int	 fd = file_open_regular(path, 0, err, sizeof err);
	FILE	*f = fd >= 0 ? fdopen(fd, "rb") : NULL;

	memset(tk, 0, sizeof *tk);
	if (fd < 0) {
		fprintf(stderr, "hunter sample: %s\n", err);
		return -1;
	}
	if (f == NULL || fread(h, sizeof h, 1, f) != 1 ||
	    h[0] != TOKENIZER_MAGIC || h[2] > (uint32_t)vocab || h[2] == 0) {
		fprintf(stderr, "hunter sample: %s: %s\n", path, f == NULL ?
		    strerror(errno) : "not an llm.c tokenizer for this model "
		    "(magic 20240328, at most its vocabulary)");
		if (f != NULL)
			fclose(f);
		else
			close(fd);
		return -1;
	}
	tk->n = (int)h[2];
	tk->text = xcalloc((size_t)tk->n, sizeof *tk->text);
	for (int i = 0; i < tk->n; i++) {
		int	 len = fgetc(f);

		tk->text[i] = xcalloc(len > 0 ? (size_t)len + 1 : 1, 1);
		if (len < 0 || (len > 0 && fread(tk->text[i], 1, (size_t)len,
		    f) != (size_t)len)) {
			fprintf(stderr, "hunter sample: %s: cut short at token "
			    "%d\n", path, i);
			fclose(f);
			return -1;
		}
	}
	fclose(f);
	return 0;
}

/* Draw the next token from logits[V]. */
static int
sample_draw(const float *logits, int V, const struct sample_opts *o,
    struct rng *r, double *p)
{
	double	 max = -INFINITY, sum = 0, u, cut = -INFINITY;

	for (int v = 0; v < V; v++)
		max = fmax(max, logits[v]);
	/* top-k: the k-th largest logit is the cut (ties all stay). */
	if (o->top_k > 0 && o->top_k < V) {
		double	 hi = max;

		for (int k = 1; k < o->top_k; k++) {
			double next = -INFINITY;

			for (int v = 0; v < V; v++)
				if (logits[v] < hi && logits[v] > next)
					next = logits[v];
			hi = next;
		}
		cut = hi;
	}
	for (int v = 0; v < V; v++) {
		p[v] = logits[v] < cut ? 0 : exp((logits[v] - max) /
		    o->temperature);
		sum += p[v];
	}
	u = (double)rng_float(r) * sum;
	for (int v = 0; v < V; v++) {
		if ((u -= p[v]) < 0)
			return v;
	}
	return V - 1;
}

/* Print generated bytes as text, each line through the sanitizer. */
static void
sample_print_bytes(const int32_t *tok, int n)
{
	char	*line = xmalloc((size_t)n + 1), *out = xmalloc(4 * (size_t)n + 4);
	int	 len = 0;

	for (int i = 0; i <= n; i++) {
		if (i == n || tok[i] == '\n') {
			sanitize_n(out, 4 * (size_t)n + 4, line, (size_t)len);
			printf("%s%s", out, i < n ? "\n" : "");
			len = 0;
		} else
			line[len++] = (char)tok[i];
	}
	printf("\n");
	free(line);
	free(out);
}

static int
sample_run(struct model *m, const struct sample_opts *o,
    const struct tokenizer *tk)
{
	int	 T = m->in_c, V = m->classes, n = 0, total;
	int32_t	*tok, *ctx = xcalloc((size_t)T, sizeof *ctx);
	int32_t	*tgt = xmalloc((size_t)T * sizeof *tgt);
	double	*p = xmalloc((size_t)V * sizeof *p);
	struct rng r;
	size_t	 plen = strlen(o->prompt);

	total = (int)plen + o->tokens;
	tok = xcalloc((size_t)total + 1, sizeof *tok);
	for (size_t i = 0; i < plen; i++)
		tok[n++] = (uint8_t)o->prompt[i] % V;
	if (n == 0)
		tok[n++] = V > '\n' ? '\n' : 0;	/* a start */
	for (int t = 0; t < T; t++)
		tgt[t] = -1;			/* no loss wanted */
	rng_seed(&r, o->seed, 0x73616d70);
	while (n < total) {
		int	 len = n < T ? n : T;
		struct model_input in = { .tok = ctx, .tgt = tgt };

		/* Causal: what follows the context in the window does not
		 * reach its last position, so the rest stays zero. */
		memset(ctx, 0, (size_t)T * sizeof *ctx);
		memcpy(ctx, tok + n - len, (size_t)len * sizeof *ctx);
		model_forward(m, &in, 1, NULL);
		tok[n++] = sample_draw(m->layers[m->n_layers - 1].out +
		    (size_t)(len - 1) * V, V, o, &r, p);
	}
	if (V == 256)
		sample_print_bytes(tok, n);
	else if (tk->text != NULL) {
		char	 out[1024];

		for (int i = 0; i < n; i++) {
			sanitize(out, sizeof out, tok[i] < tk->n ?
			    tk->text[tok[i]] : "?");
			fputs(out, stdout);
		}
		printf("\n");
	} else {
		for (int i = 0; i < n; i++)
			printf("%d%c", tok[i], i + 1 < n ? ' ' : '\n');
	}
	free(tok);
	free(ctx);
	free(tgt);
	free(p);
	return 0;
}

static const struct cmd_option sample_options[] = {
	{ "prompt", 'p', "TEXT", "the text to continue (default: none)" },
	{ "tokens", 'n', "N", "tokens drawn after the prompt (default 200)" },
	{ "temperature", 't', "T", "divides the logits (default 1)" },
	{ "top-k", 'k', "K", "draw from the K likeliest tokens (default: all)" },
	{ "seed", 's', "S", "seeds the draws: the same flags give the same "
	    "text (default 1)" },
	{ "tokenizer", 'z', "FILE", "llm.c's tokenizer file: a token model "
	    "prints text instead of token ids" },
	{ NULL }
};

static int
cmd_sample(const struct cmd_args *a)
{
	struct sample_opts o = { .prompt = "", .tokens = 200, .top_k = 0,
	    .temperature = 1.0, .seed = 1 };
	struct tokenizer tk = { 0 };
	struct job_spec	 job;
	struct model	*m;
	long long	 tokens = o.tokens, top_k = 0, seed = 1;
	char		 ckpt[PATH_MAX + 400];
	int		 rc;

	if (cmd_get_long(a, "tokens", 0, 1000000, &tokens) != 0 ||
	    cmd_get_long(a, "top-k", 0, INT32_MAX, &top_k) != 0 ||
	    cmd_get_long(a, "seed", 0, INT64_MAX, &seed) != 0 ||
	    cmd_get_real(a, "temperature", 0, 1e6, &o.temperature) != 0)
		return 2;
	o.tokens = (int)tokens;
	o.top_k = (int)top_k;
	o.seed = (uint64_t)seed;
	if (cmd_has(a, "prompt"))
		o.prompt = cmd_get(a, "prompt");
	o.tokenizer = cmd_get(a, "tokenizer");
	if (sample_find(a->argv[0], ckpt, sizeof ckpt) != 0 ||
	    (m = sample_load(ckpt, &job)) == NULL)
		return 1;
	if (o.tokenizer != NULL &&
	    tokenizer_load(o.tokenizer, m->classes, &tk) != 0) {
		model_free(m);
		return 1;
	}
	rc = sample_run(m, &o, &tk);
	for (int i = 0; i < tk.n; i++)
		free(tk.text[i]);
	free(tk.text);
	model_free(m);
	return rc;
}

const struct cmd_entry cmd_sample_entry = {
	.name = "sample",
	.usage = "CHECKPOINT|JOB",
	.summary = "generate text from a gpt checkpoint (config.json beside "
	    "it), or from the newest of job JOB",
	.options = sample_options,
	.args_min = 1,
	.args_max = 1,
	.exec = cmd_sample,
};
