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
sim_number(const char *opt, const char *s, double lo, double hi, double *v)
{
	char	*end;

	*v = strtod(s, &end);
	if (end == s || *end != '\0' || !(*v >= lo && *v <= hi)) {
		fprintf(stderr, "hunter sim: %s takes a number in %g..%g, got "
		    "'%s'\n", opt, lo, hi, s);
		return -1;
	}
	return 0;
}

static int
sim_policies(struct sim_opts *o, char *list)
{
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

/* The options; -1 on a bad one (said on stderr). */
static int
sim_options(int argc, char **argv, struct sim_opts *o)
{
	double	 v;

	memset(o, 0, sizeof *o);
	o->cluster = (struct sim_cluster){ 16, 4, 2, 60, 30 };
	o->gen = (struct sim_gen){ 160, 8, 1, 16, 4 };
	for (int i = 0; policy_table[i] != NULL && i < SIM_MAX_POLICIES; i++)
		o->policy[o->npolicy++] = policy_table[i];
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *arg = i + 1 < argc ? argv[i + 1] : NULL;
		int	 rc = 0;

		if (strcmp(a, "--json") == 0 || strcmp(a, "--generate") == 0) {
			*(a[2] == 'j' ? &o->json : &o->generate) = true;
			continue;
		}
		if (arg == NULL || a[0] != '-') {
			if (a[0] == '-' || o->trace != NULL) {
				fprintf(stderr, "hunter sim: unexpected '%s'\n", a);
				return -1;
			}
			o->trace = a;
			continue;
		}
		if (strcmp(a, "--models") == 0)
			o->models = arg;
		else if (strcmp(a, "--policy") == 0)
			rc = sim_policies(o, argv[i + 1]);
		else if (strcmp(a, "--nodes") == 0 && (rc = sim_number(a, arg, 1,
		    POLICY_MAX_NODES, &v)) == 0)
			o->cluster.nodes = (int)v;
		else if (strcmp(a, "--slots") == 0 && (rc = sim_number(a, arg, 1,
		    POLICY_MAX_SLOTS, &v)) == 0)
			o->cluster.slots = o->gen.slots = (int)v;
		else if (strcmp(a, "--racks") == 0 && (rc = sim_number(a, arg, 1,
		    POLICY_MAX_NODES, &v)) == 0)
			o->cluster.racks = (int)v;
		else if (strcmp(a, "--interval") == 0 && (rc = sim_number(a, arg,
		    0, 1e6, &v)) == 0)
			o->cluster.interval_s = v;
		else if (strcmp(a, "--restart") == 0 && (rc = sim_number(a, arg,
		    0, 1e6, &v)) == 0)
			o->cluster.restart_s = v;
		else if (strcmp(a, "--jobs") == 0 && (rc = sim_number(a, arg, 1,
		    100000, &v)) == 0)
			o->gen.jobs = (int)v;
		else if (strcmp(a, "--hours") == 0 && (rc = sim_number(a, arg,
		    0.001, 1e4, &v)) == 0)
			o->gen.hours = v;
		else if (strcmp(a, "--seed") == 0 && (rc = sim_number(a, arg, 0,
		    1e15, &v)) == 0)
			o->gen.seed = (uint64_t)v;
		else if (strcmp(a, "--max-ranks") == 0 && (rc = sim_number(a, arg,
		    1, 64, &v)) == 0)
			o->gen.max_ranks = (int)v;
		else if (rc == 0) {
			fprintf(stderr, "hunter sim: unknown option '%s'\n", a);
			return -1;
		}
		if (rc != 0)
			return -1;
		i++;
	}
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
cmd_sim(int argc, char **argv)
{
	struct sim_opts	 o;
	struct sim_apps	 apps;
	struct sim_trace t;
	struct sim_result r[SIM_MAX_POLICIES];
	char		 err[1024];
	int		 rc = 0, done = 0;

	if (sim_options(argc, argv, &o) != 0)
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

const struct cmd_entry cmd_sim_entry = {
	.name = "sim",
	.usage = "--models DIR [--policy A,B] [--nodes N] [--slots G] "
	    "[--racks R] [--interval S] [--restart S] [--json] TRACE.csv | "
	    "--models DIR --generate [--jobs N] [--hours H] [--seed S] "
	    "[--max-ranks K] [--slots G]",
	.summary = "replay a workload under each scheduling policy, side by "
	    "side; or generate one from the Philly trace's statistics",
	.exec = cmd_sim,
};
