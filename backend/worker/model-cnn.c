/*
 * model-cnn.c: the convolutional net: per spec channel, a 5x5 "same"
 * convolution, ReLU and a 2x2 max-pool; then the spec's hidden linear
 * layers and a linear layer to the classes.  Two blocks on 28x28 give
 * 7x7 maps.
 */
#include <stdio.h>

#include "backend/worker/model.h"

static void
cnn_build(struct model *m, const struct job_spec *job)
{
	char	 name[16];

	for (int i = 0; i < job->model.n_channels; i++) {
		snprintf(name, sizeof name, "conv%d", i + 1);
		model_add(m, &layer_conv, name, &(struct layer_args){
		    .out = job->model.channels[i], .k = 5, .pad = 2 });
		model_add(m, &layer_relu, NULL, NULL);
		model_add(m, &layer_pool, NULL, NULL);
	}
	model_add_dense_head(m, job);
}

const struct model_type model_cnn = {
	.build = cnn_build,
};
