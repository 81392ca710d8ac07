/*
 * test-policy.c: the scheduling policies (backend/sched/policy.h) on
 * small clusters built by hand: goodput's share between a job that
 * scales and one that does not, min and max, a request that matches its
 * allocations keeping them, restarts weighed, no node shared by two
 * multi-node jobs, racks, jobs that may not be preempted, nobody
 * starved; fifo's order and backfill; las's queues; and the request
 * checks.  Every reply also passes policy_verify, or policy_decide
 * would have failed.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "backend/sched/policy.h"

#define MAXN	16
#define MAXJ	8
#define MAXR	256

static const char *const racks[] = { "r0", "r1" };
static struct policy_node nodes[MAXN];
static struct policy_job jobs[MAXJ];
static struct policy_row rows[MAXJ][MAXR];
static int cur[MAXJ][64];
static struct policy_request req;
static struct policy_reply rep;
static char err[512];

/* n nodes of slots each, the first half in r0. */
static void
cluster(int n, int slots)
{
	static char names[MAXN][8];

	memset(&req, 0, sizeof req);
	for (int i = 0; i < n; i++) {
		snprintf(names[i], sizeof names[i], "n%d", i);
		nodes[i] = (struct policy_node){ names[i], slots, i >= n / 2 };
	}
	req = (struct policy_request){ .time = 0, .interval_s = 60,
	    .restart_s = 30, .nodes = nodes, .nnodes = n, .racks = racks,
	    .nracks = 2, .jobs = jobs, .njobs = 0 };
}

/* A job whose speedup at k ranks is f(k), offered on every node count
 * that can hold k ranks of a cluster of slots-a-node nodes; on more
 * nodes than needed it is worth 5% less a node. */
static struct policy_job *
job(const char *name, int min, int max, double (*f)(int), int slots)
{
	int	 j = req.njobs++, n = 0;

	for (int k = 1; k <= max && k <= MAXR; k++) {
		int	 lo = (k + slots - 1) / slots;

		for (int nd = lo; nd <= k && nd <= req.nnodes && n < MAXR; nd++)
			rows[j][n++] = (struct policy_row){ nd, k,
			    f(k) * (1 - 0.05 * (nd - lo)) };
	}
	jobs[j] = (struct policy_job){ .name = name, .submitted = j,
	    .age = 600, .min_ranks = min, .max_ranks = max,
	    .preemptible = true, .rows = rows[j], .nrows = n };
	return &jobs[j];
}

static double linear(int k) { return k; }
static double flat(int k) { (void)k; return 1; }
static double sublinear(int k) { return k / (1 + 0.1 * (k - 1)); }

static void
decide(const char *name)
{
	policy_reply_free(&rep);
	if (policy_decide(policy_find(name), &req, &rep, err, sizeof err) != 0)
		fail_msg("%s: %s", name, err);
}

/* The reply as the next request's current allocations. */
static void
feed_back(double dt)
{
	for (int j = 0; j < req.njobs; j++) {
		if (rep.n[j] > 0)
			memcpy(cur[j], rep.node_of[j],
			    (size_t)rep.n[j] * sizeof(int));
		jobs[j].attained += rep.n[j] * dt;
		jobs[j].age += dt;
		jobs[j].current = cur[j];
		jobs[j].ncurrent = rep.n[j];
	}
	req.time += dt;
}

static int
nodes_of(int j)
{
	int	 d = 0;

	for (int k = 0; k < rep.n[j]; k++) {
		int	 seen = 0;

		for (int i = 0; i < k; i++)
			seen |= rep.node_of[j][i] == rep.node_of[j][k];
		d += !seen;
	}
	return d;
}

static int
teardown(void **state)
{
	(void)state;
	policy_reply_free(&rep);
	return 0;
}

static void
t_linear_flat(void **state)
{
	(void)state;
	cluster(2, 4);
	job("lin", 1, 8, linear, 4);
	job("flat", 1, 8, flat, 4);
	decide("goodput");
	/* The flat job gains nothing from a second rank; the linear one
	 * takes the rest. */
	assert_int_equal(rep.n[1], 1);
	assert_int_equal(rep.n[0], 7);
	assert_int_equal(nodes_of(0), 2);
	/* With the linear one capped, the flat one still has one. */
	jobs[0].max_ranks = 4;
	decide("goodput");
	assert_int_equal(rep.n[0], 4);
	assert_int_equal(nodes_of(0), 1);
	assert_int_equal(rep.n[1], 1);
}

static void
t_min_max(void **state)
{
	(void)state;
	cluster(2, 4);
	job("a", 3, 5, linear, 4);
	job("b", 2, 2, linear, 4);
	decide("goodput");
	assert_int_equal(rep.n[0], 5);
	assert_int_equal(rep.n[1], 2);
	/* A min beyond what is left waits rather than runs short. */
	job("c", 4, 8, linear, 4);
	decide("goodput");
	assert_true(rep.n[2] == 0 || rep.n[2] >= 4);
	assert_true(rep.n[0] == 0 || (rep.n[0] >= 3 && rep.n[0] <= 5));
	assert_true(rep.n[1] == 0 || rep.n[1] == 2);
}

