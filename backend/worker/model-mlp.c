/*
 * model-mlp.c: the multilayer perceptron: hidden linear+ReLU layers of
 * the spec's sizes, then a linear layer to the classes.
 */
#include <stdio.h>

#include "backend/worker/model.h"

static void
mlp_build(struct model *m, const struct job_spec *job)
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

const struct model_type model_mlp = {
	.name = "mlp",
	.kind = MODEL_MLP,
	.build = mlp_build,
};
