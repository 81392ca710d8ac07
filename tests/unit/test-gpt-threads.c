/*
 * test-gpt-threads.c: the gpt trains to the same bits on one thread and
 * on two (issue 26's check 3).  A GPT-2 of 2 layers, 4 heads, 128
 * channels and a context of 96 (attention's blocks of 32 queries: three
 * of them), batch 4, takes 4 AdamW steps with OpenBLAS
 * and the model's pool at 1 thread, then again at 2: every step's loss
 * and the final parameters must be equal to the bit.  The shapes are
 * large enough that each kernel cuts its work into several parts (384
 * rows of 128: LayerNorm's 3, AdamW's a dozen, four heads and three
 * blocks of attention a sample), so the second run spreads them over both
 * threads (test-pool.c shows that a pool of two runs parts at once).  No
 * tolerance: the kernels cut by shape, never by thread, and sum across
 * parts in part order (kernels/cpu/parts-internal.h).
 *
 * Also: the model's pool has OpenBLAS's threads (one number for both),
 * OpenBLAS is held at one thread while a pass runs on a pool of two (seen
 * from the backward hook, between layers) and given back after.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <zlib.h>

#include "lib/pool.h"
#include "lib/rng.h"
#include "backend/spec/spec.h"
#include "backend/worker/model.h"
#include "backend/worker/optimizer.h"

#define GT_L		2
#define GT_H		4
#define GT_C		128
#define GT_T		96
#define GT_V		256
#define GT_B		4
#define GT_STEPS	4

struct gt_run {
	double		 loss[GT_STEPS];
	unsigned long	 crc;
	int		 pool_threads;
	int		 blas_in_pass;	/* the most the hook saw */
	int		 blas_after;
};

static void
gt_hook(void *ctx, int i)
{
	struct gt_run	*r = ctx;
	int		 n = openblas_get_num_threads();

	(void)i;
	if (n > r->blas_in_pass)
		r->blas_in_pass = n;
}

static void
gt_train(int threads, struct gt_run *r)
{
	struct job_spec	 job;
	struct model	*m;
	struct optimizer *o;
	struct rng	 g;
	int32_t		 tok[GT_B * GT_T], tgt[GT_B * GT_T];
	struct model_input in = { .tok = tok, .tgt = tgt };

	memset(r, 0, sizeof *r);
	openblas_set_num_threads(threads);
	spec_job_defaults(&job);
	job.model.type = MODEL_GPT;
	job.model.layers = GT_L;
	job.model.heads = GT_H;
	job.model.channels[0] = GT_C;
	job.model.n_channels = 1;
	job.model.context = GT_T;
	job.model.vocab = GT_V;
	job.data.format = FORMAT_TOKENS;
	job.train.optimizer.type = OPTIM_ADAMW;
	assert_non_null(m = model_create(&job, GT_T, 1, 1, GT_V, GT_B, 5));
	o = optimizer_create(&job, m->n_params);
	for (int i = 0; i < m->n_tensors; i++)
		if (m->tensors[i].no_decay)
			optimizer_no_decay(o, m->tensors[i].offset,
			    m->tensors[i].numel);
	r->pool_threads = pool_threads(m->pool);
	m->on_backward = gt_hook;
	m->on_backward_ctx = r;
	rng_seed(&g, 9, 0);
	for (int i = 0; i < GT_B * GT_T; i++) {
		tok[i] = (int32_t)rng_below(&g, GT_V);
		tgt[i] = (int32_t)rng_below(&g, GT_V);
	}
	for (int s = 0; s < GT_STEPS; s++) {
		memset(m->grads, 0, m->n_params * sizeof(float));
		r->loss[s] = model_forward(m, &in, GT_B, NULL);
		model_backward(m, &in, GT_B, 1.0f / (GT_B * GT_T));
		optimizer_step(o, m->params, m->grads, 1e-3f);
	}
	r->blas_after = openblas_get_num_threads();
	r->crc = crc32(crc32(0L, Z_NULL, 0), (const Bytef *)m->params,
	    (uInt)(m->n_params * sizeof(float)));
	optimizer_free(o);
	model_free(m);
}

static void
t_same_bits(void **state)
{
	struct gt_run	 one, two;

	(void)state;
	gt_train(1, &one);
	gt_train(2, &two);
	for (int s = 0; s < GT_STEPS; s++)
		print_message("    step %d: loss %.17g on 1 thread, %.17g on "
		    "2\n", s, one.loss[s] / (GT_B * GT_T),
		    two.loss[s] / (GT_B * GT_T));
	print_message("    parameters' crc32: %08lx on 1 thread, %08lx on 2\n",
	    one.crc, two.crc);
	/* It learned something: the steps did work. */
	assert_true(one.loss[GT_STEPS - 1] < one.loss[0]);
	for (int s = 0; s < GT_STEPS; s++)
		assert_memory_equal(&one.loss[s], &two.loss[s], sizeof(double));
	assert_int_equal(one.crc, two.crc);

	assert_int_equal(one.pool_threads, 1);
	assert_int_equal(two.pool_threads, 2);
	assert_int_equal(one.blas_in_pass, 1);
	assert_int_equal(two.blas_in_pass, 1);
	assert_int_equal(two.blas_after, 2);
	openblas_set_num_threads(1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_same_bits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
