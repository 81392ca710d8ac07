/*
 * cmd-sim.c: `hunter sim`: replay a workload under each policy asked
 * and print, side by side, the average and p99 job completion time, the
 * makespan, the utilisation, the restarts and the decision time
 * (docs/scheduling.md, The simulator); or, with --generate, write a
 * workload drawn from the Philly trace's statistics.  The engine is
 * sim-run.c, the models sim-app.c, the workloads sim-trace.c.
 */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/sim.h"

#define SIM_MAX_POLICIES	8

struct sim_opts {
	const char	*models, *trace;
	const struct policy *policy[SIM_MAX_POLICIES];
	int		 npolicy;
	struct sim_cluster cluster;
	struct sim_gen	 gen;
	bool		 generate, json;
};

static int
sim_policies(struct sim_opts *o, const char *arg)
{
	char	 list[512];

	snprintf(list, sizeof list, "%s", arg);
	o->npolicy = 0;
	for (char *name = strtok(list, ","); name != NULL;
	    name = strtok(NULL, ",")) {
		if (o->npolicy == SIM_MAX_POLICIES ||
		    (o->policy[o->npolicy] = policy_find(name)) == NULL) {
			fprintf(stderr, "hunter sim: unknown policy '%s'\n", name);
			return -1;
		}
		o->npolicy++;
	}
	return o->npolicy > 0 ? 0 : -1;
}

/* An integer option into *v when given, kept to lo..hi: 0, or -1 (said). */
static int
sim_int(const struct cmd_args *a, const char *name, long long lo,
    long long hi, int *v)
{
	long long	 x = *v;

	if (cmd_get_long(a, name, lo, hi, &x) != 0)
		return -1;
	*v = (int)x;
	return 0;
}

/* A number option in lo..hi (cmd_get_real's range leaves lo out). */
static int
sim_real(const struct cmd_args *a, const char *name, double lo, double hi,
    double *v)
{
	if (cmd_get_real(a, name, lo - 1e-9, hi, v) != 0)
		return -1;
	if (*v < lo) {
		fprintf(stderr, "hunter sim: --%s wants at least %g\n", name, lo);
		return -1;
	}
	return 0;
}

/* The options; -1 on a bad one (said on stderr). */
static int
sim_options(const struct cmd_args *a, struct sim_opts *o)
{
	long long	 seed = -1;

	memset(o, 0, sizeof *o);
	o->cluster = (struct sim_cluster){ 16, 4, 2, 60, 30 };
	o->gen = (struct sim_gen){ 160, 8, 1, 16, 4 };
	for (int i = 0; policy_table[i] != NULL && i < SIM_MAX_POLICIES; i++)
		o->policy[o->npolicy++] = policy_table[i];
	o->json = cmd_has(a, "json");
	o->generate = cmd_has(a, "generate");
	o->models = cmd_get(a, "models");
	o->trace = a->argc > 0 ? a->argv[0] : NULL;
	if ((cmd_get(a, "policy") != NULL && sim_policies(o,
	    cmd_get(a, "policy")) != 0) ||
	    sim_int(a, "nodes", 1, POLICY_MAX_NODES, &o->cluster.nodes) != 0 ||
	    sim_int(a, "slots", 1, POLICY_MAX_SLOTS, &o->cluster.slots) != 0 ||
	    sim_int(a, "racks", 1, POLICY_MAX_NODES, &o->cluster.racks) != 0 ||
	    sim_real(a, "interval", 0, 1e6, &o->cluster.interval_s) != 0 ||
	    sim_real(a, "restart", 0, 1e6, &o->cluster.restart_s) != 0 ||
	    sim_int(a, "jobs", 1, 100000, &o->gen.jobs) != 0 ||
	    sim_real(a, "hours", 0.001, 1e4, &o->gen.hours) != 0 ||
	    cmd_get_long(a, "seed", 0, (long long)1e15, &seed) != 0 ||
	    sim_int(a, "max-ranks", 1, 64, &o->gen.max_ranks) != 0)
		return -1;
	o->gen.slots = o->cluster.slots;
	if (seed >= 0)
		o->gen.seed = (uint64_t)seed;
	if (o->cluster.racks > o->cluster.nodes)
		o->cluster.racks = o->cluster.nodes;
	if (o->models == NULL || (o->trace == NULL) != o->generate) {
		fprintf(stderr, "hunter sim: --models DIR and a trace (or "
		    "--generate) are needed\n");
		return -1;
	}
	return 0;
}

