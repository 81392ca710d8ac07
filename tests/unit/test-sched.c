/*
 * test-sched.c: placement (pack, spread, rack groups) and the queue
 * (priority order, backfill, refusal of what can never fit).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "backend/sched/place.h"
#include "backend/sched/queue.h"

/* racks x per_rack nodes with slots CPU slots each, plus spares. */
static void
make_cluster(struct cluster_spec *c, int racks, int per_rack, int slots,
    int spares)
{
	memset(c, 0, sizeof *c);
	c->n_nodes = racks * per_rack + spares;
	c->nodes = calloc((size_t)c->n_nodes, sizeof *c->nodes);
	for (int i = 0; i < c->n_nodes; i++) {
		struct node_spec *n = &c->nodes[i];

		snprintf(n->name, sizeof n->name, "n%03d", i);
		snprintf(n->rack, sizeof n->rack, "r%d",
		    i < racks * per_rack ? i / per_rack : racks - 1);
		n->cpu_slots = slots;
		n->spare = i >= racks * per_rack;
	}
}

static void
job(struct job_spec *j, const char *name, int ranks,
    enum spec_placement p, int group)
{
	spec_job_defaults(j);
	snprintf(j->name, sizeof j->name, "%s", name);
	j->resources.ranks = ranks;
	j->resources.placement = p;
	j->resources.group_size = group;
}

static void
t_rack_groups(void **state)
{
	struct cluster_spec c;
	struct job_spec	 j;
	int		*used, node_of[400], per_rack[4] = { 0 };
	char		 err[256];

	(void)state;
	make_cluster(&c, 4, 16, 8, 0);
	used = calloc((size_t)c.n_nodes, sizeof *used);
	job(&j, "big", 400, PLACEMENT_RACK, 100);
	assert_int_equal(place_job(&c, &j, used, node_of, err, sizeof err), 0);
	for (int g = 0; g < 4; g++) {
		/* Each group of 100 sits in one rack, and no two share one. */
		int rack = node_of[g * 100] / 16;

		for (int r = g * 100; r < g * 100 + 100; r++)
			assert_int_equal(node_of[r] / 16, rack);
		per_rack[rack]++;
	}
	for (int k = 0; k < 4; k++)
		assert_int_equal(per_rack[k], 1);
	for (int i = 0; i < c.n_nodes; i++)
		assert_true(used[i] <= 8);
	free(used);
	free(c.nodes);
}

static void
t_pack_spread_refuse(void **state)
{
	struct cluster_spec c;
	struct job_spec	 j;
	int		 used[8] = { 0 }, node_of[16];
	char		 err[256] = "";

	(void)state;
	make_cluster(&c, 2, 3, 4, 1);		/* 6 nodes x 4 + a spare */
	job(&j, "p", 6, PLACEMENT_PACK, 1);
	assert_int_equal(place_job(&c, &j, used, node_of, err, sizeof err), 0);
	assert_int_equal(node_of[0], 0);
	assert_int_equal(node_of[3], 0);
	assert_int_equal(node_of[4], 1);
	memset(used, 0, sizeof used);
	job(&j, "s", 6, PLACEMENT_SPREAD, 1);
	assert_int_equal(place_job(&c, &j, used, node_of, err, sizeof err), 0);
	for (int i = 0; i < 6; i++)
		assert_int_equal(used[i], 1);	/* one rank on every node */
	assert_int_equal(used[6], 0);		/* never the spare */
	memset(used, 0, sizeof used);
	job(&j, "huge", 25, PLACEMENT_PACK, 1);
	assert_int_equal(queue_admissible(&c, &j, err, sizeof err), -1);
	assert_non_null(strstr(err, "needs 25 cpu slots; the cluster has 24 free"));
	job(&j, "groups", 16, PLACEMENT_RACK, 13);	/* a group > any rack */
	j.resources.strict = true;
	assert_int_equal(queue_admissible(&c, &j, err, sizeof err), -1);
	assert_non_null(strstr(err, "no rack has 13 free slots"));
	free(c.nodes);
}

/* The default group follows the job: 400 ranks on 4 racks are 4 x 100,
 * each group in a rack of its own. */
static void
t_rack_default_group(void **state)
{
	struct cluster_spec c;
	struct job_spec	 j;
	int		*used, node_of[400], per_rack[4] = { 0 };
	char		 err[256];

	(void)state;
	make_cluster(&c, 4, 16, 8, 0);
	used = calloc((size_t)c.n_nodes, sizeof *used);
	spec_job_defaults(&j);
	snprintf(j.name, sizeof j.name, "big");
	j.resources.ranks = 400;
	assert_int_equal(j.resources.placement, PLACEMENT_RACK);
	assert_int_equal(j.resources.group_size, 0);
	assert_int_equal(place_job(&c, &j, used, node_of, err, sizeof err), 0);
	assert_string_equal(err, "");
	for (int g = 0; g < 4; g++) {
		int rack = node_of[g * 100] / 16;

		for (int r = g * 100; r < g * 100 + 100; r++)
			assert_int_equal(node_of[r] / 16, rack);
		per_rack[rack]++;
	}
	for (int k = 0; k < 4; k++)
		assert_int_equal(per_rack[k], 1);
	free(used);
	free(c.nodes);
}

