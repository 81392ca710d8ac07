/*
 * test-goodput.c: the goodput model (backend/sched/goodput.h) against
 * values computed by hand: the step time with and without overlap, the
 * statistical efficiency, the batch choice of a fixed and an adaptive
 * job, the speedup table, the learning-rate rule, and the fit, which
 * must give back the parameters that made its observations.
 */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "backend/sched/goodput.h"

/* 10 ms fixed and 1 ms a sample of compute; exchange 5 ms + 1 ms a rank
 * past two within a node, 20 ms + 4 ms across nodes. */
static const struct goodput_model M = {
	.alpha_c = 0.010, .beta_c = 0.001,
	.alpha_r = 0.005, .beta_r = 0.001,
	.alpha_n = 0.020, .beta_n = 0.004,
	.gamma = 1,
};

#define NEAR(a, b)	assert_true(fabs((double)(a) - (b)) <= 1e-9 * (1 + fabs((double)(b))))

static void
t_step(void **state)
{
	struct goodput_model m = M;

	(void)state;
	NEAR(goodput_compute_s(&M, 32), 0.042);
	NEAR(goodput_exchange_s(&M, 1, 1), 0);
	NEAR(goodput_exchange_s(&M, 1, 2), 0.005);
	NEAR(goodput_exchange_s(&M, 1, 4), 0.007);
	NEAR(goodput_exchange_s(&M, 2, 4), 0.028);
	NEAR(goodput_exchange_s(&M, 3, 3), 0.024);
	/* One micro-batch waits for the exchange; the others do not. */
	NEAR(goodput_step_s(&M, 2, 4, 32, 2), 0.042 + 0.042 + 0.028);
	NEAR(goodput_step_s(&M, 1, 1, 32, 3), 3 * 0.042);
	m.gamma = 2;
	NEAR(goodput_step_s(&m, 2, 4, 32, 1), sqrt(0.042 * 0.042 + 0.028 * 0.028));
}

static void
t_efficiency(void **state)
{
	(void)state;
	NEAR(goodput_efficiency(1000, 100, 400), 1100.0 / 1400.0);
	NEAR(goodput_efficiency(1000, 100, 100), 1);
	/* Unknown noise: a larger batch buys nothing. */
	NEAR(goodput_efficiency(-1, 100, 400), 0.25);
}

static void
t_best_fixed(void **state)
{
	struct goodput_job j = { M, -1, 128, 128, 32 };
	struct goodput_choice c;
	double	 g;

	(void)state;
	/* 2 ranks: 64 samples each, as 2 micro-batches of 32. */
	g = goodput_best(&j, 1, 2, &c);
	assert_int_equal(c.micro, 32);
	assert_int_equal(c.accum, 2);
	assert_int_equal(c.batch, 128);
	NEAR(c.step_s, 0.042 + 0.042 + 0.005);
	NEAR(g, 128 / 0.089);
	NEAR(c.efficiency, 1);
	/* 128 does not split over 3 ranks, nor over more than 128. */
	assert_true(goodput_best(&j, 1, 3, NULL) == 0);
	assert_true(goodput_best(&j, 2, 256, NULL) == 0);
	/* 48 a rank at most 32 a micro-batch: 2 of 24. */
	j.batch0 = j.batch_max = 96;
	goodput_best(&j, 2, 2, &c);
	assert_int_equal(c.micro, 24);
	assert_int_equal(c.accum, 2);
}

static void
t_best_adaptive(void **state)
{
	struct goodput_job j = { M, 0, 64, 1024, 64 };
	struct goodput_choice c;

	(void)state;
	/* No noise: efficiency 64 / M, so the goodput is 64 / step: the
	 * smallest batch, 16 a rank. */
	goodput_best(&j, 1, 4, &c);
	assert_int_equal(c.batch, 64);
	assert_int_equal(c.micro, 16);
	assert_int_equal(c.accum, 1);
	/* Overwhelming noise: efficiency about 1, the most throughput: the
	 * largest batch, 256 a rank as 4 micro-batches of 64. */
	j.noise_scale = 1e12;
	goodput_best(&j, 1, 4, &c);
	assert_int_equal(c.batch, 1024);
	assert_int_equal(c.micro, 64);
	assert_int_equal(c.accum, 4);
	/* In between the goodput is at least that of either end. */
	j.noise_scale = 300;
	{
		struct goodput_job lo = j;
		double	 g = goodput_best(&j, 2, 4, &c);

		lo.batch_max = 64;
		assert_true(g >= goodput_best(&lo, 2, 4, NULL) - 1e-9);
		assert_true(c.batch > 64 && c.batch <= 1024);
		assert_true(c.batch % 4 == 0);
	}
}

static void
t_speedups(void **state)
{
	/* Compute 1 ms a sample and nothing else: speedup = ranks. */
	struct goodput_job j = { { .beta_c = 0.001, .gamma = 1 }, -1, 128, 128,
	    128 };
	struct policy_row r[16];
	int	 n = goodput_speedups(&j, 4, 2, 3, r, 16);

	(void)state;
	/* 1: (1,1); 2: (1,2), (2,2); 3: none (128 / 3); 4: (2,4), (3,4). */
	assert_int_equal(n, 5);
	assert_int_equal(r[0].nodes, 1);
	assert_int_equal(r[0].ranks, 1);
	NEAR(r[0].speedup, 1);
	assert_int_equal(r[2].nodes, 2);
	assert_int_equal(r[2].ranks, 2);
	NEAR(r[2].speedup, 2);
	assert_int_equal(r[3].nodes, 2);
	assert_int_equal(r[3].ranks, 4);
	NEAR(r[4].speedup, 4);
	assert_int_equal(r[4].nodes, 3);
	/* With the exchange of M across nodes, 2 ranks on 2 nodes are worth
	 * less than on 1: step 64 ms + 20 ms against 64 ms + 5 ms. */
	j.model = M;
	j.model.alpha_c = 0;
	n = goodput_speedups(&j, 2, 2, 2, r, 16);
	assert_int_equal(n, 3);
	NEAR(r[1].speedup, 0.128 / 0.069);
	NEAR(r[2].speedup, 0.128 / 0.084);
	/* The table stops at max rows. */
	assert_int_equal(goodput_speedups(&j, 2, 2, 2, r, 2), 2);
}

