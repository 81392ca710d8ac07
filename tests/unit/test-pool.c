/*
 * test-pool.c: the pool of threads the kernels run their parts on
 * (lib/pool.c): every part runs once, on a thread index the pool has;
 * the parts of a run of two really run at once (each waits, with a
 * deadline, for the other to start); a run asked for while another holds
 * the pool, from another thread or from inside a part, runs on its own
 * thread and completes; pools are shared by size and stopped by their
 * last user; and many short runs back to back (the kernels' pattern)
 * lose no part and never hang.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/pool.h"

#define TP_PARTS	1000

struct tp_count {
	atomic_int	 runs[TP_PARTS];
	atomic_int	 bad_thread;
	int		 threads;
};

static void
tp_count_part(void *arg, int part, int thread)
{
	struct tp_count *c = arg;

	atomic_fetch_add(&c->runs[part], 1);
	if (thread < 0 || thread >= c->threads)
		atomic_store(&c->bad_thread, 1);
}

/* Every part once, each on a thread the pool has. */
static void
tp_check_once(struct pool *p, int parts)
{
	struct tp_count	*c = calloc(1, sizeof *c);

	assert_non_null(c);
	c->threads = pool_threads(p);
	pool_run(p, parts, tp_count_part, c);
	for (int i = 0; i < parts; i++)
		assert_int_equal(atomic_load(&c->runs[i]), 1);
	assert_int_equal(atomic_load(&c->bad_thread), 0);
	free(c);
}

static void
t_every_part_once(void **state)
{
	(void)state;
	tp_check_once(NULL, TP_PARTS);
	for (int n = 1; n <= 4; n++) {
		struct pool *p = pool_get(n);

		assert_int_equal(pool_threads(p), n);
		tp_check_once(p, 0);
		tp_check_once(p, 1);
		tp_check_once(p, 7);
		tp_check_once(p, TP_PARTS);
		pool_put(p);
	}
}

struct tp_meet {
	atomic_int	 started;
	atomic_int	 met;
	atomic_int	 seen[2];
};

/* Each part waits up to 5 s for the other to have started. */
static void
tp_meet_part(void *arg, int part, int thread)
{
	struct tp_meet *m = arg;
	double	 until = clock_mono() + 5;

	atomic_fetch_add(&m->started, 1);
	atomic_store(&m->seen[part], thread + 1);
	while (atomic_load(&m->started) < 2 && clock_mono() < until)
		;
	if (atomic_load(&m->started) == 2)
		atomic_fetch_add(&m->met, 1);
}

static void
t_parts_run_at_once(void **state)
{
	struct pool	*p = pool_get(2);
	struct tp_meet	 m;

	(void)state;
	memset(&m, 0, sizeof m);
	pool_run(p, 2, tp_meet_part, &m);
	assert_int_equal(atomic_load(&m.met), 2);
	/* On two threads, not one. */
	assert_int_not_equal(atomic_load(&m.seen[0]), atomic_load(&m.seen[1]));
	pool_put(p);
}

static void
t_shared_by_size(void **state)
{
	struct pool	*a = pool_get(3), *b = pool_get(3), *c = pool_get(2);

	(void)state;
	assert_ptr_equal(a, b);
	assert_ptr_not_equal(a, c);
	pool_put(a);
	tp_check_once(b, TP_PARTS);	/* still running for its other user */
	pool_put(b);
	pool_put(c);
	pool_put(NULL);
	assert_int_equal(pool_threads(NULL), 1);
	a = pool_get(0);
	assert_int_equal(pool_threads(a), 1);
	pool_put(a);
}

struct tp_nest {
	struct pool	*p;
	atomic_int	 inner;
};

static void
tp_inner_part(void *arg, int part, int thread)
{
	struct tp_nest *n = arg;

	(void)part;
	(void)thread;
	atomic_fetch_add(&n->inner, 1);
}

/* A part that asks its own pool for a run. */
static void
tp_outer_part(void *arg, int part, int thread)
{
	struct tp_nest *n = arg;

	(void)part;
	(void)thread;
	pool_run(n->p, 10, tp_inner_part, n);
}

static void *
tp_other_caller(void *arg)
{
	struct pool	*p = arg;

	for (int i = 0; i < 200; i++)
		tp_check_once(p, 64);
	return NULL;
}

static void
t_busy_pool_runs_inline(void **state)
{
	struct tp_nest	 n = { .p = pool_get(2) };
	pthread_t	 other;

	(void)state;
	atomic_init(&n.inner, 0);
	pool_run(n.p, 8, tp_outer_part, &n);
	assert_int_equal(atomic_load(&n.inner), 80);
	/* Two callers at once on one pool: both get every part. */
	assert_int_equal(pthread_create(&other, NULL, tp_other_caller, n.p),
	    0);
	for (int i = 0; i < 200; i++)
		tp_check_once(n.p, 64);
	pthread_join(other, NULL);
	pool_put(n.p);
}

struct tp_sum {
	long	 slot[8];
};

static void
tp_sum_part(void *arg, int part, int thread)
{
	struct tp_sum *s = arg;

	(void)thread;
	s->slot[part] += part + 1;
}

/* The kernels' pattern: runs of a few parts, back to back. */
static void
t_many_short_runs(void **state)
{
	struct pool	*p = pool_get(2);
	struct tp_sum	 s;

	(void)state;
	memset(&s, 0, sizeof s);
	for (int i = 0; i < 20000; i++)
		pool_run(p, 1 + i % 8, tp_sum_part, &s);
	for (int k = 0; k < 8; k++) {
		/* Part k runs in every run of more than k parts. */
		long	 runs = 0;

		for (int i = 0; i < 20000; i++)
			runs += 1 + i % 8 > k;
		assert_int_equal(s.slot[k], runs * (k + 1));
	}
	pool_put(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_every_part_once),
		cmocka_unit_test(t_parts_run_at_once),
		cmocka_unit_test(t_shared_by_size),
		cmocka_unit_test(t_busy_pool_runs_inline),
		cmocka_unit_test(t_many_short_runs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
