/*
 * bench-sched.c: `hunter bench sched`: a simulated cluster of 1024 nodes
 * in 16 racks (8 CPU slots each, 16 spares held back) and a trace of 500
 * jobs drawn from a fixed seed (Poisson arrivals, 8..512 ranks in rack
 * groups of up to 64, three priorities, runtimes from 10 minutes to 2
 * hours, offered load above capacity).  It
 * replays the trace through the real queue and placement code and through
 * a static first-fit FIFO baseline (the head blocks everything behind it),
 * and prints the placement time per decision and the slot utilisation of
 * each between the first and the last arrival.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/rng.h"
#include "lib/xmalloc.h"
#include "backend/sched/place.h"
#include "backend/sched/queue.h"
#include "bench/bench.h"

#define SB_NODES	1024
#define SB_RACKS	16
#define SB_SLOTS	8
#define SB_SPARES	16
#define SB_JOBS		500

struct sb_job {
	struct job_spec	 spec;
	double		 arrive, runtime, start, end;
	int		*node_of;
	bool		 started, done;
};

static void
sb_cluster(struct cluster_spec *c)
{
	memset(c, 0, sizeof *c);
	c->n_nodes = SB_NODES;
	c->nodes = xcalloc(SB_NODES, sizeof *c->nodes);
	for (int i = 0; i < SB_NODES; i++) {
		snprintf(c->nodes[i].name, sizeof c->nodes[i].name, "n%04d", i);
		snprintf(c->nodes[i].rack, sizeof c->nodes[i].rack, "r%02d",
		    i / (SB_NODES / SB_RACKS));
		c->nodes[i].cpu_slots = SB_SLOTS;
		c->nodes[i].spare = i % (SB_NODES / SB_SPARES) == 0;
	}
}

static void
sb_trace(struct sb_job *j, uint64_t seed)
{
	static const int sizes[] = { 8, 16, 32, 64, 128, 256, 512 };
	struct rng	 r;
	double		 t = 0;

	rng_seed(&r, seed, 7);
	for (int i = 0; i < SB_JOBS; i++) {
		spec_job_defaults(&j[i].spec);
		snprintf(j[i].spec.name, sizeof j[i].spec.name, "j%03d", i);
		j[i].spec.resources.ranks = sizes[rng_below(&r, 7)];
		j[i].spec.resources.placement = PLACEMENT_RACK;
		/* Groups of at most 64 ranks (8 nodes) must share a rack. */
		j[i].spec.resources.group_size = j[i].spec.resources.ranks > 64 ?
		    64 : j[i].spec.resources.ranks;
		j[i].spec.priority = (enum spec_priority)rng_below(&r, 3);
		t += -60.0 * __builtin_log(1.0 - rng_float(&r) * 0.999);
		j[i].arrive = t;
		j[i].runtime = 600 + rng_float(&r) * 7200;
		j[i].node_of = xcalloc((size_t)j[i].spec.resources.ranks, sizeof(int));
	}
}

/* Replay the trace; backfill selects hunter's queue, else strict FIFO
 * first fit.  Returns utilisation; adds decisions and their time. */
