/*
 * train-dump.c: a debug mode for comparing hunter's training with an
 * independent implementation.  With HUNTER_DUMP=DIR in a worker's
 * environment, rank 0 writes, for each of the first HUNTER_DUMP_STEPS
 * steps (default 10), what the step saw and did, as raw little-endian
 * arrays a few lines of Python read:
 *
 *   tensors.json      the model's tensors: name, offset, shape (once)
 *   step-0.params     the parameters before the first step (float32)
 *   step-N.inputs     each micro-batch's inputs as it came: a token
 *                     model's tokens then targets (int32, [n, T] each);
 *                     a class model's images (float32) then labels (u8)
 *   step-N.grads      the gradient after the exchange, before clipping
 *   step-N.params     the parameters after the update
 *   step-N.json       {"loss": the global mean loss, "lr": ...}
 *
 * Nothing is written without the variable; a file that cannot be written
 * is said once on stderr and the dump stops.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "backend/worker/train-internal.h"

static void
dump_file(struct trainer *t, const char *name, const void *a, size_t na,
    const void *b, size_t nb, const char *mode)
{
	char	 path[4096];
	FILE	*f;

	snprintf(path, sizeof path, "%s/%s", t->dump_dir, name);
	if ((f = fopen(path, mode)) == NULL ||
	    fwrite(a, 1, na, f) != na || (nb > 0 && fwrite(b, 1, nb, f) != nb) ||
	    fclose(f) != 0) {
		fprintf(stderr, "dump: %s: %s; no more dumps\n", path,
		    strerror(errno));
		t->dump_dir = NULL;
	}
}

void
train_dump_start(struct trainer *t)
{
	const char	*dir = getenv("HUNTER_DUMP"), *steps;
	struct model	*m = t->model;
	char		 name[32];
	json_t		*list;
	char		*text;

	if (dir == NULL || *dir == '\0' || t->cfg->rank != 0)
		return;
	t->dump_dir = dir;
	steps = getenv("HUNTER_DUMP_STEPS");
	t->dump_steps = steps != NULL ? atol(steps) : 10;
	list = json_array();
	for (int i = 0; i < m->n_tensors; i++) {
		const struct tensor_info *ti = &m->tensors[i];
		json_t	*shape = json_array();

		for (int d = 0; d < ti->ndim; d++)
			json_array_append_new(shape, json_integer(ti->shape[d]));
		json_array_append_new(list, json_pack("{s:s, s:I, s:o}", "name",
		    ti->name, "offset", (json_int_t)ti->offset, "shape", shape));
	}
	text = json_dumps(list, JSON_COMPACT);
	json_decref(list);
	if (text == NULL)
		return;
	dump_file(t, "tensors.json", text, strlen(text), NULL, 0, "w");
	free(text);
	snprintf(name, sizeof name, "step-0.params");
	if (t->dump_dir != NULL)
		dump_file(t, name, m->params, m->n_params * sizeof(float), NULL,
		    0, "w");
}

/* The step being taken is t->step + 1. */
static int
dump_now(const struct trainer *t)
{
	return t->dump_dir != NULL && t->step < t->dump_steps;
}

void
train_dump_inputs(struct trainer *t, const struct batch *b)
{
	char	 name[64];
	size_t	 n = (size_t)b->n;

	if (!dump_now(t))
		return;
	snprintf(name, sizeof name, "step-%ld.inputs", t->step + 1);
	if (t->T > 0)
		dump_file(t, name, b->tok, n * t->T * sizeof *b->tok, b->tgt,
		    n * t->T * sizeof *b->tgt, "a");
	else
		dump_file(t, name, b->x, n * t->model->in_c * t->model->in_h *
		    t->model->in_w * sizeof(float), b->y, n, "a");
}

void
train_dump_grads(struct trainer *t, double loss, double lr)
{
	char	 name[64], json[128];

	if (!dump_now(t))
		return;
	snprintf(name, sizeof name, "step-%ld.grads", t->step + 1);
	dump_file(t, name, t->model->grads, t->model->n_params * sizeof(float),
	    NULL, 0, "w");
	snprintf(name, sizeof name, "step-%ld.json", t->step + 1);
	snprintf(json, sizeof json, "{\"loss\": %.17g, \"lr\": %.17g}\n", loss,
	    lr);
	if (t->dump_dir != NULL)
		dump_file(t, name, json, strlen(json), NULL, 0, "w");
}

void
train_dump_params(struct trainer *t)
{
	char	 name[64];

	/* After the count: this is step t->step's update. */
	if (t->dump_dir == NULL || t->step > t->dump_steps)
		return;
	snprintf(name, sizeof name, "step-%ld.params", t->step);
	dump_file(t, name, t->model->params, t->model->n_params * sizeof(float),
	    NULL, 0, "w");
}
