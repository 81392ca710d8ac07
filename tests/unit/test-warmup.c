/*
 * test-warmup.c: the compressors' warm-up (compressor-sparse.c): the
 * density falls from warmup_density to the target along the epochs or
 * the steps, whichever ends first; the step clock survives a checkpoint;
 * a step where all of v in fp16 is smaller than the sparse message goes
 * out as fp16, keeping only the rounding in the residual; and jobs that
 * set none of it keep the state layout they had.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/rng.h"
#include "kernels/cpu/compress.h"
#include "backend/spec/spec.h"
#include "backend/worker/compressor.h"

static struct job_spec
tw_job(double start, int epochs, int steps)
{
	struct job_spec	j;

	spec_job_defaults(&j);
	j.train.optimizer.type = OPTIM_SGD;
	j.train.optimizer.momentum = 0.9;
	j.compression.method = COMPRESS_TOPK;
	j.compression.density = 0.001;
	j.compression.error_feedback = true;
	j.compression.momentum_correction = true;
	j.compression.warmup_epochs = epochs;
	j.compression.warmup_steps = steps;
	j.compression.warmup_density = start;
	return j;
}

static void
tw_fill(float *g, size_t n, uint64_t seed)
{
	struct rng	r;

	rng_seed(&r, seed, 0);
	for (size_t i = 0; i < n; i++)
		g[i] = 1e-3f * (float)rng_gauss(&r);
}

static size_t
tw_step(struct compressor *c, const float *g, double epoch, uint8_t *buf,
    float *sent)
{
	size_t	len = compressor_encode(c, g, epoch, buf,
	    compressor_max_bytes(c));

	assert_int_equal(compressor_decode(c, buf, &len, 1, sent), 0);
	return len;
}

/* d(p) = start * (target / start)^p, p the further of the two clocks. */
static void
t_ramp(void **state)
{
	const size_t		 n = 100000;
	struct job_spec		 job = tw_job(0.01, 1, 200);
	struct compressor	*c = compressor_create(&job, n, 3);
	float			*g = malloc(n * 4), *sent = malloc(n * 4);
	uint8_t			*buf = malloc(compressor_max_bytes(c));
	double			 want;

	tw_fill(g, n, 1);
	for (int s = 0; s < 250; s++) {
		/* The epoch clock runs slower: 1000 steps an epoch. */
		tw_step(c, g, s / 1000.0, buf, sent);
		want = s >= 200 ? 0.001 : 0.01 * pow(0.1, s / 200.0);
		assert_true(fabs(compressor_density(c) - want) < 1e-12);
	}
	compressor_free(c);
	free(buf);

	/* Epochs faster than the steps: the epoch clock ends it. */
	job = tw_job(0.01, 1, 1000000);
	c = compressor_create(&job, n, 3);
	buf = malloc(compressor_max_bytes(c));
	tw_step(c, g, 0.5, buf, sent);
	assert_true(fabs(compressor_density(c) - 0.01 * sqrt(0.1)) < 1e-12);
	tw_step(c, g, 1.0, buf, sent);
	assert_true(compressor_density(c) == 0.001);
	compressor_free(c);
	free(buf);

	/* Steps alone (no epochs); a start below the target: no warm-up. */
	job = tw_job(0.25, 0, 10);
	c = compressor_create(&job, n, 3);
	buf = malloc(compressor_max_bytes(c));
	tw_step(c, g, 0.0, buf, sent);
	assert_true(compressor_density(c) == 0.25);
	compressor_free(c);
	free(buf);
	job = tw_job(0.0005, 0, 10);
	c = compressor_create(&job, n, 3);
	buf = malloc(compressor_max_bytes(c));
	tw_step(c, g, 0.0, buf, sent);
	assert_true(compressor_density(c) == 0.001);
	compressor_free(c);
	free(buf);
	free(g);
	free(sent);
}

/* A warm-up from 100%: its first step is all of v in fp16, its residual
 * only what fp16 rounding lost; later steps are sparse again. */
