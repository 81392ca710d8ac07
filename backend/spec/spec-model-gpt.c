/*
 * spec-model-gpt.c: the GPT-2 transformer as a job names it: layers (4),
 * heads (4), channels (one number, the width: 256), context (tokens a
 * window: 128) and vocab (0: the data's; 256 for text).  It trains on
 * token shards or text, with GPT-2's own practice by default: AdamW at
 * betas (0.9, 0.95), weight decay 0.1 (not on biases, LayerNorm and the
 * embeddings: the model marks those), gradients clipped to a global norm
 * of 1, learning rate 3e-4 with a cosine decay.  cuda runs it.
 */
#include "config.h"

#include <stdio.h>

#include "backend/spec/spec.h"

static const char *const gpt_keys[] = { "layers", "heads", "channels",
	"context", "vocab", NULL };

static void
gpt_defaults(struct job_spec *j)
{
	j->model.channels[0] = 256;
	j->model.n_channels = 1;
	j->model.n_hidden = 0;
	j->data.format = FORMAT_TEXT;
	j->train.optimizer.type = OPTIM_ADAMW;
	j->train.optimizer.beta2 = 0.95;
	j->train.optimizer.weight_decay = 0.1;
	j->train.lr.base = 3e-4;
	j->train.grad_clip = 1.0;
	j->train.batch.global = 32;
}

/* size_t a * b + c, or 0 when it overflows. */
static size_t
gpt_muladd(size_t a, size_t b, size_t c)
{
	size_t	 r;

	if (__builtin_mul_overflow(a, b, &r) || __builtin_add_overflow(r, c, &r))
		return 0;
	return r;
}

const char *
spec_gpt_shape(long long layers, long long heads, long long channels,
    long long context, long long vocab, size_t *params, char *msg,
    size_t len)
{
	static const struct {
		const char	*key;
		long long	 max;
	} bound[] = {
		{ "model.layers", GPT_MAX_LAYERS },
		{ "model.heads", GPT_MAX_CHANNELS },
		{ "model.channels", GPT_MAX_CHANNELS },
		{ "model.context", GPT_MAX_CONTEXT },
		{ "model.vocab", GPT_MAX_VOCAB },
	};
	const long long	 v[] = { layers, heads, channels, context, vocab };
	size_t		 C = (size_t)channels, block, n;

	for (size_t i = 0; i < sizeof bound / sizeof bound[0]; i++) {
		if (v[i] < 1 || v[i] > bound[i].max) {
			snprintf(msg, len, "%lld is outside 1..%lld", v[i],
			    bound[i].max);
			return bound[i].key;
		}
	}
	if (channels % heads != 0) {
		snprintf(msg, len, "%lld channels do not divide into %lld heads",
		    channels, heads);
		return "model.heads";
	}
	/* V C + T C + L (12 C^2 + 13 C) + 2 C, checked at each step (the
	 * bounds keep it far from SIZE_MAX, but the builders trust it). */
	block = gpt_muladd(gpt_muladd(12, C, 13), C, 0);
	n = gpt_muladd((size_t)vocab + (size_t)context, C, 2 * C);
	if (block == 0 || n == 0 || (n = gpt_muladd((size_t)layers, block,
	    n)) == 0 || n > SIZE_MAX / 16) {
		snprintf(msg, len, "the parameters do not fit in memory");
		return "model.channels";
	}
	if (params != NULL)
		*params = n;
	return NULL;
}

static const char *
gpt_check(const struct job_spec *j, char *msg, size_t len)
{
	int		 C = j->model.channels[0];
	const char	*key;

	if (j->model.n_channels != 1) {
		snprintf(msg, len, "a gpt has one width: channels: [%d] or "
		    "channels: %d, not a list of %d", C, C, j->model.n_channels);
		return "model.channels";
	}
	/* The builders size the layers in int (4 C, T C): bounded here. */
	if ((key = spec_gpt_shape(j->model.layers, j->model.heads, C,
	    j->model.context, spec_vocab(j), NULL, msg, len)) != NULL)
		return key;
	if (j->data.format == FORMAT_TEXT && j->model.vocab != 0 &&
	    j->model.vocab != 256) {
		snprintf(msg, len, "text is bytes: its vocabulary is 256, not "
		    "%d (leave vocab out)", j->model.vocab);
		return "model.vocab";
	}
	if (j->data.format == FORMAT_TOKENS && j->data.train[0] == '\0') {
		snprintf(msg, len, "format tokens needs data.train, a glob of "
		    "token shards");
		return "data.format";
	}
	return NULL;
}

int
spec_vocab(const struct job_spec *j)
{
	if (j->model.vocab > 0)
		return j->model.vocab;
	return j->data.format == FORMAT_TEXT ? 256 : 50257;
}

/*
 * Per window of T tokens: 6 N a token for the matmuls of N parameters
 * (2 forward, 4 backward), and 12 L T C for attention's two T x T
 * products a layer, as MFU is usually counted (the PaLM paper's way).
 */
static double
gpt_flops(const struct job_spec *j)
{
	double	 L = j->model.layers, C = j->model.channels[0];
	double	 T = j->model.context, V = spec_vocab(j);
	double	 n = V * C + T * C + L * (12 * C * C + 13 * C) + 2 * C;

	return T * (6 * n + 12 * L * T * C);
}

const struct spec_model_kind spec_model_gpt = {
	.name = "gpt",
	.keys = gpt_keys,
	.formats = 1u << FORMAT_TOKENS | 1u << FORMAT_TEXT,
	.defaults = gpt_defaults,
	.cuda = true,
	.check = gpt_check,
	.flops_per_sample = gpt_flops,
};
