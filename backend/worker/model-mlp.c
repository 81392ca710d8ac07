/*
 * model-mlp.c: the multilayer perceptron: hidden linear+ReLU layers of
 * the spec's sizes, then a linear layer to the classes.
 */
#include "backend/worker/model.h"

const struct model_type model_mlp = {
	.build = model_add_dense_head,
};
