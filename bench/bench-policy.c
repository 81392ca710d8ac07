/*
 * bench-policy.c: `hunter bench sched-policy`: one decision of each
 * scheduling policy for 1024 nodes of 8 slots in 16 racks and 200
 * elastic jobs (1 to 64 ranks, a speedup table each from a goodput model
 * drawn from a fixed seed: compute 5-50 ms fixed and 0.2-2 ms a sample,
 * an exchange of 2-20 ms within a node and 10-100 ms across, noise
 * scales of 100-10000 samples; each count offered on its fewest nodes
 * and up to three more).  Timed cold (no job running) and warm (the cold
 * reply fed back as the current allocations, 60 s later), through
 * policy_decide and through the JSON line that `hunter sched decide`
 * reads and writes; the median of 7 runs each, against the 100 ms a
 * decision the issue asks for.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/rng.h"
#include "lib/xmalloc.h"
#include "backend/sched/goodput.h"
#include "backend/sched/policy-json.h"
#include "bench/bench.h"

#define BP_NODES	1024
#define BP_SLOTS	8
#define BP_RACKS	16
#define BP_JOBS		200
#define BP_RANKS	64
#define BP_MORE		3	/* node counts offered past the fewest */
#define BP_RUNS		7

struct bp {
	struct policy_node nodes[BP_NODES];
	char		 names[BP_NODES][8];
	char		 rack_names[BP_RACKS][8];
	const char	*racks[BP_RACKS];
	struct policy_job jobs[BP_JOBS];
	char		 job_names[BP_JOBS][8];
	struct policy_row *rows;
	int		*current;
	struct policy_request req;
};

static double
bp_uniform(struct rng *r, double lo, double hi)
{
	return lo + (hi - lo) * rng_float(r);
}

static void
bp_make(struct bp *b)
{
	struct rng r;
	int	 used = 0;

	rng_seed(&r, 42, 25);
	for (int k = 0; k < BP_RACKS; k++) {
		snprintf(b->rack_names[k], sizeof b->rack_names[k], "r%d", k);
		b->racks[k] = b->rack_names[k];
	}
	for (int i = 0; i < BP_NODES; i++) {
		snprintf(b->names[i], sizeof b->names[i], "n%d", i);
		b->nodes[i] = (struct policy_node){ b->names[i], BP_SLOTS,
		    i / (BP_NODES / BP_RACKS) };
	}
	b->rows = xcalloc((size_t)BP_JOBS * BP_RANKS * (BP_MORE + 1),
	    sizeof *b->rows);
	b->current = xcalloc((size_t)BP_JOBS * BP_RANKS, sizeof *b->current);
	for (int j = 0; j < BP_JOBS; j++) {
		struct goodput_job g = { { bp_uniform(&r, 0.005, 0.05),
		    bp_uniform(&r, 0.0002, 0.002), bp_uniform(&r, 0.002, 0.02),
		    0.0005, bp_uniform(&r, 0.01, 0.1), 0.002, 1, 0 },
		    bp_uniform(&r, 100, 10000), 64, 4096, 128, 0, 0 };
		struct policy_row *rows = &b->rows[used];
		double	 base = goodput_best(&g, 1, 1, NULL);
		int	 n = 0;

		for (int k = 1; k <= BP_RANKS; k++) {
			int	 lo = (k + BP_SLOTS - 1) / BP_SLOTS;

			for (int nd = lo; nd <= k && nd <= lo + BP_MORE; nd++)
				rows[n++] = (struct policy_row){ nd, k,
				    goodput_best(&g, nd, k, NULL) / base };
		}
		used += n;
		snprintf(b->job_names[j], sizeof b->job_names[j], "j%d", j);
		b->jobs[j] = (struct policy_job){ b->job_names[j], j * 30.0,
		    BP_JOBS * 30.0 - j * 30.0, 0, 0, 1, BP_RANKS, true, rows,
		    n, &b->current[j * BP_RANKS], 0 };
	}
	b->req = (struct policy_request){ BP_JOBS * 30.0, 60, 30, b->nodes,
	    BP_NODES, b->racks, BP_RACKS, b->jobs, BP_JOBS };
}

