/*
 * model.c: the layer engine behind every model kind.  Builders append
 * layers (layer.h); model_create then wires them (which layer may work in
 * place, which input gradients add), lays the parameters out in one
 * buffer, allocates activations for max_batch samples and lets each layer
 * initialise its tensors, in layer order, from the seed.  The passes call
 * each layer's type; the loss (model.h, enum model_loss) follows the last
 * layer.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "lib/pool.h"
#include "lib/rng.h"
#include "lib/xmalloc.h"
#include "kernels/cpu/kernels.h"
#include "kernels/cpu/transformer.h"
#include "backend/worker/model.h"

extern const struct model_type model_mlp;
extern const struct model_type model_cnn;
extern const struct model_type model_gpt;

/* The builders, indexed by the spec's model kind. */
static const struct model_type *const model_types[] = {
	[MODEL_MLP] = &model_mlp,
	[MODEL_CNN] = &model_cnn,
	[MODEL_GPT] = &model_gpt,
};

static const struct model_type *
model_type_find(enum spec_model kind)
{
	if ((unsigned)kind >= sizeof model_types / sizeof model_types[0])
		return NULL;
	return model_types[kind];
}

size_t
model_param(struct model *m, const struct layer *l, const char *suffix,
    int ndim, const int *shape)
{
	struct tensor_info *t;
	size_t		 numel = 1;

	m->tensors = xreallocarray(m->tensors, (size_t)m->n_tensors + 1,
	    sizeof *m->tensors);
	t = &m->tensors[m->n_tensors++];
	memset(t, 0, sizeof *t);
	/* A layer without a name gives its tensors whole names (GPT-2's
	 * wte.weight and wpe.weight). */
	if (l->name[0] == '\0')
		snprintf(t->name, sizeof t->name, "%s", suffix);
	else
		snprintf(t->name, sizeof t->name, "%s.%s", l->name, suffix);
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
layer_same_shape(struct layer *l)
{
	memcpy(l->out_dim, l->in_dim, sizeof l->out_dim);
	l->out_size = l->in_size;
}

void
model_need_workspace(struct model *m, size_t n)
{
	if (n > m->workspace_len)
		m->workspace_len = n;
}

void
layer_init_uniform(float *p, size_t n, size_t fan_in, struct rng *r)
{
	float	 bound = 1.0f / sqrtf((float)fan_in);

	for (size_t j = 0; j < n; j++)
		p[j] = (2.0f * rng_float(r) - 1.0f) * bound;
}

void
layer_init_normal(float *p, size_t n, float std, struct rng *r)
{
	for (size_t j = 0; j < n; j++)
		p[j] = std * rng_gauss(r);
}

void
layer_din_begin(const struct layer *l, const struct layer_io *io, int j,
    size_t n)
{
	if (io->din[j] != NULL && !(l->din_add & (1u << j)))
		memset(io->din[j], 0, (size_t)io->B * n * sizeof(float));
}

const struct tensor_info *
model_tensor(const struct model *m, const char *name)
{
	for (int i = 0; i < m->n_tensors; i++) {
		if (strcmp(m->tensors[i].name, name) == 0)
			return &m->tensors[i];
	}
	return NULL;
}

int
model_add(struct model *m, const struct layer_type *type, const char *name,
    const struct layer_args *args)
{
	struct layer	*l;
	int		 idx = m->n_layers;

	m->layers = xreallocarray(m->layers, (size_t)idx + 1,
	    sizeof *m->layers);
	l = &m->layers[idx];
	memset(l, 0, sizeof *l);
	l->type = type;
	snprintf(l->name, sizeof l->name, "%s", name != NULL ? name : "");
	if (args != NULL)
		l->args = *args;
	l->n_src = 1;
	l->src[0] = idx - 1;
	if (l->args.n_src > 0) {
		l->n_src = l->args.n_src;
		memcpy(l->src, l->args.src, sizeof l->src);
	}
	/* A builder's mistake, not the user's. */
	for (int j = 0; j < l->n_src; j++) {
		if (l->n_src > LAYER_MAX_IN || l->src[j] < -1 ||
		    l->src[j] >= idx) {
			fprintf(stderr, "model: layer %d (%s) reads layer %d\n",
			    idx + 1, type->name, l->src[j] + 1);
			abort();
		}
	}
	if (l->src[0] < 0) {
		l->in_dim[0] = m->in_c;
		l->in_dim[1] = m->in_h;
		l->in_dim[2] = m->in_w;
	} else
		memcpy(l->in_dim, m->layers[l->src[0]].out_dim, sizeof l->in_dim);
	l->in_size = 1;
	for (int d = 0; d < LAYER_DIMS; d++)
		l->in_size *= (size_t)l->in_dim[d];
	m->n_layers++;
	l->param_lo = m->n_params;
	type->setup(m, l);
	return idx;
}

void
model_add_dense_head(struct model *m, const struct job_spec *job)
{
	char	 name[16];
	int	 i;

	for (i = 0; i < job->model.n_hidden; i++) {
		snprintf(name, sizeof name, "fc%d", i + 1);
		model_add(m, &layer_linear, name,
		    &(struct layer_args){ .out = job->model.hidden[i] });
		model_add(m, &layer_relu, NULL, NULL);
	}
	snprintf(name, sizeof name, "fc%d", i + 1);
	model_add(m, &layer_linear, name,
	    &(struct layer_args){ .out = m->classes });
}

/*
 * Once every layer is in: a layer that may work in place does so when it
 * is the only reader of its input, and the gradient of an activation
 * with several readers is written by the last of them (the first to run
 * backward) and added to by the others.
 */
static void
model_wire(struct model *m)
{
	int	*seen = xcalloc((size_t)m->n_layers, sizeof *seen);

	for (int i = 0; i < m->n_layers; i++) {
		for (int j = 0; j < m->layers[i].n_src; j++)
			if (m->layers[i].src[j] >= 0)
				seen[m->layers[i].src[j]]++;
	}
	m->pooled = m->n_layers > 0;
	for (int i = 0; i < m->n_layers; i++) {
		struct layer *l = &m->layers[i];

		l->inplace = l->type->inplace && l->src[0] >= 0 &&
		    seen[l->src[0]] == 1;
		m->pooled &= l->type->pooled;
	}
	memset(seen, 0, (size_t)m->n_layers * sizeof *seen);
	for (int i = m->n_layers - 1; i >= 0; i--) {
		struct layer *l = &m->layers[i];

		for (int j = 0; j < l->n_src; j++) {
			if (l->src[j] < 0)
				continue;
			if (seen[l->src[j]]++)
				l->din_add |= 1u << j;
		}
	}
	free(seen);
}

static void
model_alloc_activations(struct model *m)
{
	size_t	 B = (size_t)m->max_batch;

	for (int i = 0; i < m->n_layers; i++) {
		struct layer *l = &m->layers[i];

		if (l->aux_bytes > 0)
			l->aux = xmalloc(B * l->aux_bytes);
		if (l->inplace) {
			l->out = m->layers[l->src[0]].out;
			l->dout = m->layers[l->src[0]].dout;
			continue;
		}
		l->out = xmalloc_aligned(B * l->out_size * sizeof(float));
		/* The token loss writes its gradient over the logits. */
		if (m->loss == MODEL_LOSS_TOKENS && i == m->n_layers - 1)
			l->dout = l->out;
		else
			l->dout = xmalloc_aligned(B * l->out_size *
			    sizeof(float));
	}
	if (m->loss == MODEL_LOSS_CLASSES)
		m->probs = xmalloc_aligned(B * (size_t)m->classes *
		    sizeof(float));
}

static void
model_free_activations(struct model *m)
{
	for (int i = 0; i < m->n_layers; i++) {
		struct layer *l = &m->layers[i];

		free(l->aux);
		l->aux = NULL;
		if (!l->inplace) {
			if (l->dout != l->out)
				free(l->dout);
			free(l->out);
		}
		l->out = l->dout = NULL;
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

struct model *
model_create(const struct job_spec *job, int c, int h, int w, int classes,
    int max_batch, uint64_t seed)
{
	const struct model_type *type = model_type_find(job->model.type);

	return type != NULL ? model_build(type, job, c, h, w, classes,
	    max_batch, seed) : NULL;
}

struct model *
model_build(const struct model_type *type, const struct job_spec *job,
    int c, int h, int w, int classes, int max_batch, uint64_t seed)
{
	struct model	*m;
	struct rng	 r;

	if (spec_model_kind(job->model.type) == NULL)
		return NULL;
	m = xcalloc(1, sizeof *m);
	m->type = spec_model_kind(job->model.type);
	m->in_c = c;
	m->in_h = h;
	m->in_w = w;
	m->classes = classes;
	m->max_batch = max_batch;
	/* Before the layers: their scratch may be a thread's. */
	m->pool = pool_get(openblas_get_num_threads());
	type->build(m, job);
	model_wire(m);
	/* A model whose layers do not run on it needs no threads. */
	if (!m->pooled) {
		pool_put(m->pool);
		m->pool = NULL;
	}
	model_alloc(m);
	rng_seed(&r, seed, 1);
	for (int i = 0; i < m->n_layers; i++) {
		if (m->layers[i].type->init != NULL)
			m->layers[i].type->init(&m->layers[i], m->params, &r);
	}
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
	pool_put(m->pool);
	free(m);
}

/* The host buffers of layer l for B samples of input in. */
static void
model_io(struct model *m, const struct layer *l,
    const struct model_input *in, int B, struct layer_io *io)
{
	memset(io, 0, sizeof *io);
	io->params = m->params;
	io->grads = m->grads;
	io->tok = in->tok;
	io->out = l->out;
	io->dout = l->dout;
	io->aux = l->aux;
	io->workspace = m->workspace;
	io->pool = m->pool;
	io->B = B;
	for (int j = 0; j < l->n_src; j++) {
		const struct layer *s = l->src[j] < 0 ? NULL :
		    &m->layers[l->src[j]];

		io->in[j] = s != NULL ? s->out : in->x;
		io->din[j] = s != NULL ? s->dout : NULL;
	}
}

/* Hold OpenBLAS at one thread for a pass of a pooled model on a pool
 * of more; the count to give back to model_blas_release, or 0. */
static int
model_blas_hold(const struct model *m)
{
	int	 n;

	if (!m->pooled || pool_threads(m->pool) < 2 ||
	    (n = openblas_get_num_threads()) < 2)
		return 0;
	openblas_set_num_threads(1);
	return n;
}

static void
model_blas_release(int n)
{
	if (n > 0)
		openblas_set_num_threads(n);
}

double
model_forward(struct model *m, const struct model_input *in, int B,
    int *correct)
{
	struct layer	*last = &m->layers[m->n_layers - 1];
	struct layer_io	 io;
	double		 loss;
	int		 held = model_blas_hold(m);

	for (int i = 0; i < m->n_layers; i++) {
		model_io(m, &m->layers[i], in, B, &io);
		m->layers[i].type->forward(&m->layers[i], &io);
	}
	if (m->loss == MODEL_LOSS_TOKENS) {
		loss = vocab_xent(m->pool, last->out, in->tgt, B * m->in_c,
		    m->classes, 0);
		model_blas_release(held);
		return loss;
	}
	model_blas_release(held);
	if (correct != NULL)
		*correct += argmax_correct(last->out, in->y, B, m->classes);
	return softmax_xent_forward(m->probs, last->out, in->y, B, m->classes);
}

void
model_backward(struct model *m, const struct model_input *in, int B,
    float scale)
{
	struct layer	*last = &m->layers[m->n_layers - 1];
	struct layer_io	 io;
	int		 held = model_blas_hold(m);

	if (m->loss == MODEL_LOSS_TOKENS)
		(void)vocab_xent(m->pool, last->out, in->tgt, B * m->in_c,
		    m->classes, scale);
	else
		softmax_xent_backward(last->dout, m->probs, in->y, B,
		    m->classes, scale);
	for (int i = m->n_layers - 1; i >= 0; i--) {
		model_io(m, &m->layers[i], in, B, &io);
		m->layers[i].type->backward(&m->layers[i], &io);
		if (m->on_backward != NULL)
			m->on_backward(m->on_backward_ctx, i);
	}
	model_blas_release(held);
}

struct model_input
model_input_at(const struct model *m, const struct model_input *in, int off)
{
	size_t	 pix = (size_t)m->in_c * m->in_h * m->in_w;
	struct model_input at = { 0 };

	if (m->loss == MODEL_LOSS_TOKENS) {
		at.tok = in->tok + (size_t)off * m->in_c;
		at.tgt = in->tgt + (size_t)off * m->in_c;
	} else {
		at.x = in->x + (size_t)off * pix;
		at.y = in->y + off;
	}
	return at;
}

int
model_evaluate(struct model *m, const struct model_input *in, int n,
    double *loss)
{
	int	 correct = 0;

	for (int off = 0; off < n; off += m->max_batch) {
		int	 B = n - off < m->max_batch ? n - off : m->max_batch;
		struct model_input at = model_input_at(m, in, off);

		*loss += model_forward(m, &at, B, &correct);
	}
	return correct;
}

size_t
model_tracked_bytes(const struct model *m, int B)
{
	size_t	 bytes = 2 * m->n_params * sizeof(float);

	for (int i = 0; i < m->n_layers; i++) {
		const struct layer *l = &m->layers[i];

		bytes += (size_t)B * l->aux_bytes;
		if (!l->inplace)
			bytes += (l->dout == l->out ? 1 : 2) * (size_t)B *
			    l->out_size * sizeof(float);
	}
	if (m->probs != NULL)
		bytes += (size_t)B * m->classes * sizeof(float);
	bytes += m->workspace_len * sizeof(float);
	return bytes;
}
