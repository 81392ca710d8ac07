/*
 * test-model.c: the layer engine of backend/worker/model.c, through a
 * builder and two layer types of the test's own, as a model kind that
 * is not mlp or cnn would use it:
 *
 *  - a layer reading two earlier activations (a residual add) and an
 *    activation with two readers, whose gradient the later reader writes
 *    and the earlier one adds to (din_add): the gradients agree with
 *    finite differences of the loss;
 *  - a layer with no CUDA twin is refused by name on the device
 *    (a build without CUDA refuses every model);
 *  - mlp and cnn, built from the table, lay out the tensors their
 *    checkpoints name.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/rng.h"
#include "backend/spec/spec.h"
#include "backend/worker/model-gpu.h"
#include "backend/worker/model.h"

/* y = 2x; adds its input gradient when told to. */
static void
tm_scale_setup(struct model *m, struct layer *l)
{
	(void)m;
	memcpy(l->out_dim, l->in_dim, sizeof l->out_dim);
	l->out_size = l->in_size;
}

static void
tm_scale_fwd(const struct layer *l, const struct layer_io *io)
{
	for (size_t i = 0; i < (size_t)io->B * l->out_size; i++)
		io->out[i] = 2 * io->in[0][i];
}

static void
tm_scale_bwd(const struct layer *l, const struct layer_io *io)
{
	for (size_t i = 0; i < (size_t)io->B * l->out_size; i++) {
		if (l->din_add & 1)
			io->din[0][i] += 2 * io->dout[i];
		else
			io->din[0][i] = 2 * io->dout[i];
	}
}

static const struct layer_type tm_scale = {
	.name = "scale", .what = "scale", .setup = tm_scale_setup,
	.forward = tm_scale_fwd, .backward = tm_scale_bwd,
};

/* y = a + b, the residual add. */
static void
tm_add_fwd(const struct layer *l, const struct layer_io *io)
{
	for (size_t i = 0; i < (size_t)io->B * l->out_size; i++)
		io->out[i] = io->in[0][i] + io->in[1][i];
}

static void
tm_add_bwd(const struct layer *l, const struct layer_io *io)
{
	for (int j = 0; j < l->n_src; j++) {
		for (size_t i = 0; io->din[j] != NULL &&
		    i < (size_t)io->B * l->out_size; i++) {
			if (l->din_add & (1u << j))
				io->din[j][i] += io->dout[i];
			else
				io->din[j][i] = io->dout[i];
		}
	}
}

static const struct layer_type tm_add = {
	.name = "add", .what = "residual add", .setup = tm_scale_setup,
	.forward = tm_add_fwd, .backward = tm_add_bwd,
};

/* fc1, then a branch (scale) added back to fc1's output, then fc2:
 * fc1's output has two readers, and scale, the earlier, adds. */
static void
tm_build(struct model *m, const struct job_spec *job)
{
	int	 fc1, branch;

	(void)job;
	fc1 = model_add(m, &layer_linear, "fc1",
	    &(struct layer_args){ .out = 6 });
	branch = model_add(m, &tm_scale, NULL, NULL);
	model_add(m, &tm_add, NULL, &(struct layer_args){ .n_src = 2,
	    .src = { branch, fc1 } });
	model_add(m, &layer_linear, "fc2",
	    &(struct layer_args){ .out = 3 });
}

static const struct model_type tm_residual = { .build = tm_build };

static void
t_residual(void **state)
{
	enum { B = 4, IN = 8 };
	struct job_spec	 job;
	struct model	*m;
	struct rng	 r;
	float		 x[B * IN], *g;
	uint8_t		 y[B];
	double		 worst = 0;
	struct model_input in;

	(void)state;
	spec_job_defaults(&job);
	m = model_build(&tm_residual, &job, 1, 2, 4, 3, B, 3);
	assert_non_null(m);
	assert_int_equal(m->n_layers, 4);
	assert_int_equal(m->layers[1].din_add, 1);	/* scale adds */
	assert_int_equal(m->layers[2].din_add, 0);	/* the add writes */
	assert_int_equal(m->n_params, 6 * IN + 6 + 3 * 6 + 3);
	rng_seed(&r, 9, 0);
	for (int i = 0; i < B * IN; i++)
		x[i] = 2 * rng_float(&r) - 1;
	for (int i = 0; i < B; i++)
		y[i] = (uint8_t)rng_below(&r, 3);
	in = (struct model_input){ .x = x, .y = y };
	model_forward(m, &in, B, NULL);
	model_backward(m, &in, B, 1.0f);
	g = malloc(m->n_params * sizeof *g);
	memcpy(g, m->grads, m->n_params * sizeof *g);
	for (size_t i = 0; i < m->n_params; i++) {
		float	 p = m->params[i], eps = 1e-2f;
		double	 up, down, num;

		m->params[i] = p + eps;
		up = model_forward(m, &in, B, NULL);
		m->params[i] = p - eps;
		down = model_forward(m, &in, B, NULL);
		m->params[i] = p;
		num = (up - down) / (2.0 * eps);
		if (fabs(num - g[i]) > 2e-3 + 2e-2 * fabs(num))
			fail_msg("param %zu: engine %.6g, finite differences "
			    "%.6g", i, g[i], num);
		worst = fmax(worst, fabs(num - g[i]));
	}
	print_message("    %zu gradients, worst difference %.2g\n",
	    m->n_params, worst);
	free(g);
	model_free(m);
}

/* A layer without CUDA entry points keeps its model off the device. */
static void
t_no_twin(void **state)
{
	struct job_spec	 job;
	struct model	*m;
	char		 err[256] = "";
	int		 oom = -1;

	(void)state;
	spec_job_defaults(&job);
	m = model_build(&tm_residual, &job, 1, 2, 4, 3, 4, 3);
	assert_null(model_gpu_create(m, 4, &oom, err, sizeof err));
	print_message("    %s\n", err);
#ifdef HAVE_CUDA
	assert_non_null(strstr(err, "layer 2 is a scale, which has no CUDA"));
#endif
	assert_int_equal(oom, 0);
	model_free(m);
}

static void
t_kinds(void **state)
{
	static const char *const want[][8] = {
		[MODEL_MLP] = { "fc1.weight", "fc1.bias", "fc2.weight",
		    "fc2.bias", "fc3.weight", "fc3.bias" },
		[MODEL_CNN] = { "conv1.weight", "conv1.bias", "conv2.weight",
		    "conv2.bias", "fc1.weight", "fc1.bias" },
	};
	struct job_spec	 job;
	struct model	*m;

	(void)state;
	for (int k = MODEL_MLP; k <= MODEL_CNN; k++) {
		spec_job_defaults(&job);
		job.model.type = (enum spec_model)k;
		if (k == MODEL_CNN)
			job.model.n_hidden = 0;
		assert_non_null(m = model_create(&job, 1, 28, 28, 10, 2, 1));
		assert_string_equal(m->type->name, spec_model_name(k));
		for (int i = 0; want[k][i] != NULL; i++) {
			assert_true(i < m->n_tensors);
			assert_string_equal(m->tensors[i].name, want[k][i]);
		}
		model_free(m);
	}
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(t_residual),
		cmocka_unit_test(t_no_twin),
		cmocka_unit_test(t_kinds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
