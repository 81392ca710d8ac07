/*
 * test-goodput.c: the goodput model (backend/sched/goodput.h) against
 * values computed by hand: the step time with and without overlap, the
 * statistical efficiency, the batch choice of a fixed and an adaptive
 * job, the speedup table, the learning-rate rule, the fit, which
 * must give back the parameters that made its observations, and the
 * global batch of an adaptive job (goodput_batch): the rule's scaling,
 * clipping and rounding, the goodput maximum of a hand-made model checked
 * against every batch the job may take, a fixed micro-batch, and the
 * table offered for a job whose noise is not known yet.
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

/* An adaptive job of [64, 1024] written for 2 ranks, micro auto. */
static struct goodput_job
ajob(double noise)
{
	return (struct goodput_job){ .model = M, .noise_scale = noise,
	    .batch0 = 64, .batch_max = 1024, .micro_max = 64,
	    .min_ranks = 2 };
}

static void
t_batch_rule(void **state)
{
	struct goodput_job j = ajob(-1);

	(void)state;
	/* Each rank keeps 32, the share it had at 2 ranks. */
	assert_int_equal(goodput_batch_rule(&j, 2), 64);
	assert_int_equal(goodput_batch_rule(&j, 3), 96);
	assert_int_equal(goodput_batch_rule(&j, 4), 128);
	assert_int_equal(goodput_batch_rule(&j, 6), 192);
	/* Never below the min: one rank takes all 64. */
	assert_int_equal(goodput_batch_rule(&j, 1), 64);
	/* Clipped to the max, rounded down to a multiple of the ranks. */
	assert_int_equal(goodput_batch_rule(&j, 40), 1000);
	assert_int_equal(goodput_batch_rule(&j, 1024), 1024);
	assert_int_equal(goodput_batch_rule(&j, 1025), 0);
	/* The min rounded up when the ranks do not split it: 5 x 13. */
	j.min_ranks = 10;
	assert_int_equal(goodput_batch_rule(&j, 5), 65);
	/* A fixed micro-batch of 16: multiples of ranks x 16. */
	j = ajob(-1);
	j.micro_fixed = 16;
	assert_int_equal(goodput_batch_rule(&j, 3), 96);
	assert_int_equal(goodput_batch_rule(&j, 5), 160);
	assert_int_equal(goodput_batch_rule(&j, 7), 224);
	assert_int_equal(goodput_batch_rule(&j, 30), 960);
	assert_int_equal(goodput_batch_rule(&j, 70), 0);	/* 1120 > max */
	/* Without a model, or without a noise scale, the rule stands. */
	j = ajob(300);
	assert_int_equal(goodput_batch(&j, false, 1, 4), 128);
	j = ajob(-1);
	assert_int_equal(goodput_batch(&j, true, 1, 4), 128);
}

/* Goodput of the job at exactly batch b on (nodes, ranks): the best cut
 * of b into micro-batches, times the efficiency at b. */
static double
goodput_at(const struct goodput_job *j, int nodes, int ranks, int b)
{
	struct goodput_job at = *j;

	at.batch0 = at.batch_max = b;
	return goodput_best(&at, nodes, ranks, NULL) *
	    goodput_efficiency(j->noise_scale, j->batch0, b);
}

