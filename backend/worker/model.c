/*
 * model.c: the layer engine behind every model type.  Builders append
 * layers; model_create then lays the parameters out in one buffer,
 * allocates activations for max_batch samples and initialises weights as
 * PyTorch does by default (uniform in +-1/sqrt(fan_in)), from the seed.
 * ReLU runs in place on its input's buffers.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/rng.h"
#include "lib/xmalloc.h"
#include "kernels/cpu/kernels.h"
#include "backend/worker/model.h"

extern const struct model_type model_mlp;
extern const struct model_type model_cnn;

static const struct model_type *model_types[] = {
	&model_mlp,
	&model_cnn,
};

const struct model_type *
model_type_find(enum spec_model kind)
{
	for (size_t i = 0; i < sizeof model_types / sizeof model_types[0]; i++) {
		if (model_types[i]->kind == kind)
			return model_types[i];
	}
	return NULL;
}

static struct layer *
model_push(struct model *m, enum layer_kind kind)
{
	struct layer	*l, *prev;

	m->layers = xreallocarray(m->layers, (size_t)m->n_layers + 1,
	    sizeof *m->layers);
	l = &m->layers[m->n_layers++];
	memset(l, 0, sizeof *l);
	l->kind = kind;
	if (m->n_layers == 1) {
		l->c = m->in_c;
		l->h = m->in_h;
		l->w = m->in_w;
	} else {
		prev = l - 1;
		l->c = prev->oc;
		l->h = prev->oh;
		l->w = prev->ow;
	}
	l->in_size = (size_t)l->c * l->h * l->w;
	return l;
}

static size_t
model_tensor(struct model *m, const char *name, const char *suffix, int ndim,
    const int *shape)
{
	struct tensor_info *t;
	size_t		 numel = 1;

	m->tensors = xreallocarray(m->tensors, (size_t)m->n_tensors + 1,
	    sizeof *m->tensors);
	t = &m->tensors[m->n_tensors++];
	snprintf(t->name, sizeof t->name, "%s.%s", name, suffix);
	t->ndim = ndim;
	for (int i = 0; i < ndim; i++) {
		t->shape[i] = shape[i];
		numel *= (size_t)shape[i];
	}
	t->offset = m->n_params;
	t->numel = numel;
	m->n_params += numel;
	return t->offset;
}

void
model_add_linear(struct model *m, int out, const char *name)
{
	struct layer	*l = model_push(m, LAYER_LINEAR);

	/* A linear layer sees its input flattened. */
	l->c = (int)l->in_size;
	l->h = l->w = 1;
	l->oc = out;
	l->oh = l->ow = 1;
	l->out_size = (size_t)out;
	l->w_off = model_tensor(m, name, "weight", 2, (int[]){ out, l->c });
	l->b_off = model_tensor(m, name, "bias", 1, (int[]){ out });
}

void
model_add_relu(struct model *m)
{
	struct layer	*l = model_push(m, LAYER_RELU);

	l->oc = l->c;
	l->oh = l->h;
	l->ow = l->w;
	l->out_size = l->in_size;
}

void
model_add_conv(struct model *m, int out_c, int k, int pad, const char *name)
{
	struct layer	*l = model_push(m, LAYER_CONV);
	size_t		 ws;

	l->k = k;
	l->pad = pad;
	l->oc = out_c;
	l->oh = l->h + 2 * pad - k + 1;
	l->ow = l->w + 2 * pad - k + 1;
	l->out_size = (size_t)l->oc * l->oh * l->ow;
	l->w_off = model_tensor(m, name, "weight", 4, (int[]){ out_c, l->c, k, k });
	l->b_off = model_tensor(m, name, "bias", 1, (int[]){ out_c });
	ws = conv2d_workspace(l->c, l->h, l->w, k, k, pad);
	if (ws > m->workspace_len)
		m->workspace_len = ws;
}

void
model_add_pool(struct model *m)
{
	struct layer	*l = model_push(m, LAYER_POOL);

	l->oc = l->c;
	l->oh = l->h / 2;
	l->ow = l->w / 2;
	l->out_size = (size_t)l->oc * l->oh * l->ow;
}