/* The embedded cluster (racks r1: two 2-slot nodes; r2: one, and a
 * spare): a job with no placement keys that fits in a rack stays in one
 * rack, whatever its size; one that fits in none is cut over the racks;
 * placement: spread still spreads. */
static void
t_rack_stays(void **state)
{
	struct cluster_spec c;
	struct job_spec	 j;
	int		 used[4], node_of[5];
	char		 err[256];

	(void)state;
	spec_cluster_default(&c);
	for (int ranks = 1; ranks <= 4; ranks++) {
		memset(used, 0, sizeof used);
		job(&j, "fits", ranks, PLACEMENT_RACK, 0);
		assert_int_equal(place_job(&c, &j, used, node_of, err,
		    sizeof err), 0);
		for (int r = 1; r < ranks; r++)
			assert_string_equal(c.nodes[node_of[r]].rack,
			    c.nodes[node_of[0]].rack);
		assert_string_equal(err, "");
	}
	memset(used, 0, sizeof used);
	job(&j, "wide", 5, PLACEMENT_RACK, 0);
	assert_int_equal(place_job(&c, &j, used, node_of, err, sizeof err), 0);
	assert_true(used[0] + used[1] > 0 && used[2] > 0);
	memset(used, 0, sizeof used);
	job(&j, "spread", 2, PLACEMENT_SPREAD, 0);
	assert_int_equal(place_job(&c, &j, used, node_of, err, sizeof err), 0);
	assert_int_not_equal(node_of[0], node_of[1]);
	spec_cluster_free(&c);
}

/* Two racks of one one-slot node each: a 2-rank job with no placement
 * keys is placed (groups of 1); an explicit group of 2 is split over the
 * racks and the note says so; strict refuses it as before. */
static void
t_rack_split(void **state)
{
	struct cluster_spec c;
	struct job_spec	 j;
	int		 used[2] = { 0 }, node_of[2];
	char		 err[256];

	(void)state;
	make_cluster(&c, 2, 1, 1, 0);
	snprintf(c.nodes[0].rack, sizeof c.nodes[0].rack, "a");
	snprintf(c.nodes[1].rack, sizeof c.nodes[1].rack, "b");
	spec_job_defaults(&j);
	snprintf(j.name, sizeof j.name, "two");
	j.resources.ranks = 2;
	assert_int_equal(place_job(&c, &j, used, node_of, err, sizeof err), 0);
	assert_int_equal(used[0], 1);
	assert_int_equal(used[1], 1);
	assert_string_equal(err, "");
	memset(used, 0, sizeof used);
	j.resources.group_size = 2;
	assert_int_equal(queue_admissible(&c, &j, err, sizeof err), 0);
	assert_int_equal(place_job(&c, &j, used, node_of, err, sizeof err), 0);
	assert_int_not_equal(node_of[0], node_of[1]);
	assert_string_equal(err, "group 1 split over racks a, b: no rack has "
	    "2 free slots");
	memset(used, 0, sizeof used);
	j.resources.strict = true;
	assert_int_equal(place_job(&c, &j, used, node_of, err, sizeof err), -1);
	assert_non_null(strstr(err, "no rack has 2 free slots for a group "
	    "(group_size 2, strict)"));
	assert_int_equal(used[0] + used[1], 0);
	free(c.nodes);
}

static void
t_priority_and_backfill(void **state)
{
	struct cluster_spec c;
	struct job_spec	 lo, hi, big, small;
	int		 used[4] = { 0 }, n_lo[8], n_hi[8], n_big[16], n_small[2];
	struct queue_entry q[4] = {
		{ .spec = &lo, .submitted = 1, .node_of = n_lo },
		{ .spec = &hi, .submitted = 2, .node_of = n_hi },
		{ .spec = &big, .submitted = 3, .node_of = n_big },
		{ .spec = &small, .submitted = 4, .node_of = n_small },
	};

	(void)state;
	make_cluster(&c, 1, 3, 4, 0);		/* 12 slots */
	job(&lo, "lo", 8, PLACEMENT_PACK, 1);
	lo.priority = PRIORITY_LOW;
	job(&hi, "hi", 8, PLACEMENT_PACK, 1);
	hi.priority = PRIORITY_HIGH;
	job(&big, "big", 10, PLACEMENT_PACK, 1);
	job(&small, "small", 2, PLACEMENT_PACK, 1);
	/* hi goes first though submitted later; lo and big do not fit
	 * behind it; small backfills into what is left. */
	assert_int_equal(queue_schedule(&c, used, q, 4), 2);
	assert_true(q[1].placed);
	assert_false(q[0].placed);
	assert_false(q[2].placed);
	assert_true(q[3].placed);
	/* When hi ends, lo (older than big, same class... lower priority)
	 * and big compete: normal-priority big goes before low lo. */
	for (int r = 0; r < 8; r++)
		used[n_hi[r]]--;
	assert_int_equal(queue_schedule(&c, used, q, 4), 1);
	assert_true(q[2].placed);
	assert_false(q[0].placed);
	free(c.nodes);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_rack_groups),
		cmocka_unit_test(t_pack_spread_refuse),
		cmocka_unit_test(t_rack_default_group),
		cmocka_unit_test(t_rack_stays),
		cmocka_unit_test(t_rack_split),
		cmocka_unit_test(t_priority_and_backfill),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