static void
t_batch_goodput(void **state)
{
	struct goodput_job j = ajob(300);
	double	 best = 0, got;
	int	 argmax = 0, b;

	(void)state;
	/*
	 * 4 ranks on a node, a share s of at most 64 in one micro-batch: a
	 * step of 10 + s + 7 ms, 4 s samples, efficiency 364 / (300 + 4 s).
	 * The goodput 4 s 364 / ((s + 17)(300 + 4 s)) peaks where
	 * s^2 = 17 x 300 / 4 = 1275, s = 35.7: a batch near 143, inside the
	 * range, neither end.
	 */
	for (int x = 64; x <= 1024; x += 4) {
		double	 g = goodput_at(&j, 1, 4, x);

		if (g > best) {
			best = g;
			argmax = x;
		}
	}
	assert_true(argmax >= 136 && argmax <= 148);
	b = goodput_batch(&j, true, 1, 4);
	assert_true(b >= 64 && b <= 1024);
	assert_int_equal(b % 4, 0);
	got = goodput_at(&j, 1, 4, b);
	if (got < 0.99 * best)
		fail_msg("batch %d: goodput %g, the best %g at %d", b, got,
		    best, argmax);
	assert_true(got > goodput_at(&j, 1, 4, 64));
	assert_true(got > goodput_at(&j, 1, 4, 1024));
	/* Overwhelming noise: the largest batch; none: the smallest. */
	j.noise_scale = 1e12;
	assert_int_equal(goodput_batch(&j, true, 1, 4), 1024);
	j.noise_scale = 0;
	assert_int_equal(goodput_batch(&j, true, 1, 4), 64);
}

static void
t_batch_micro(void **state)
{
	struct goodput_job j = ajob(300);
	struct goodput_choice c;

	(void)state;
	j.micro_fixed = 16;
	for (int k = 1; k <= 8; k++) {
		int	 b = goodput_batch(&j, true, 1, k);

		if (b < 64 || b > 1024 || b % (16 * k) != 0)
			fail_msg("%d ranks: batch %d", k, b);
		assert_true(goodput_best(&j, 1, k, &c) > 0);
		assert_int_equal(c.micro, 16);
		assert_int_equal(c.batch, 16 * k * c.accum);
	}
	/* 96 ranks x 16 is past the max: nothing fits. */
	assert_int_equal(goodput_batch(&j, true, 1, 96), 0);
}

static void
t_batch_fixed(void **state)
{
	struct goodput_job j = ajob(300);

	(void)state;
	j.batch_max = j.batch0 = 96;
	assert_int_equal(goodput_batch(&j, true, 1, 3), 96);
	assert_int_equal(goodput_batch(&j, false, 1, 4), 96);
	assert_int_equal(goodput_batch(&j, true, 1, 5), 0);
	j.micro_fixed = 16;
	assert_int_equal(goodput_batch(&j, true, 1, 3), 96);
	assert_int_equal(goodput_batch(&j, true, 1, 4), 0);	/* 24 a rank */
}

static void
t_speedups_rule(void **state)
{
	/* Compute 1 ms a sample; 5 ms to exchange within a node. */
	struct goodput_job j = { .model = { .beta_c = 0.001, .alpha_r = 0.005,
	    .alpha_n = 0.005, .gamma = 1 }, .noise_scale = -1, .batch0 = 64,
	    .batch_max = 1024, .micro_max = 1024, .min_ranks = 2 };
	struct policy_row r[16];
	int	 n;

	(void)state;
	/* The rule's batches: 64 on 1 rank (64 ms), 64 on 2 (37 ms), 128
	 * on 4 (37 ms): 64 / 64 ms is the base. */
	n = goodput_speedups(&j, 4, 4, 1, r, 16);
	assert_int_equal(n, 4);
	assert_int_equal(r[3].ranks, 4);
	NEAR(r[0].speedup, 1);
	NEAR(r[1].speedup, (64 / 0.037) / (64 / 0.064));
	NEAR(r[3].speedup, (128 / 0.037) / (64 / 0.064));
	/* Without min_ranks (the simulator's), the unknown noise reads as
	 * none: the best is the min batch, 16 a rank on 4: 21 ms. */
	j.min_ranks = 0;
	n = goodput_speedups(&j, 4, 4, 1, r, 16);
	NEAR(r[3].speedup, (64 / 0.021) / (64 / 0.064));
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
		cmocka_unit_test(t_batch_rule),
		cmocka_unit_test(t_batch_goodput),
		cmocka_unit_test(t_batch_micro),
		cmocka_unit_test(t_batch_fixed),
		cmocka_unit_test(t_speedups_rule),
	};

	return cmocka_run_group_tests(t, NULL, NULL);
}