void
model_add_dense_head(struct model *m, const struct job_spec *job)
{
	char	 name[16];
	int	 i;

	for (i = 0; i < job->model.n_hidden; i++) {
		snprintf(name, sizeof name, "fc%d", i + 1);
		model_add_linear(m, job->model.hidden[i], name);
		model_add_relu(m);
	}
	snprintf(name, sizeof name, "fc%d", i + 1);
	model_add_linear(m, m->classes, name);
}

/* Allocate activations for max_batch; ReLU shares its input's buffers. */
static void
model_alloc_activations(struct model *m)
{
	size_t	 B = (size_t)m->max_batch;

	for (int i = 0; i < m->n_layers; i++) {
		struct layer *l = &m->layers[i];

		if (l->kind == LAYER_RELU && i > 0) {
			l->out = l[-1].out;
			l->dout = l[-1].dout;
			continue;
		}
		l->out = xmalloc_aligned(B * l->out_size * sizeof(float));
		l->dout = xmalloc_aligned(B * l->out_size * sizeof(float));
		if (l->kind == LAYER_POOL)
			l->argmax = xmalloc(B * l->out_size * sizeof(int32_t));
	}
	m->probs = xmalloc_aligned(B * (size_t)m->classes * sizeof(float));
}

static void
model_free_activations(struct model *m)
{
	for (int i = 0; i < m->n_layers; i++) {
		struct layer *l = &m->layers[i];

		if (l->kind == LAYER_RELU && i > 0)
			continue;
		free(l->out);
		free(l->dout);
		free(l->argmax);
		l->out = l->dout = NULL;
		l->argmax = NULL;
	}
	free(m->probs);
	m->probs = NULL;
}

static void
model_alloc(struct model *m)
{
	m->params = xmalloc_aligned(m->n_params * sizeof(float));
	m->grads = xmalloc_aligned((m->n_params + MODEL_GRAD_EXTRA) *
	    sizeof(float));
	memset(m->grads, 0, (m->n_params + MODEL_GRAD_EXTRA) * sizeof(float));
	if (m->workspace_len > 0)
		m->workspace = xmalloc_aligned(m->workspace_len * sizeof(float));
	model_alloc_activations(m);
}

void
model_set_max_batch(struct model *m, int max_batch)
{
	if (max_batch == m->max_batch)
		return;
	model_free_activations(m);
	m->max_batch = max_batch;
	model_alloc_activations(m);
}

/* Uniform in +-1/sqrt(fan_in) for weights and biases alike. */
static void
model_init(struct model *m, uint64_t seed)
{
	struct rng	 r;

	rng_seed(&r, seed, 1);
	for (int i = 0; i < m->n_layers; i++) {
		struct layer	*l = &m->layers[i];
		size_t		 fan_in, nw;
		float		 bound;

		if (l->kind != LAYER_LINEAR && l->kind != LAYER_CONV)
			continue;
		fan_in = l->kind == LAYER_LINEAR ? (size_t)l->c :
		    (size_t)l->c * l->k * l->k;
		nw = fan_in * (size_t)l->oc;
		bound = 1.0f / sqrtf((float)fan_in);
		for (size_t j = 0; j < nw; j++)
			m->params[l->w_off + j] = (2.0f * rng_float(&r) - 1.0f) * bound;
		for (int j = 0; j < l->oc; j++)
			m->params[l->b_off + j] = (2.0f * rng_float(&r) - 1.0f) * bound;
	}
}

struct model *
model_create(const struct job_spec *job, int c, int h, int w, int classes,
    int max_batch, uint64_t seed)
{
	const struct model_type *type = model_type_find(job->model.type);
	struct model	*m;

	if (type == NULL)
		return NULL;
	m = xcalloc(1, sizeof *m);
	m->type = type;
	m->in_c = c;
	m->in_h = h;
	m->in_w = w;
	m->classes = classes;
	m->max_batch = max_batch;
	type->build(m, job);
	model_alloc(m);
	model_init(m, seed);
	return m;
}