/* Decide, feed the reply back, decide again: the same allocation. */
static void
expect_stable(const char *policy)
{
	int	 n[MAXJ], at[MAXJ][64];

	decide(policy);
	feed_back(60);
	for (int j = 0; j < req.njobs; j++) {
		if ((n[j] = rep.n[j]) > 0)
			memcpy(at[j], rep.node_of[j], (size_t)n[j] * sizeof(int));
	}
	decide(policy);
	for (int j = 0; j < req.njobs; j++) {
		assert_int_equal(rep.n[j], n[j]);
		if (n[j] > 0)
			assert_memory_equal(rep.node_of[j], at[j],
			    (size_t)n[j] * sizeof(int));
	}
}

static void
t_keep(void **state)
{
	(void)state;
	for (int p = 0; policy_table[p] != NULL; p++) {
		cluster(4, 4);
		job("a", 1, 16, sublinear, 4);
		job("b", 1, 6, linear, 4);
		job("c", 2, 2, flat, 4);
		expect_stable(policy_table[p]->name);
		req.restart_s = 0;
		expect_stable(policy_table[p]->name);
	}
}

static void
t_restart_weighed(void **state)
{
	(void)state;
	/* A young job running on 2 ranks: 3 would be 50% better, but a
	 * restart now costs it (60 - 30) / (60 + 30) of its speedup. */
	cluster(1, 4);
	job("a", 1, 3, linear, 4);
	jobs[0].age = 60;
	cur[0][0] = cur[0][1] = 0;
	jobs[0].current = cur[0];
	jobs[0].ncurrent = 2;
	decide("goodput");
	assert_int_equal(rep.n[0], 2);
	/* Old, the same gain is worth the restart. */
	jobs[0].age = 3600;
	decide("goodput");
	assert_int_equal(rep.n[0], 3);
	/* Without a restart cost, at once. */
	jobs[0].age = 60;
	req.restart_s = 0;
	decide("goodput");
	assert_int_equal(rep.n[0], 3);
}

static void
t_multi_node(void **state)
{
	int	 on[MAXN] = { 0 };

	(void)state;
	/* Two jobs of 6 on 3 nodes of 4: each must span two nodes, and no
	 * node may hold both, so one waits or runs on fewer. */
	cluster(3, 4);
	job("a", 6, 6, linear, 4);
	job("b", 6, 6, linear, 4);
	decide("goodput");
	assert_true(rep.n[0] == 6 || rep.n[1] == 6);
	assert_true(rep.n[0] == 0 || rep.n[1] == 0);
	for (int p = 0; policy_table[p] != NULL; p++) {
		cluster(4, 4);
		job("a", 5, 5, linear, 4);
		job("b", 5, 5, linear, 4);
		job("c", 2, 2, linear, 4);
		decide(policy_table[p]->name);
		/* 5 + 5 on four nodes of 4: two nodes each; c fits beside. */
		assert_int_equal(rep.n[0], 5);
		assert_int_equal(rep.n[1], 5);
		assert_int_equal(nodes_of(0), 2);
		assert_int_equal(nodes_of(1), 2);
		memset(on, 0, sizeof on);
		for (int j = 0; j < 2; j++)
			for (int k = 0; k < 5; k++)
				on[rep.node_of[j][k]] |= 1 << j;
		for (int i = 0; i < 4; i++)
			assert_true(on[i] != 3);
	}
}

static void
t_racks(void **state)
{
	(void)state;
	/* 8 nodes of 2, r0 = n0..n3, r1 = n4..n7; n0 and n1 busy with a
	 * job that may not move: a 6-rank job fits only r1 in one rack. */
	cluster(8, 2);
	job("pin", 4, 4, linear, 2);
	jobs[0].preemptible = false;
	cur[0][0] = cur[0][1] = 0;
	cur[0][2] = cur[0][3] = 1;
	jobs[0].current = cur[0];
	jobs[0].ncurrent = 4;
	job("big", 6, 6, linear, 2);
	decide("goodput");
	assert_int_equal(rep.n[0], 4);
	assert_int_equal(rep.node_of[0][0], 0);
	assert_int_equal(rep.n[1], 6);
	for (int k = 0; k < 6; k++)
		assert_true(rep.node_of[1][k] >= 4);
	/* fifo and las keep the pinned job too. */
	decide("fifo");
	assert_int_equal(rep.n[0], 4);
	decide("las");
	assert_int_equal(rep.n[0], 4);
}

