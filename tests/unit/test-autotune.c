/*
 * test-autotune.c: the micro-batch search on a synthetic cost model:
 * sizes up to M fit; throughput grows to a knee and then falls a little
 * (as cache pressure does), so the best size is not always the largest.
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

/* The best divisor of per_rank by the rule: the largest that fits,
 * unless one that fits is >= 3% faster. */
static int
optimum(const struct model *m, int per_rank)
{
	int	 big = 0, best;
	double	 top = 0;

	for (int d = 1; d <= per_rank; d++)
		if (per_rank % d == 0 && d <= m->max_fit)
			big = d;
	best = big;
	for (int d = 1; d < big; d++) {
		if (per_rank % d == 0 && speed(m, d) >= 1.03 * speed(m, big) &&
		    speed(m, d) > top) {
			top = speed(m, d);
			best = d;
		}
	}
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
		    optimum(&m, c[i].per_rank), n, bound);
		assert_int_equal(got, optimum(&m, c[i].per_rank));
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_finds_optimum),
		cmocka_unit_test(t_nothing_fits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