static void
t_lr(void **state)
{
	struct job_spec	 s;

	(void)state;
	spec_job_defaults(&s);
	s.train.lr.base = 0.1;
	NEAR(goodput_lr(&s, 512, 384), 0.1);		/* fixed: base */
	s.train.batch.adaptive = true;
	s.train.batch.global = s.train.batch.global_min = 128;
	s.train.batch.global_max = 1024;
	/* SGD, AdaScale: 4 x (384 + 128) / (384 + 512). */
	NEAR(goodput_lr(&s, 512, 384), 0.1 * 4 * 512.0 / 896.0);
	NEAR(goodput_lr(&s, 128, 384), 0.1);
	NEAR(goodput_lr(&s, 512, -1), 0.2);		/* unknown: sqrt */
	s.train.optimizer.type = OPTIM_ADAMW;
	NEAR(goodput_lr(&s, 512, 384), 0.2);		/* sqrt(4) */
}

/* Observations made by a model, at the configurations a job runs. */
static int
make_obs(const struct goodput_model *m, struct goodput_obs *o)
{
	static const int cf[][4] = {
		{ 1, 1, 16, 1 }, { 1, 1, 64, 1 }, { 1, 2, 32, 1 },
		{ 1, 4, 32, 1 }, { 2, 2, 32, 1 }, { 2, 4, 32, 2 },
		{ 3, 6, 8, 1 },
	};
	int	 n = (int)(sizeof cf / sizeof cf[0]);

	for (int i = 0; i < n; i++) {
		o[i] = (struct goodput_obs){ cf[i][0], cf[i][1], cf[i][2],
		    cf[i][3], goodput_step_s(m, cf[i][0], cf[i][1], cf[i][2],
		    cf[i][3]), goodput_exchange_s(m, cf[i][0], cf[i][1]) };
	}
	return n;
}

static void
t_fit(void **state)
{
	struct goodput_obs o[16];
	struct goodput_model f, g = M;
	char	 err[256];
	int	 n = make_obs(&M, o);

	(void)state;
	assert_int_equal(goodput_fit(o, n, &f, err, sizeof err), 0);
	NEAR(f.alpha_c, M.alpha_c);
	NEAR(f.beta_c, M.beta_c);
	NEAR(f.alpha_r, M.alpha_r);
	NEAR(f.beta_r, M.beta_r);
	NEAR(f.alpha_n, M.alpha_n);
	NEAR(f.beta_n, M.beta_n);
	NEAR(f.gamma, 1);
	assert_int_equal(f.max_ranks, 6);
	/* Overlapped: the overlap comes back, and the rest near it. */
	g.gamma = 2.5;
	n = make_obs(&g, o);
	assert_int_equal(goodput_fit(o, n, &f, err, sizeof err), 0);
	if (fabs(f.gamma - 2.5) >= 0.1)
		fail_msg("gamma %g, beta_c %g", f.gamma, f.beta_c);
	assert_true(fabs(f.beta_c - M.beta_c) < 0.02 * M.beta_c);
	NEAR(f.alpha_n, M.alpha_n);
	/* One micro-batch size: half fixed, half per sample; no exchange
	 * across nodes seen: the one within. */
	o[0] = (struct goodput_obs){ 1, 1, 32, 1, 0.040, 0 };
	o[1] = (struct goodput_obs){ 1, 2, 32, 1, 0.050, 0.010 };
	assert_int_equal(goodput_fit(o, 2, &f, err, sizeof err), 0);
	NEAR(f.alpha_c, 0.020);
	NEAR(f.beta_c, 0.020 / 32);
	NEAR(f.alpha_r, 0.010);
	NEAR(f.alpha_n, 0.010);
	NEAR(f.beta_n, 0);
	/* Nothing to fit, and observations that cannot be. */
	assert_int_equal(goodput_fit(o, 0, &f, err, sizeof err), -1);
	assert_non_null(strstr(err, "no observations"));
	o[1].exchange_s = 0.060;
	assert_int_equal(goodput_fit(o, 2, &f, err, sizeof err), -1);
	assert_non_null(strstr(err, "observation 1"));
	o[1] = (struct goodput_obs){ 3, 2, 32, 1, 0.050, 0.010 };
	assert_int_equal(goodput_fit(o, 2, &f, err, sizeof err), -1);
	assert_non_null(strstr(err, "ranks >= nodes"));
}

int
main(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test(t_step),
		cmocka_unit_test(t_efficiency),
		cmocka_unit_test(t_best_fixed),
		cmocka_unit_test(t_best_adaptive),
		cmocka_unit_test(t_speedups),
		cmocka_unit_test(t_lr),
		cmocka_unit_test(t_fit),
	};

	return cmocka_run_group_tests(t, NULL, NULL);
}