static void
t_fifo(void **state)
{
	(void)state;
	cluster(2, 4);
	job("a", 1, 6, linear, 4);	/* first: takes 6 */
	job("b", 4, 4, linear, 4);	/* 4 does not fit in 2: waits */
	job("c", 2, 2, linear, 4);	/* backfills */
	decide("fifo");
	assert_int_equal(rep.n[0], 6);
	assert_int_equal(rep.n[1], 0);
	assert_int_equal(rep.n[2], 2);
	/* Running jobs are never preempted, whatever came before. */
	feed_back(60);
	jobs[1].submitted = -1;
	decide("fifo");
	assert_int_equal(rep.n[0], 6);
	assert_int_equal(rep.n[1], 0);
}

static void
t_las(void **state)
{
	(void)state;
	cluster(1, 4);
	job("old", 4, 4, linear, 4);
	job("new", 4, 4, linear, 4);
	/* old has run past the first queue's threshold; new has not run:
	 * new goes first and old is preempted. */
	jobs[0].attained = 20 * 3600;
	jobs[0].age = 5 * 3600;
	cur[0][0] = cur[0][1] = cur[0][2] = cur[0][3] = 0;
	jobs[0].current = cur[0];
	jobs[0].ncurrent = 4;
	decide("las");
	assert_int_equal(rep.n[0], 0);
	assert_int_equal(rep.n[1], 4);
	/* fifo keeps old running. */
	decide("fifo");
	assert_int_equal(rep.n[0], 4);
	assert_int_equal(rep.n[1], 0);
}

static void
t_starve(void **state)
{
	(void)state;
	/* old ran 25000 s at 4 ranks (past the threshold), then waited
	 * 175000 s; new arrived later.  las keeps old in its second queue;
	 * goodput counts the wait and puts old first. */
	cluster(1, 4);
	job("old", 4, 4, linear, 4);
	job("new", 4, 4, linear, 4);
	jobs[0].attained = 100000;
	jobs[0].age = 200000;
	jobs[0].submitted = 0;
	jobs[1].submitted = 199000;
	decide("las");
	assert_int_equal(rep.n[0], 0);
	decide("goodput");
	assert_int_equal(rep.n[0], 4);
	assert_int_equal(rep.n[1], 0);
	/* Once it runs, it keeps its queue for a while: 1000 s later, new
	 * still waits. */
	feed_back(1000);
	decide("goodput");
	assert_int_equal(rep.n[0], 4);
}

static void
t_check(void **state)
{
	int	 bad = 7;

	(void)state;
	cluster(2, 4);
	job("a", 1, 4, linear, 4);
	job("b", 1, 4, linear, 4);
	decide("goodput");
	policy_reply_free(&rep);
	jobs[0].current = &bad;
	jobs[0].ncurrent = 1;
	assert_int_equal(policy_decide(policy_find("goodput"), &req, &rep, err,
	    sizeof err), -1);
	assert_non_null(strstr(err, "job 'a': current rank 0 is on no node"));
	jobs[0].ncurrent = 0;
	nodes[1].slots = -2;
	assert_int_equal(policy_check(&req, err, sizeof err), -1);
	assert_non_null(strstr(err, "node 1 ('n1'): slots must be in"));
	nodes[1].slots = 4;
	jobs[1].name = "a";
	assert_int_equal(policy_check(&req, err, sizeof err), -1);
	assert_non_null(strstr(err, "job 'a' is named twice"));
	jobs[1].name = "b";
	rows[1][0] = (struct policy_row){ 2, 1, 1.0 };
	assert_int_equal(policy_check(&req, err, sizeof err), -1);
	assert_non_null(strstr(err, "job 'b': speedup row 0 [2, 1, 1]"));
	rows[1][0] = (struct policy_row){ 1, 1, 1.0 };
	jobs[1].min_ranks = 5;
	assert_int_equal(policy_check(&req, err, sizeof err), -1);
	assert_non_null(strstr(err, "min_ranks <= max_ranks (5, 4)"));
	jobs[1].min_ranks = 1;
	for (int k = 0; k < 5; k++)
		cur[0][k] = 0;
	jobs[0].current = cur[0];
	jobs[0].ncurrent = 5;
	assert_int_equal(policy_check(&req, err, sizeof err), -1);
	assert_non_null(strstr(err, "more than node 'n0''s 4 slots"));
	jobs[0].ncurrent = 0;
	assert_int_equal(policy_check(&req, err, sizeof err), 0);
	assert_null(policy_find("sjf"));
}

int
main(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test_teardown(t_linear_flat, teardown),
		cmocka_unit_test_teardown(t_min_max, teardown),
		cmocka_unit_test_teardown(t_keep, teardown),
		cmocka_unit_test_teardown(t_restart_weighed, teardown),
		cmocka_unit_test_teardown(t_multi_node, teardown),
		cmocka_unit_test_teardown(t_racks, teardown),
		cmocka_unit_test_teardown(t_fifo, teardown),
		cmocka_unit_test_teardown(t_las, teardown),
		cmocka_unit_test_teardown(t_starve, teardown),
		cmocka_unit_test_teardown(t_check, teardown),
	};

	return cmocka_run_group_tests(t, NULL, NULL);
}