static void
sim_print_json(const struct sim_trace *t, const struct policy *p,
    const struct sim_result *r)
{
	json_t	*jobs = json_object(), *o;
	char	*s;

	for (int i = 0; i < t->n; i++)
		json_object_set_new(jobs, t->v[i].name, json_real(r->jct[i]));
	o = json_pack("{s:s, s:f, s:f, s:f, s:f, s:i, s:i, s:i, s:f, s:f, s:o}",
	    "policy", p->name, "avg_jct", r->avg_jct, "p99_jct", r->p99_jct,
	    "makespan", r->makespan, "utilisation", r->util, "restarts",
	    r->restarts, "done", r->done, "rounds", r->rounds,
	    "decide_ms_mean", r->decide_ms_mean, "decide_ms_max",
	    r->decide_ms_max, "jobs", jobs);
	s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	printf("%s\n", s != NULL ? s : "{}");
	free(s);
	json_decref(o);
}

static void
sim_print_table(const struct sim_opts *o, const struct sim_trace *t,
    const struct sim_result *r)
{
	static const char *const rows[] = { "avg JCT (s)", "p99 JCT (s)",
		"makespan (s)", "utilisation (%)", "restarts", "rounds",
		"decision, mean (ms)", "decision, max (ms)" };

	printf("hunter sim: %d jobs of %s on %d nodes x %d slots (%d racks), "
	    "a decision every %g s and at each arrival and end, restarts "
	    "%g s\n", t->n, o->trace, o->cluster.nodes, o->cluster.slots,
	    o->cluster.racks, o->cluster.interval_s, o->cluster.restart_s);
	printf("  %-20s", "");
	for (int p = 0; p < o->npolicy; p++)
		printf(" %12s", o->policy[p]->name);
	printf("\n");
	for (int k = 0; k < 8; k++) {
		printf("  %-20s", rows[k]);
		for (int p = 0; p < o->npolicy; p++) {
			const struct sim_result *x = &r[p];
			double	 v[] = { x->avg_jct, x->p99_jct, x->makespan,
			    100 * x->util, x->restarts, x->rounds,
			    x->decide_ms_mean, x->decide_ms_max };

			printf(k >= 6 ? " %12.3f" : " %12.1f", v[k]);
		}
		printf("\n");
	}
}

static int
cmd_sim(const struct cmd_args *a)
{
	struct sim_opts	 o;
	struct sim_apps	 apps;
	struct sim_trace t;
	struct sim_result r[SIM_MAX_POLICIES];
	char		 err[1024];
	int		 rc = 0, done = 0;

	if (sim_options(a, &o) != 0)
		return cmd_usage(&cmd_sim_entry);
	if (sim_apps_load(o.models, &apps, err, sizeof err) != 0) {
		fprintf(stderr, "hunter sim: %s\n", err);
		return 1;
	}
	if (o.generate) {
		rc = sim_generate(stdout, &apps, &o.gen, err, sizeof err);
		if (rc != 0)
			fprintf(stderr, "hunter sim: %s\n", err);
		sim_apps_free(&apps);
		return rc != 0;
	}
	if (sim_trace_load(o.trace, &apps, &t, err, sizeof err) != 0) {
		fprintf(stderr, "hunter sim: %s\n", err);
		sim_apps_free(&apps);
		return 1;
	}
	for (; done < o.npolicy && rc == 0; done++) {
		if ((rc = sim_run(&o.cluster, &t, o.policy[done], &r[done], err,
		    sizeof err)) != 0)
			fprintf(stderr, "hunter sim: %s\n", err);
		else if (o.json)
			sim_print_json(&t, o.policy[done], &r[done]);
	}
	if (rc == 0 && !o.json)
		sim_print_table(&o, &t, r);
	for (int p = 0; p < done; p++)
		sim_result_free(&r[p]);
	sim_trace_free(&t);
	sim_apps_free(&apps);
	return rc != 0;
}

static const struct cmd_option sim_options_table[] = {
	{ "models", 0, "DIR", "the application models (docs/scheduling.md)" },
	{ "policy", 0, "A,B", "the policies to compare (all of them)" },
	{ "nodes", 0, "N", "nodes of the simulated cluster (16)" },
	{ "slots", 0, "G", "slots a node (4)" },
	{ "racks", 0, "R", "racks the nodes are in (2)" },
	{ "interval", 0, "S", "seconds between decisions (60)" },
	{ "restart", 0, "S", "what a re-allocation costs a job, seconds (30)" },
	{ "json", 0, NULL, "each policy's jobs and figures as JSON lines" },
	{ "generate", 0, NULL, "write a workload of the Philly trace's "
	    "statistics on stdout instead" },
	{ "jobs", 0, "N", "jobs the workload has (160)" },
	{ "hours", 0, "H", "the hours their arrivals span (8)" },
	{ "seed", 0, "S", "the generator's seed (1)" },
	{ "max-ranks", 0, "K", "the most ranks a job asks for (16)" },
	{ NULL }
};

const struct cmd_entry cmd_sim_entry = {
	.name = "sim",
	.usage = "--models DIR [TRACE.csv]",
	.options = sim_options_table,
	.args_min = 0,
	.args_max = 1,
	.summary = "replay a workload under each scheduling policy, side by "
	    "side; or generate one from the Philly trace's statistics",
	.exec = cmd_sim,
};
