/*
 * spec-model-cnn.c: the convolutional net as a job names it: conv
 * channels (default [16, 32]) and dense hidden layers after them
 * (default none); cuda does not run it yet.
 */
#include "config.h"

#include "backend/spec/spec.h"

static const char *const cnn_keys[] = { "channels", "hidden", NULL };

static void
cnn_defaults(struct job_spec *j)
{
	j->model.n_hidden = 0;
}

const struct spec_model_kind spec_model_cnn = {
	.name = "cnn",
	.keys = cnn_keys,
	.formats = 1u << FORMAT_IMAGES,
	.defaults = cnn_defaults,
	.no_cuda = "the convolutions have no CUDA kernels yet",
};
