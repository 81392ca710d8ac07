/*
 * test-autotune.c: the micro-batch search on a synthetic cost model:
 * sizes up to M fit; throughput grows to a knee and then falls a little
 * (as cache pressure does), so the best size is not always the largest;
 * and a flat one under noise, where the choice must hold still.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "backend/worker/autotune.h"

struct model {
	int	 max_fit;	/* M */
	int	 knee;
	double	 drop;		/* fraction lost per doubling past the knee */
	int	 calls;
};

static double
speed(const struct model *m, int size)
{
	if (size <= m->knee)
		return 1000.0 * size / (size + 8.0);
	return speed(m, m->knee) * pow(1 - m->drop, log2((double)size / m->knee));
}

static int
probe(void *ctx, int size, struct autotune_trial *t, char *err, size_t len)
{
	struct model *m = ctx;

	m->calls++;
	t->fit = size <= m->max_fit;
	t->peak_bytes = (size_t)size * 1000;
	t->samples_per_s = t->fit ? speed(m, size) : 0;
	return 0;
}

/* The best of the sizes tried, by the rule: the largest that fits
 * within 10% of the fastest that fits. */
static int
optimum(const struct model *m, const struct autotune_trial *tr, int n)
{
	int	 best = 0;
	double	 top = 0;

	for (int k = 0; k < n; k++)
		if (tr[k].size <= m->max_fit && speed(m, tr[k].size) > top)
			top = speed(m, tr[k].size);
	for (int k = 0; k < n; k++)
		if (tr[k].size <= m->max_fit && tr[k].size > best &&
		    1.10 * speed(m, tr[k].size) >= top)
			best = tr[k].size;
	return best;
}

static void
t_finds_optimum(void **state)
{
	static const struct { int per_rank, max_fit, knee; double drop; } c[] = {
		{ 1024, 300, 2048, 0 }, { 1024, 1024, 2048, 0 },
		{ 4096, 700, 128, 0.05 }, { 960, 200, 64, 0.02 },
		{ 2048, 2048, 256, 0.10 }, { 1000, 37, 1000, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		struct model	 m = { c[i].max_fit, c[i].knee, c[i].drop, 0 };
		struct autotune_trial tr[AUTOTUNE_MAX_TRIALS];
		int		 n, got, bound;
		char		 err[256];

		got = autotune_search(c[i].per_rank, 12345, probe, &m, tr, &n,
		    err, sizeof err);
		bound = (int)ceil(log2((double)c[i].per_rank / 1)) + 3;
		printf("per_rank %d, fit <= %d: chose %d (optimum %d) in %d trials"
		    " (bound %d)\n", c[i].per_rank, c[i].max_fit, got,
		    optimum(&m, tr, n), n, bound);
		assert_int_equal(got, optimum(&m, tr, n));
		assert_true(n <= bound);
		assert_int_equal(n, m.calls);
	}
}

static void
t_nothing_fits(void **state)
{
	struct model	 m = { 0, 64, 0, 0 };
	struct autotune_trial tr[AUTOTUNE_MAX_TRIALS];
	int		 n;
	char		 err[256] = "";

	(void)state;
	assert_int_equal(autotune_search(256, 268435456, probe, &m, tr, &n, err,
	    sizeof err), -1);
	assert_non_null(strstr(err, "memory_per_rank (268435456 bytes"));
	assert_int_equal(n, 1);
}

/* Flat throughput up to 64, 20% less above: the timings' noise (here 1%
 * either way, drawn anew each run) must not move the choice, which is 64
 * every time (the fastest of near-equal sizes would be any of them). */
struct noisy {
	unsigned	 seed;
};

static int
probe_noisy(void *ctx, int size, struct autotune_trial *t, char *err,
    size_t len)
{
	struct noisy	*m = ctx;
	double		 jitter;

	(void)err; (void)len;
	m->seed = m->seed * 1103515245u + 12345u;
	jitter = ((m->seed >> 16) % 2001) / 100000.0 - 0.01;
	t->fit = size <= 512;
	t->peak_bytes = (size_t)size * 1000;
	t->samples_per_s = t->fit ? (size <= 64 ? 1000 : 800) * (1 + jitter) : 0;
	return 0;
}

static void
t_stable_under_noise(void **state)
{
	struct autotune_trial tr[AUTOTUNE_MAX_TRIALS];
	struct noisy	 m = { 7 };
	int		 n, got, other = 0;
	char		 err[256];

	(void)state;
	for (int run = 0; run < 200; run++) {
		got = autotune_search(1024, 12345, probe_noisy, &m, tr, &n, err,
		    sizeof err);
		if (got != 64)
			other++;
	}
	printf("200 searches with 1%% noise: %d chose other than 64\n", other);
	assert_int_equal(other, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_finds_optimum),
		cmocka_unit_test(t_nothing_fits),
		cmocka_unit_test(t_stable_under_noise),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
