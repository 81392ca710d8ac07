/*
 * test-detect.c: the detectors (backend/sched/detect.h) driven with
 * synthetic series: a straggler, low utilisation, a leak slope over the
 * limit, a heartbeat timeout (kill, then lost; lost at once when its
 * node is silent too), the warm-up that is not a leak, the ranks that
 * linger in a re-formation, ranks a re-attach found absent from their
 * agents (the generation restarts, they are left behind), the failover that is due (and waits on a
 * silent rank), the order of the table, and a healthy job on which
 * nothing fires.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "backend/sched/detect.h"

#define NR	4	/* ranks, on nodes 0..3 */
#define NN	5	/* nodes; node 4 is the spare */
#define NOW	1000.0
#define MIB	1048576.0

struct fix {
	struct job_spec	 spec;
	struct series	 compute[NR], step_ms[NR], comm_ms[NR], rss[NR], step[NR];
	struct detect_rank ranks[NR];
	struct detect_node nodes[NN];
	struct detect_job job;
	struct detect_decision d[NR + 1];
};

static const char *node_names[NN] = { "n0", "n1", "n2", "n3", "spare0" };

/* Rank r: n samples of compute, step and comm time per step. */
static void
times(struct fix *f, int r, int n, float compute, float step, float comm)
{
	for (int i = 0; i < n; i++) {
		series_push(&f->compute[r], compute);
		series_push(&f->step_ms[r], step);
		series_push(&f->comm_ms[r], comm);
	}
}

/* Rank r: RSS at steps first..last (one sample a step), base plus
 * per_step bytes a step. */
static void
memory(struct fix *f, int r, int first, int last, double base, double per_step)
{
	for (int s = first; s <= last; s++) {
		series_push(&f->step[r], (float)s);
		series_push(&f->rss[r], (float)(base + per_step * (s - first)));
	}
}

/* A healthy job: every rank fresh, a full window of even times, flat
 * memory over 300 steps, a spare up and free. */
static struct fix *
healthy(void)
{
	struct fix	*f = calloc(1, sizeof *f);

	spec_job_defaults(&f->spec);
	snprintf(f->spec.name, sizeof f->spec.name, "j");
	f->spec.resources.ranks = NR;
	for (int n = 0; n < NN; n++)
		f->nodes[n] = (struct detect_node){ .name = node_names[n],
		    .spare = n == NN - 1, .up = true, .heard = NOW - 0.5,
		    .cpu_free = 4 };
	for (int r = 0; r < NR; r++) {
		times(f, r, 60, 100, 120, 10);
		memory(f, r, 0, 300, 512 * MIB, 0);
		f->ranks[r] = (struct detect_rank){ .node = r, .running = true,
		    .last_seen = NOW - 1, .compute_ms = &f->compute[r],
		    .step_ms = &f->step_ms[r], .comm_ms = &f->comm_ms[r],
		    .rss = &f->rss[r], .step = &f->step[r] };
	}
	f->job = (struct detect_job){ .name = "j", .spec = &f->spec,
	    .world = NR, .generation = 1, .ranks = f->ranks,
	    .nodes = f->nodes, .nnodes = NN, .grace_until = NOW - 100,
	    .now = NOW };
	return f;
}

static int
run(struct fix *f, const char *name)
{
	const struct detector *dt = detect_find(name);

	assert_non_null(dt);
	memset(f->d, 0, sizeof f->d);
	return dt->run(&f->job, f->d, NR + 1);
}

/* The one decision of detector name: kind, rank and reason. */
static void
decided(struct fix *f, const char *name, enum detect_kind kind, int rank,
    const char *reason)
{
	assert_int_equal(run(f, name), 1);
	assert_int_equal(f->d[0].kind, kind);
	assert_int_equal(f->d[0].rank, rank);
	assert_string_equal(f->d[0].reason, reason);
}

static void
t_table(void **state)
{
	const char	*names[] = { "absent", "lingering", "failover",
	    "heartbeat", "straggler", "util", "leak" };
	int		 n = 0;

	(void)state;
	while (detect_table[n] != NULL)
		n++;
	assert_int_equal(n, 7);
	for (int i = 0; i < 7; i++)
		assert_string_equal(detect_table[i]->name, names[i]);
	assert_null(detect_find("nonesuch"));
}

