/*
 * spec-model.c: the model kinds of a job (spec.h, struct
 * spec_model_kind), one file each (spec-model-NAME.c) and one line in
 * spec_models below, indexed by enum spec_model.  This table is the one
 * list of their names: model.type is looked up in it, hunter validate's
 * "known: mlp, cnn, gpt" and "did you mean" come from it, and the worker's
 * builders are indexed by the same enum.  The checks here are those
 * every kind shares, driven by what each one says of itself: the keys of
 * model: it takes and whether cuda runs it.
 */
#include "config.h"

#include "backend/spec/spec-internal.h"

extern const struct spec_model_kind spec_model_mlp;
extern const struct spec_model_kind spec_model_cnn;
extern const struct spec_model_kind spec_model_gpt;

static const struct spec_model_kind *const spec_models[] = {
	[MODEL_MLP] = &spec_model_mlp,
	[MODEL_CNN] = &spec_model_cnn,
	[MODEL_GPT] = &spec_model_gpt,
};

#define SPEC_N_MODELS	(sizeof spec_models / sizeof spec_models[0])

const struct spec_model_kind *
spec_model_kind(enum spec_model v)
{
	return (unsigned)v < SPEC_N_MODELS ? spec_models[v] : NULL;
}

const char *
spec_model_name(enum spec_model v)
{
	const struct spec_model_kind *k = spec_model_kind(v);

	return k != NULL ? k->name : "?";
}

const char *
spec_model_name_at(int i)
{
	return i >= 0 && (unsigned)i < SPEC_N_MODELS ? spec_models[i]->name :
	    NULL;
}

/* Set the defaults of the kind the file asks for (or of the default
 * kind) before its keys are read, so that what it writes wins. */
void
spec_model_defaults(const struct ydoc_node *root, struct job_spec *j)
{
	const struct ydoc_node *t = ydoc_get(ydoc_get(root, "model", NULL),
	    "type", NULL);
	const struct spec_model_kind *k = spec_model_kind(j->model.type);

	for (size_t i = 0; t != NULL && t->kind == YDOC_SCALAR &&
	    i < SPEC_N_MODELS; i++) {
		if (strcmp(t->str, spec_models[i]->name) == 0)
			k = spec_models[i];
	}
	if (k != NULL && k->defaults != NULL)
		k->defaults(j);
}

static int
spec_model_takes(const struct spec_model_kind *k, const char *key)
{
	if (strcmp(key, "type") == 0)
		return 1;
	for (size_t i = 0; k->keys != NULL && k->keys[i] != NULL; i++) {
		if (strcmp(key, k->keys[i]) == 0)
			return 1;
	}
	return 0;
}

/* The key node of a dotted path, or the nearest of its parents that is
 * there (NULL: the top). */
static const struct ydoc_node *
spec_model_at(const struct ydoc_node *root, const char *path)
{
	const struct ydoc_node *map = root, *key = NULL, *at = NULL;
	char		 part[SPEC_KEYPATH_MAX];
	const char	*p = path, *dot;

	while (map != NULL && *p != '\0') {
		dot = strchr(p, '.');
		snprintf(part, sizeof part, "%.*s", dot != NULL ?
		    (int)(dot - p) : (int)strlen(p), p);
		if ((map = ydoc_get(map, part, &key)) != NULL)
			at = key;
		p = dot != NULL ? dot + 1 : "";
	}
	return at;
}

/* The checks of the job's model kind, on a job otherwise valid. */
void
spec_model_check(struct spec_walk *w, const struct ydoc_node *root,
    const struct job_spec *j)
{
	const struct spec_model_kind *k = spec_model_kind(j->model.type);
	const struct ydoc_node *model = ydoc_get(root, "model", NULL), *key;
	const char	*blame;
	char		 msg[512], cuda[128] = "";

	if (k == NULL)
		return;
	for (size_t i = 0; model != NULL && model->kind == YDOC_MAP &&
	    i + 1 < model->n; i += 2) {
		key = model->kids[i];
		if (key->dup || spec_model_takes(k, key->str))
			continue;
		msg[0] = '\0';
		for (size_t n = 0; k->keys != NULL && k->keys[n] != NULL; n++)
			snprintf(msg + strlen(msg), sizeof msg - strlen(msg),
			    ", %s", k->keys[n]);
		spec_walk_error(w, key, "model.%s: model type %s takes no "
		    "'%s' (it takes: type%s)", key->str, k->name, key->str, msg);
	}
	if (j->resources.device == DEVICE_CUDA && !k->cuda) {
		for (size_t i = 0; i < SPEC_N_MODELS; i++)
			if (spec_models[i]->cuda)
				snprintf(cuda + strlen(cuda), sizeof cuda -
				    strlen(cuda), "%s%s", *cuda ? ", " : "",
				    spec_models[i]->name);
		spec_walk_error(w, spec_model_at(root, "resources.device"),
		    "resources.device: cuda runs %s models only (%s); use "
		    "device: cpu for a %s", cuda, k->no_cuda, k->name);
	}
	if (!(k->formats & (1u << j->data.format))) {
		msg[0] = '\0';
		for (int f = 0; spec_format_names[f] != NULL; f++)
			if (k->formats & (1u << f))
				snprintf(msg + strlen(msg), sizeof msg -
				    strlen(msg), "%s%s", *msg ? " or " : "",
				    spec_format_names[f]);
		spec_walk_error(w, spec_model_at(root, "data.format"),
		    "data.format: model type %s trains on %s, not %s", k->name,
		    msg, spec_format_name(j->data.format));
	}
	if (k->check != NULL &&
	    (blame = k->check(j, msg, sizeof msg)) != NULL)
		spec_walk_error(w, spec_model_at(root, blame), "%s: %s", blame,
		    msg);
}
