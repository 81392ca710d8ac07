/*
 * sim.h: `hunter sim`, a trace-driven simulator of the scheduling policy
 * (docs/scheduling.md, The simulator).  Application models come from a
 * directory (sim-app.c), the workload from a CSV of arrivals or the
 * generator (sim-trace.c), and sim-run.c replays it on N nodes of G
 * slots, calling policy_decide as `hunter sched decide` does.
 */
#ifndef HUNTER_SIM_H
#define HUNTER_SIM_H

#include <stdint.h>
#include <stdio.h>

#include "backend/sched/goodput.h"
#include "backend/sched/policy.h"

#define SIM_NAME_MAX	64

/* An application: its throughput model, fitted from measured steps, and
 * its statistical efficiency over its training. */
struct sim_app {
	char		 name[SIM_NAME_MAX];
	struct goodput_model model;
	int		 batch;		/* the batch its lr is given for */
	int		 batch_max;	/* the most an adaptive job takes */
	int		 micro_max;	/* the largest micro-batch a rank fits */
	double		 samples;	/* a job's work when the trace says none */
	int		 ncurve;	/* noise scale by progress; 0: unknown */
	double		*progress, *noise;
};

struct sim_apps {
	struct sim_app	*v;
	int		 n;
};

/* Every application model under dir (one folder each).  0, or -1 with
 * the reason, naming the file and line. */
int	sim_apps_load(const char *dir, struct sim_apps *, char *err,
	    size_t errlen);
void	sim_apps_free(struct sim_apps *);
const struct sim_app *sim_app_find(const struct sim_apps *, const char *name);
/* The noise scale at a fraction of the work done; -1 when unknown. */
double	sim_app_noise(const struct sim_app *, double progress);

struct sim_job {
	char		 name[SIM_NAME_MAX];
	double		 arrival;	/* seconds */
	const struct sim_app *app;
	int		 ranks;		/* what its user asked for */
	int		 batch;		/* likewise: the batch its lr is for */
	double		 samples;	/* work: samples at that batch */
};

struct sim_trace {
	struct sim_job	*v;
	int		 n;
};

/* A CSV of arrivals: name,time,application,ranks,batch[,samples], a
 * header line first.  0, or -1 with file:line: reason. */
int	sim_trace_load(const char *path, const struct sim_apps *,
	    struct sim_trace *, char *err, size_t errlen);
void	sim_trace_free(struct sim_trace *);

/* The generator's knobs (docs/scheduling.md, The workload generator). */
struct sim_gen {
	int		 jobs;		/* 160 */
	double		 hours;		/* 8: the arrival window */
	uint64_t	 seed;
	int		 max_ranks;	/* the largest count asked for */
	int		 slots;		/* a node's, as the cluster's */
};

/* A workload of the applications as a trace CSV on out. */
int	sim_generate(FILE *out, const struct sim_apps *, const struct sim_gen *,
	    char *err, size_t errlen);

struct sim_cluster {
	int		 nodes, slots, racks;
	double		 interval_s;	/* between scheduled rounds */
	double		 restart_s;	/* a job's pause when its allocation
					 * changes, and before it first runs */
};

struct sim_result {
	double		 avg_jct, p99_jct, makespan, util;
	int		 done, restarts, rounds;
	double		 decide_ms_mean, decide_ms_max;
	double		*jct;		/* per job of the trace */
};

/* Replay the trace under policy p.  0, or -1 with the reason (a job
 * that can never run, a refused request). */
int	sim_run(const struct sim_cluster *, const struct sim_trace *,
	    const struct policy *, struct sim_result *, char *err,
	    size_t errlen);
void	sim_result_free(struct sim_result *);

#endif