static void
t_quiet(void **state)
{
	struct fix	*f = healthy();

	(void)state;
	for (int i = 0; detect_table[i] != NULL; i++)
		assert_int_equal(run(f, detect_table[i]->name), 0);
	assert_int_equal(detect_run(&f->job, f->d, NR + 1), 0);
	free(f);
}

static void
t_straggler(void **state)
{
	struct fix	*f = healthy();
	float		 c[NR] = { 100, 100, 190, 210 };

	(void)state;
	/* Rank 3's 210 is over twice the others' median (100), not their
	 * mean (130); rank 2's 190 is under twice its others' (100). */
	for (int r = 0; r < NR; r++)
		times(f, r, 60, c[r], 250, 10);
	assert_int_equal(run(f, "straggler"), 1);
	assert_int_equal(f->d[0].kind, DETECT_MIGRATE);
	assert_int_equal(f->d[0].rank, 3);
	assert_int_equal(f->d[0].node, 4);	/* the spare */
	assert_string_equal(f->d[0].reason, "straggler: 210.0 ms of compute "
	    "per step against a median of 100.0 ms over 60 s");
	/* It comes before the leak detector, whatever the memory does. */
	memory(f, 0, 301, 500, 512 * MIB, 2 * MIB);
	assert_int_equal(detect_run(&f->job, f->d, NR + 1), 1);
	assert_int_equal(f->d[0].kind, DETECT_MIGRATE);
	/* No spare up: it stays (node -1), and the leak still waits. */
	f->nodes[4].up = false;
	assert_int_equal(detect_run(&f->job, f->d, NR + 1), 1);
	assert_int_equal(f->d[0].kind, DETECT_MIGRATE);
	assert_int_equal(f->d[0].node, -1);
	/* Nor one linked but silent past the heartbeat timeout. */
	f->nodes[4].up = true;
	f->nodes[4].heard = NOW - 11;
	assert_int_equal(run(f, "straggler"), 1);
	assert_int_equal(f->d[0].node, -1);
	free(f);

	/* No compute measured on the others: nothing to compare with. */
	f = healthy();
	for (int r = 0; r < NR; r++)
		times(f, r, 60, r == 0 ? 1 : 0, 250, 10);
	assert_int_equal(run(f, "straggler"), 0);
	free(f);

	/* Exactly twice is not over twice. */
	f = healthy();
	times(f, 1, 60, 200, 250, 10);
	for (int r = 0; r < NR; r++)
		if (r != 1)
			times(f, r, 60, 100, 250, 10);
	assert_int_equal(run(f, "straggler"), 0);
	/* A rank short of a full window (rank 3, relaunched: 30 samples)
	 * holds the judgement back, even on a straggler among the others. */
	times(f, 1, 60, 400, 450, 10);
	memset(&f->compute[3], 0, sizeof f->compute[3]);
	times(f, 3, 30, 100, 250, 10);
	assert_int_equal(run(f, "straggler"), 0);
	assert_int_equal(run(f, "util"), 0);
	times(f, 3, 30, 100, 250, 10);
	assert_int_equal(run(f, "straggler"), 1);
	assert_int_equal(f->d[0].rank, 1);
	free(f);
}

static void
t_low_util(void **state)
{
	struct fix	*f = healthy();

	(void)state;
	/* Rank 1 computes 60 of the 190 ms it does not wait: 32% under 50%;
	 * the others 100 of 190: 53%. */
	for (int r = 0; r < NR; r++)
		times(f, r, 60, r == 1 ? 60 : 100, 200, 10);
	assert_int_equal(run(f, "straggler"), 0);
	assert_int_equal(run(f, "util"), 1);
	assert_int_equal(f->d[0].kind, DETECT_MIGRATE);
	assert_int_equal(f->d[0].rank, 1);
	assert_int_equal(f->d[0].node, 4);
	assert_string_equal(f->d[0].reason, "utilisation 32% under 50% for "
	    "60 s (the others: 53%)");
	/* Every rank as low: nobody is worse off than the rest. */
	for (int r = 0; r < NR; r++)
		times(f, r, 60, 60, 200, 10);
	assert_int_equal(run(f, "util"), 0);
	free(f);

	/* A rank that waits on its peers for most of the step is not
	 * blamed: 100 of the 105 ms it does not wait. */
	f = healthy();
	for (int r = 0; r < NR; r++)
		times(f, r, 60, 100, r == 2 ? 300 : 190, r == 2 ? 195 : 10);
	assert_int_equal(run(f, "util"), 0);
	free(f);
}