static int
bp_double_cmp(const void *a, const void *b)
{
	double	 x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of BP_RUNS decisions (json: the whole line's round trip),
 * in ms; the last reply into rep.  -1 on a failure. */
static double
bp_time(const struct policy *p, struct bp *b, bool json,
    struct policy_reply *rep)
{
	double	 t[BP_RUNS];
	char	 err[512], *line = NULL;

	if (json) {
		struct policy_reply r0;

		if (policy_decide(p, &b->req, &r0, err, sizeof err) != 0)
			return -1;
		line = policy_json_reply(&b->req, &r0);	/* warm-up, size */
		free(line);
		policy_reply_free(&r0);
	}
	for (int i = 0; i < BP_RUNS; i++) {
		struct policy_doc doc;
		char	*in = NULL;
		double	 t0;

		if (json)
			in = policy_json_request(&b->req);
		t0 = clock_mono();
		if (json) {
			if (policy_json_read(&doc, in, strlen(in), err,
			    sizeof err) != 0 || policy_decide(p, &doc.req, rep,
			    err, sizeof err) != 0)
				return -1;
			line = policy_json_reply(&doc.req, rep);
			policy_json_free(&doc);
			free(line);
		} else if (policy_decide(p, &b->req, rep, err, sizeof err) != 0)
			return -1;
		t[i] = 1e3 * (clock_mono() - t0);
		free(in);
		if (i + 1 < BP_RUNS)
			policy_reply_free(rep);
	}
	qsort(t, BP_RUNS, sizeof *t, bp_double_cmp);
	return t[BP_RUNS / 2];
}

/* The reply as the current allocations, a minute on. */
static void
bp_feed(struct bp *b, const struct policy_reply *rep)
{
	for (int j = 0; j < BP_JOBS; j++) {
		if (rep->n[j] > 0)
			memcpy(b->current + j * BP_RANKS, rep->node_of[j],
			    (size_t)rep->n[j] * sizeof(int));
		b->jobs[j].ncurrent = rep->n[j];
		b->jobs[j].age += 60;
		b->jobs[j].attained += 60 * rep->n[j];
	}
	b->req.time += 60;
}

static int
policy_bench(void)
{
	struct bp *b = xcalloc(1, sizeof *b);
	int	 rc = 0;

	bp_make(b);
	printf("sched-policy: %d nodes x %d slots in %d racks, %d elastic jobs "
	    "(1-%d ranks, tables of up to %d node counts a count), median of "
	    "%d\n", BP_NODES, BP_SLOTS, BP_RACKS, BP_JOBS, BP_RANKS,
	    BP_MORE + 1, BP_RUNS);
	printf("  %-8s %12s %12s %12s %12s %8s\n", "policy", "cold ms",
	    "warm ms", "cold JSON", "warm JSON", "ranks");
	for (int p = 0; policy_table[p] != NULL && rc == 0; p++) {
		struct policy_reply rep;
		double	 c, w, cj, wj;
		int	 ranks = 0;

		for (int j = 0; j < BP_JOBS; j++) {
			b->jobs[j].ncurrent = 0;
			b->jobs[j].age = BP_JOBS * 30.0 - j * 30.0;
			b->jobs[j].attained = 0;
		}
		b->req.time = BP_JOBS * 30.0;
		cj = bp_time(policy_table[p], b, true, &rep);
		policy_reply_free(&rep);
		c = bp_time(policy_table[p], b, false, &rep);
		bp_feed(b, &rep);
		for (int j = 0; j < BP_JOBS; j++)
			ranks += rep.n[j];
		policy_reply_free(&rep);
		w = bp_time(policy_table[p], b, false, &rep);
		policy_reply_free(&rep);
		wj = bp_time(policy_table[p], b, true, &rep);
		policy_reply_free(&rep);
		if (c < 0 || w < 0 || cj < 0 || wj < 0) {
			fprintf(stderr, "sched-policy: %s failed\n",
			    policy_table[p]->name);
			rc = 1;
			break;
		}
		printf("  %-8s %12.2f %12.2f %12.2f %12.2f %8d\n",
		    policy_table[p]->name, c, w, cj, wj, ranks);
	}
	printf("  target: under 100 ms a decision\n");
	free(b->rows);
	free(b->current);
	free(b);
	return rc;
}

const struct bench_entry bench_policy_entry = {
	.name = "sched-policy",
	.summary = "a decision of each scheduling policy for 1024 nodes and 200 "
	    "jobs, as structs and as JSON lines",
	.run = policy_bench,
};