static double
sb_run(const struct cluster_spec *c, struct sb_job *j, int backfill,
    long *decisions, double *secs)
{
	int		*used = xcalloc(SB_NODES, sizeof *used);
	struct queue_entry *q = xcalloc(SB_JOBS, sizeof *q);
	int		*qi = xcalloc(SB_JOBS, sizeof *qi);
	double		 now = 0, busy = 0, w0 = j[0].arrive;
	double		 w1 = j[SB_JOBS - 1].arrive;
	int		 done = 0, total_slots = (SB_NODES - SB_SPARES) * SB_SLOTS;
	char		 err[256];

	for (int i = 0; i < SB_JOBS; i++)
		j[i].started = j[i].done = false;
	while (done < SB_JOBS) {
		int	 nq = 0;
		double	 next = 1e300;

		/* Finish what ends now, free its slots. */
		for (int i = 0; i < SB_JOBS; i++) {
			if (j[i].started && !j[i].done && j[i].end <= now) {
				j[i].done = true;
				done++;
				for (int r = 0; r < j[i].spec.resources.ranks; r++)
					used[j[i].node_of[r]]--;
			}
		}
		for (int i = 0; i < SB_JOBS; i++) {
			if (!j[i].started && j[i].arrive <= now) {
				q[nq] = (struct queue_entry){ .spec = &j[i].spec,
				    .submitted = j[i].arrive, .node_of = j[i].node_of };
				qi[nq++] = i;
			}
		}
		if (nq > 0) {
			double t0 = clock_mono();

			if (backfill)
				queue_schedule(c, used, q, nq);
			else {	/* FIFO: stop at the first that does not fit */
				for (int k = 0; k < nq; k++) {
					if (place_job(c, q[k].spec, used, q[k].node_of,
					    err, sizeof err) != 0)
						break;
					q[k].placed = true;
				}
			}
			*secs += clock_mono() - t0;
			*decisions += nq;
			for (int k = 0; k < nq; k++) {
				struct sb_job *x = &j[qi[k]];

				if (!q[k].placed)
					continue;
				x->started = true;
				x->start = now;
				x->end = now + x->runtime;
			}
		}
		for (int i = 0; i < SB_JOBS; i++) {
			if (!j[i].started && j[i].arrive > now && j[i].arrive < next)
				next = j[i].arrive;
			if (j[i].started && !j[i].done && j[i].end < next)
				next = j[i].end;
		}
		if (next >= 1e300)
			break;
		now = next;
	}
	/* Slot-seconds busy inside the arrival window: the steady state,
	 * without the ramp after the last arrival drains the queue. */
	for (int i = 0; i < SB_JOBS; i++) {
		double a = j[i].start > w0 ? j[i].start : w0;
		double b = j[i].end < w1 ? j[i].end : w1;

		if (b > a)
			busy += (b - a) * j[i].spec.resources.ranks;
	}
	free(used);
	free(q);
	free(qi);
	return busy / (total_slots * (w1 - w0));
}

static int
sched_bench(void)
{
	struct cluster_spec c;
	struct sb_job	*j = xcalloc(SB_JOBS, sizeof *j);
	long		 d1 = 0, d2 = 0;
	double		 s1 = 0, s2 = 0, u1, u2;

	sb_cluster(&c);
	sb_trace(j, 42);
	u1 = sb_run(&c, j, 1, &d1, &s1);
	u2 = sb_run(&c, j, 0, &d2, &s2);
	printf("sched: %d nodes in %d racks x %d slots (%d spares), %d jobs "
	    "(seed 42)\n", SB_NODES, SB_RACKS, SB_SLOTS, SB_SPARES, SB_JOBS);
	printf("  hunter queue (priority, backfill, rack placement)\n");
	printf("    placement time per decision  %8.1f us  (%ld decisions; "
	    "target < 1000 us)\n", 1e6 * s1 / (d1 ? d1 : 1), d1);
	printf("    utilisation                  %8.1f %%   (target >= 85%%)\n",
	    100 * u1);
	printf("  static first-fit FIFO baseline\n");
	printf("    placement time per decision  %8.1f us\n",
	    1e6 * s2 / (d2 ? d2 : 1));
	printf("    utilisation                  %8.1f %%\n", 100 * u2);
	printf("  ratio (hunter / baseline)      %8.2f\n", u1 / u2);
	for (int i = 0; i < SB_JOBS; i++)
		free(j[i].node_of);
	free(j);
	free(c.nodes);
	return 0;
}

const struct bench_entry bench_sched_entry = {
	.name = "sched",
	.summary = "queue and placement on 1024 simulated nodes, 500 jobs, against first-fit FIFO",
	.run = sched_bench,
};