static void
t_leak(void **state)
{
	struct fix	*f = healthy();

	(void)state;
	/* 0.5 MiB a step: 50 MiB per 100 steps, under the 64 MiB limit. */
	memory(f, 2, 301, 500, 512 * MIB, 0.5 * MIB);
	assert_int_equal(run(f, "leak"), 0);
	/* 1 MiB a step over the last 100: 100 MiB, over it. */
	memory(f, 2, 501, 700, 700 * MIB, 1 * MIB);
	assert_int_equal(run(f, "leak"), 1);
	assert_int_equal(f->d[0].kind, DETECT_RESTART);
	assert_int_equal(f->d[0].rank, 2);
	assert_string_equal(f->d[0].reason, "rank 2: memory grows 100.0 MiB per "
	    "100 steps (limit 64.0 MiB); checkpoint and restart");
	assert_int_equal(detect_run(&f->job, f->d, NR + 1), 1);
	assert_int_equal(f->d[0].kind, DETECT_RESTART);
	free(f);
}

static void
t_warmup(void **state)
{
	struct fix	*f = healthy();

	(void)state;
	/* A fresh generation: 60 steps, memory rising 4 MiB a step all the
	 * way (240 MiB, the slope 400 MiB per 100 steps): the history does
	 * not reach back 100 steps, so it is a warm-up, not a leak. */
	for (int r = 0; r < NR; r++) {
		memset(&f->step[r], 0, sizeof f->step[r]);
		memset(&f->rss[r], 0, sizeof f->rss[r]);
		memory(f, r, 0, 60, 256 * MIB, r == 0 ? 4 * MIB : 0);
	}
	assert_int_equal(run(f, "leak"), 0);
	assert_int_equal(detect_run(&f->job, f->d, NR + 1), 0);
	/* Then flat: once the window is full it holds only the flat part. */
	memory(f, 0, 61, 200, 496 * MIB, 0);
	assert_int_equal(run(f, "leak"), 0);
	/* The same rise kept up past a full window is a leak. */
	memory(f, 0, 201, 320, 496 * MIB, 4 * MIB);
	assert_int_equal(run(f, "leak"), 1);
	assert_int_equal(f->d[0].rank, 0);
	free(f);
}

static void
t_heartbeat(void **state)
{
	struct fix	*f = healthy();

	(void)state;
	f->ranks[1].last_seen = NOW - 10;	/* at the timeout, not past */
	assert_int_equal(run(f, "heartbeat"), 0);
	f->ranks[1].last_seen = NOW - 12;
	f->ranks[2].last_seen = NOW - 30;
	assert_int_equal(run(f, "heartbeat"), 1);	/* one a round */
	assert_int_equal(f->d[0].kind, DETECT_KILL);
	assert_int_equal(f->d[0].rank, 1);
	assert_string_equal(f->d[0].reason, "rank 1: no heartbeat for 12 s "
	    "(timeout 10 s); killing it");
	/* Killed 5 s ago: wait for the agent; rank 2 is next. */
	f->ranks[1].kill_sent = NOW - 5;
	assert_int_equal(run(f, "heartbeat"), 1);
	assert_int_equal(f->d[0].kind, DETECT_KILL);
	assert_int_equal(f->d[0].rank, 2);
	f->ranks[2].kill_sent = NOW - 5;
	assert_int_equal(run(f, "heartbeat"), 0);
	/* The kill not acted on for longer than the timeout: lost. */
	f->ranks[1].kill_sent = NOW - 11;
	decided(f, "heartbeat", DETECT_LOST, 1, "lost: no heartbeat and no "
	    "answer from the agent of n1");
	/* Not while paused, in the grace after a launch or re-forming; not
	 * a paused rank, nor one that has exited. */
	f->job.paused = true;
	assert_int_equal(run(f, "heartbeat"), 0);
	f->job.paused = false;
	f->job.grace_until = NOW + 1;
	assert_int_equal(run(f, "heartbeat"), 0);
	f->job.grace_until = 0;
	f->ranks[1].paused = true;
	f->ranks[2].running = false;
	assert_int_equal(run(f, "heartbeat"), 0);
	f->ranks[1].paused = false;
	assert_int_equal(run(f, "heartbeat"), 1);
	f->job.reforming = true;
	f->job.reform_since = NOW;
	assert_int_equal(run(f, "heartbeat"), 0);
	free(f);
}