static void
t_dense_steps(void **state)
{
	const size_t		 n = 4096;
	struct job_spec		 job = tw_job(1.0, 0, 100);
	struct compressor	*c = compressor_create(&job, n, 5);
	float			*g = malloc(n * 4), *sent = malloc(n * 4);
	uint8_t			*buf = malloc(compressor_max_bytes(c));
	size_t			 len;
	double			 lost = 0, norm = 0;

	assert_true(compressor_max_bytes(c) >= 2 + 2 * n);
	tw_fill(g, n, 2);
	len = tw_step(c, g, 0.0, buf, sent);
	assert_int_equal(len, 2 + 2 * n);
	assert_int_equal(buf[0], 0x80 | COMPRESS_TOPK);
	assert_true(compressor_density(c) == 1.0);
	for (size_t i = 0; i < n; i++) {
		assert_true(compressor_velocity(c)[i] == 0);
		lost += fabs((double)compressor_residual(c)[i]);
		norm += fabs((double)g[i]);
		/* What was sent plus what stays is what came in. */
		assert_true(fabsf(sent[i] + compressor_residual(c)[i] - g[i]) <=
		    1e-9f);
	}
	assert_true(lost < 1e-3 * norm);
	/* A dense buffer of the wrong length is malformed. */
	len = 2 + 2 * n - 2;
	assert_int_equal(compressor_decode(c, buf, &len, 1, sent), -1);
	for (int s = 1; s < 100; s++)
		len = tw_step(c, g, 0.0, buf, sent);
	assert_int_equal(buf[0], COMPRESS_TOPK);
	assert_true(len < 2 * n);
	compressor_free(c);

	/* From DGC's 25% a step never pays for fp16, and a dense buffer
	 * is refused. */
	job = tw_job(0.25, 1, 0);
	c = compressor_create(&job, n, 5);
	buf[0] = 0x80 | COMPRESS_TOPK;
	buf[1] = 0;
	len = 2 + 2 * n;
	assert_int_equal(compressor_decode(c, buf, &len, 1, sent), -1);
	compressor_free(c);
	free(buf);
	free(g);
	free(sent);
}

/* The step clock rides in the state only with warmup_steps, so a job
 * without it keeps its layout; restored, it continues bit for bit. */
static void
t_clock_state(void **state)
{
	const size_t		 n = 30000;
	struct job_spec		 job = tw_job(0.05, 0, 20), plain;
	struct compressor	*a = compressor_create(&job, n, 9), *b, *p;
	float			*g = malloc(n * 4), *sent = malloc(n * 4);
	size_t			 max = compressor_max_bytes(a), la, lb;
	uint8_t			*blob, *oa = malloc(max), *ob = malloc(max);

	plain = tw_job(0.05, 1, 0);
	p = compressor_create(&plain, n, 9);
	assert_int_equal(compressor_state_bytes(a),
	    compressor_state_bytes(p) + 8);
	tw_fill(g, n, 4);
	for (int s = 0; s < 7; s++)
		tw_step(a, g, 0.0, oa, sent);
	blob = malloc(compressor_state_bytes(a));
	compressor_state_save(a, blob);
	assert_int_equal(compressor_state_load(p, blob,
	    compressor_state_bytes(a)), -1);
	b = compressor_create(&job, n, 1);
	assert_int_equal(compressor_state_load(b, blob,
	    compressor_state_bytes(a)), 0);
	for (int s = 7; s < 25; s++) {
		tw_fill(g, n, 100 + (uint64_t)s);
		la = compressor_encode(a, g, 0.0, oa, max);
		lb = compressor_encode(b, g, 0.0, ob, max);
		assert_true(compressor_density(a) == compressor_density(b));
		assert_int_equal(la, lb);
		assert_memory_equal(oa, ob, la);
	}
	assert_true(compressor_density(b) == 0.001);
	compressor_free(a);
	compressor_free(b);
	compressor_free(p);
	free(blob);
	free(oa);
	free(ob);
	free(g);
	free(sent);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_ramp),
		cmocka_unit_test(t_dense_steps),
		cmocka_unit_test(t_clock_state),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