void
model_free(struct model *m)
{
	if (m == NULL)
		return;
	model_free_activations(m);
	free(m->layers);
	free(m->tensors);
	free(m->params);
	free(m->grads);
	free(m->workspace);
	free(m);
}

double
model_forward(struct model *m, const float *x, const uint8_t *y, int B,
    int *correct)
{
	const float	*in = x;
	const float	*p = m->params;
	struct layer	*last = &m->layers[m->n_layers - 1];

	for (int i = 0; i < m->n_layers; i++) {
		struct layer *l = &m->layers[i];

		switch (l->kind) {
		case LAYER_LINEAR:
			linear_forward(l->out, in, p + l->w_off, p + l->b_off,
			    B, l->c, l->oc);
			break;
		case LAYER_RELU:
			relu_forward(l->out, in, (size_t)B * l->out_size);
			break;
		case LAYER_CONV:
			conv2d_forward(l->out, in, p + l->w_off, p + l->b_off,
			    m->workspace, B, l->c, l->h, l->w, l->oc, l->k,
			    l->k, l->pad);
			break;
		case LAYER_POOL:
			maxpool2_forward(l->out, l->argmax, in, B, l->c, l->h,
			    l->w);
			break;
		}
		in = l->out;
	}
	if (correct != NULL)
		*correct += argmax_correct(last->out, y, B, m->classes);
	return softmax_xent_forward(m->probs, last->out, y, B, m->classes);
}

void
model_backward(struct model *m, const float *x, const uint8_t *y, int B,
    float scale)
{
	const float	*p = m->params;
	float		*g = m->grads;
	struct layer	*last = &m->layers[m->n_layers - 1];

	softmax_xent_backward(last->dout, m->probs, y, B, m->classes, scale);
	for (int i = m->n_layers - 1; i >= 0; i--) {
		struct layer	*l = &m->layers[i];
		const float	*in = i == 0 ? x : l[-1].out;
		float		*din = i == 0 ? NULL : l[-1].dout;

		switch (l->kind) {
		case LAYER_LINEAR:
			linear_backward(din, g + l->w_off, g + l->b_off, l->dout,
			    in, p + l->w_off, B, l->c, l->oc);
			break;
		case LAYER_RELU:
			if (din != NULL)
				relu_backward(din, l->dout, l->out,
				    (size_t)B * l->out_size);
			break;
		case LAYER_CONV:
			conv2d_backward(din, g + l->w_off, g + l->b_off, l->dout,
			    in, p + l->w_off, m->workspace, B, l->c, l->h, l->w,
			    l->oc, l->k, l->k, l->pad);
			break;
		case LAYER_POOL:
			if (din != NULL)
				maxpool2_backward(din, l->dout, l->argmax, B,
				    l->c, l->h, l->w);
			break;
		}
	}
}

int
model_evaluate(struct model *m, const float *x, const uint8_t *y, int n,
    double *loss)
{
	size_t	 pix = (size_t)m->in_c * m->in_h * m->in_w;
	int	 correct = 0;

	for (int off = 0; off < n; off += m->max_batch) {
		int B = n - off < m->max_batch ? n - off : m->max_batch;

		*loss += model_forward(m, x + (size_t)off * pix, y + off, B,
		    &correct);
	}
	return correct;
}

size_t
model_tracked_bytes(const struct model *m, int B)
{
	size_t	 bytes = 2 * m->n_params * sizeof(float);

	for (int i = 0; i < m->n_layers; i++) {
		const struct layer *l = &m->layers[i];

		if (l->kind == LAYER_RELU)
			continue;
		bytes += 2 * (size_t)B * l->out_size * sizeof(float);
		if (l->kind == LAYER_POOL)
			bytes += (size_t)B * l->out_size * sizeof(int32_t);
	}
	bytes += (size_t)B * m->classes * sizeof(float);
	bytes += m->workspace_len * sizeof(float);
	return bytes;
}