static void
t_heartbeat_cut_off(void **state)
{
	struct fix	*f = healthy();

	(void)state;
	/* Rank 1 silent, and nothing from its node's agent either for over
	 * the timeout (a partition): no kill is waited for, it is lost. */
	f->ranks[1].last_seen = NOW - 12;
	f->nodes[1].heard = NOW - 11;
	decided(f, "heartbeat", DETECT_LOST, 1, "lost: no heartbeat for 12 s, "
	    "and nothing from the agent of n1 for 11 s");
	f->nodes[1].up = false;
	decided(f, "heartbeat", DETECT_LOST, 1, "lost: no heartbeat for 12 s, "
	    "and no link to the agent of n1");
	/* Its node heard within the timeout: the kill comes first. */
	f->nodes[1].up = true;
	f->nodes[1].heard = NOW - 10;
	assert_int_equal(run(f, "heartbeat"), 1);
	assert_int_equal(f->d[0].kind, DETECT_KILL);
	/* A silent node with no silent rank is not the heartbeat's. */
	f->ranks[1].last_seen = NOW - 1;
	f->nodes[1].heard = NOW - 30;
	assert_int_equal(run(f, "heartbeat"), 0);
	free(f);
}

static void
t_absent(void **state)
{
	struct fix	*f = healthy();

	(void)state;
	f->job.grace_until = NOW + 5;		/* just re-attached */
	f->ranks[1].absent_since = NOW - 0.5;	/* its exit may follow */
	assert_int_equal(run(f, "absent"), 0);
	f->ranks[1].absent_since = NOW - 1;
	f->ranks[3].absent_since = NOW - 2;
	f->ranks[0].absent_since = NOW - 3;
	f->ranks[0].running = false;		/* its exit came in */
	assert_int_equal(run(f, "absent"), 3);
	assert_int_equal(f->d[0].kind, DETECT_RESTART);
	assert_int_equal(f->d[0].rank, 1);
	assert_string_equal(f->d[0].reason, "generation 1 never started: the "
	    "agent of n1 does not have rank 1 (2 ranks missing; the backend "
	    "that journalled the launch died before it went out)");
	assert_int_equal(f->d[1].kind, DETECT_LEAVE);
	assert_int_equal(f->d[1].rank, 1);
	assert_string_equal(f->d[1].reason, "rank 1: the agent of n1 does not "
	    "have it (its launch never arrived)");
	assert_int_equal(f->d[2].kind, DETECT_LEAVE);
	assert_int_equal(f->d[2].rank, 3);
	/* In a re-formation they are only left behind, paused or not. */
	f->job.reforming = true;
	f->job.paused = true;
	assert_int_equal(run(f, "absent"), 2);
	assert_int_equal(f->d[0].kind, DETECT_LEAVE);
	assert_int_equal(f->d[1].rank, 3);
	/* It comes first: the lingering ranks' kill is not for them. */
	f->job.reform_since = NOW - 60;
	assert_int_equal(detect_run(&f->job, f->d, NR + 1), 2);
	assert_int_equal(f->d[0].kind, DETECT_LEAVE);
	free(f);
}

