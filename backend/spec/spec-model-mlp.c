/*
 * spec-model-mlp.c: the multilayer perceptron as a job names it: hidden
 * layer sizes (default [256, 256]); cuda runs it.
 */
#include "config.h"

#include "backend/spec/spec.h"

static const char *const mlp_keys[] = { "hidden", NULL };

const struct spec_model_kind spec_model_mlp = {
	.name = "mlp",
	.keys = mlp_keys,
	.formats = 1u << FORMAT_IMAGES,
	.cuda = true,
};