static void
t_lingering(void **state)
{
	struct fix	*f = healthy();

	(void)state;
	assert_int_equal(run(f, "lingering"), 0);	/* not re-forming */
	f->job.reforming = true;
	f->job.reform_since = NOW - 15;		/* the timeout + 5, not past */
	assert_int_equal(run(f, "lingering"), 0);
	f->job.reform_since = NOW - 16;
	f->ranks[0].running = false;		/* exited in time */
	f->ranks[2].kill_sent = NOW - 1;	/* already killed */
	assert_int_equal(run(f, "lingering"), 2);
	assert_int_equal(f->d[0].kind, DETECT_KILL);
	assert_int_equal(f->d[0].rank, 1);
	assert_string_equal(f->d[0].reason, "");	/* no event */
	assert_int_equal(f->d[1].kind, DETECT_KILL);
	assert_int_equal(f->d[1].rank, 3);
	/* Past twice the timeout + 10 a killed rank is left behind; one not
	 * killed yet is killed first. */
	f->job.reform_since = NOW - 31;
	f->ranks[0].running = true;
	for (int r = 1; r < NR; r++)
		f->ranks[r].kill_sent = NOW - 15;
	assert_int_equal(detect_run(&f->job, f->d, NR + 1), 4);
	assert_int_equal(f->d[0].kind, DETECT_KILL);
	assert_int_equal(f->d[0].rank, 0);
	for (int k = 1; k < 4; k++) {
		assert_int_equal(f->d[k].kind, DETECT_LEAVE);
		assert_int_equal(f->d[k].rank, k);
	}
	assert_string_equal(f->d[1].reason, "rank 1 of generation 1 does not "
	    "exit; leaving it behind");
	free(f);
}

static void
t_failover_due(void **state)
{
	struct fix	*f = healthy();

	(void)state;
	f->job.fail_since = NOW - 1.5;		/* the 2 s are not up */
	assert_int_equal(run(f, "failover"), 0);
	f->job.fail_since = NOW - 2;
	f->job.paused = true;			/* due even so */
	assert_int_equal(detect_run(&f->job, f->d, NR + 1), 1);
	assert_int_equal(f->d[0].kind, DETECT_FAILOVER);
	assert_int_equal(f->d[0].rank, -1);
	f->job.reforming = true;
	assert_int_equal(run(f, "failover"), 0);
	/* Rank 0 failed on the exchange while rank 3 fell silent (a
	 * partition): the silent rank is judged first, so that it is the
	 * one moved, not the bystander. */
	f->job.reforming = false;
	f->job.paused = false;
	f->ranks[0].running = false;
	f->ranks[3].last_seen = NOW - 11;
	assert_int_equal(run(f, "failover"), 0);
	f->nodes[3].heard = NOW - 11;
	assert_int_equal(detect_run(&f->job, f->d, NR + 1), 1);
	assert_int_equal(f->d[0].kind, DETECT_LOST);
	assert_int_equal(f->d[0].rank, 3);
	/* Once it is no longer running (lost), the failover is due. */
	f->ranks[3].running = false;
	assert_int_equal(run(f, "failover"), 1);
	assert_int_equal(f->d[0].kind, DETECT_FAILOVER);
	free(f);
}

static void
t_order(void **state)
{
	struct fix	*f = healthy();

	(void)state;
	/* A silent rank, a straggler and a leak at once: the silent rank
	 * is dealt with first, and alone. */
	f->ranks[3].last_seen = NOW - 20;
	for (int r = 0; r < NR; r++)
		times(f, r, 60, r == 0 ? 500 : 100, 600, 10);
	memory(f, 1, 301, 500, 512 * MIB, 2 * MIB);
	assert_int_equal(detect_run(&f->job, f->d, NR + 1), 1);
	assert_int_equal(f->d[0].kind, DETECT_KILL);
	assert_int_equal(f->d[0].rank, 3);
	f->ranks[3].last_seen = NOW - 1;
	assert_int_equal(detect_run(&f->job, f->d, NR + 1), 1);
	assert_int_equal(f->d[0].kind, DETECT_MIGRATE);
	assert_int_equal(f->d[0].rank, 0);
	free(f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_table),
		cmocka_unit_test(t_quiet),
		cmocka_unit_test(t_straggler),
		cmocka_unit_test(t_low_util),
		cmocka_unit_test(t_leak),
		cmocka_unit_test(t_warmup),
		cmocka_unit_test(t_heartbeat),
		cmocka_unit_test(t_heartbeat_cut_off),
		cmocka_unit_test(t_absent),
		cmocka_unit_test(t_lingering),
		cmocka_unit_test(t_failover_due),
		cmocka_unit_test(t_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
