/*
 * sim-run.c: the simulator's clock (sim.h).  Jobs arrive as the trace
 * says; the policy decides at each arrival, each completion and every
 * interval_s, through policy_decide, the code `hunter sched decide`
 * runs.  A job whose allocation changes (its first start included)
 * makes no progress for restart_s; then it advances at its goodput at
 * that allocation: samples at its own batch a second, from its
 * application's fitted model, at the best batch for the allocation when
 * the policy sizes jobs (goodput_best) and at its own batch otherwise,
 * with the statistical efficiency of its noise scale at its progress.
 * Between events everything is constant, so a job's end is computed,
 * not stepped to.  Attained service is slot-seconds held, restarts
 * included; utilisation is those over the cluster's slots times the
 * makespan (first arrival to last end).
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/errf.h"
#include "lib/xmalloc.h"
#include "cmd/sim.h"

/* A table is made again once the noise scale moved this much. */
#define SIM_NOISE_STEP	0.02

struct sj {
	const struct sim_job *job;
	int		 state;		/* 0 to come, 1 in, 2 done */
	double		 progress;	/* samples at its batch */
	double		 attained;	/* slot-seconds */
	double		 busy_until;	/* restarting until */
	double		 finish;
	double		 rate;		/* samples a second once running */
	int		 restarts;
	int		 n, *node_of;
	struct goodput_job gj;
	struct policy_row *rows;
	int		 nrows;
	double		 rows_noise;
	bool		 rows_made;
};

struct sim {
	const struct sim_cluster *c;
	const struct sim_trace *t;
	const struct policy *p;
	struct sj	*j;
	struct policy_node *nodes;
	char		(*names)[16];
	const char	**racks;
	char		(*rack_names)[16];
	struct policy_job *pj;
	int		*of;		/* pj index -> job */
	int		 slots, max_rows;
	double		 now, held;	/* slot-seconds held, all jobs */
	double		 decide_s, decide_max;
	int		 rounds;
};

static void
sim_cluster_make(struct sim *s)
{
	const struct sim_cluster *c = s->c;
	int	 per = (c->nodes + c->racks - 1) / c->racks;

	s->nodes = xcalloc((size_t)c->nodes, sizeof *s->nodes);
	s->names = xcalloc((size_t)c->nodes, sizeof *s->names);
	s->racks = xcalloc((size_t)c->racks, sizeof *s->racks);
	s->rack_names = xcalloc((size_t)c->racks, sizeof *s->rack_names);
	for (int r = 0; r < c->racks; r++) {
		snprintf(s->rack_names[r], sizeof s->rack_names[r], "r%d", r);
		s->racks[r] = s->rack_names[r];
	}
	for (int i = 0; i < c->nodes; i++) {
		snprintf(s->names[i], sizeof s->names[i], "n%d", i);
		s->nodes[i] = (struct policy_node){ s->names[i], c->slots,
		    i / per };
	}
	s->slots = c->nodes * c->slots;
	/* Rows of one table at most: every count on every node count. */
	s->max_rows = 0;
	for (int k = 1; k <= s->slots; k++) {
		int	 lo = (k + c->slots - 1) / c->slots;
		int	 hi = k < c->nodes ? k : c->nodes;

		s->max_rows += hi - lo + 1;
	}
}

/* Job x's speedup table, made again when its noise scale has moved. */
static void
sim_rows(struct sim *s, struct sj *x)
{
	const struct sim_app *a = x->job->app;
	double	 phi = sim_app_noise(a, x->progress / x->job->samples);

	x->gj.noise_scale = phi;
	if (x->rows_made && (!s->p->elastic || a->ncurve == 0 ||
	    fabs(phi - x->rows_noise) <= SIM_NOISE_STEP * fmax(x->rows_noise,
	    1)))
		return;
	if (x->rows == NULL)
		x->rows = xcalloc((size_t)s->max_rows + 1, sizeof *x->rows);
	x->nrows = goodput_speedups(&x->gj, s->p->elastic ? s->slots :
	    x->job->ranks, s->c->slots, s->c->nodes, x->rows, s->max_rows);
	x->rows_noise = phi;
	x->rows_made = true;
}

static int
sim_distinct(const int *node_of, int n)
{
	int	 d = 0;

	for (int k = 0; k < n; k++)
		d += k == 0 || node_of[k] != node_of[k - 1];
	return d;
}

static double
sim_rate(struct sj *x)
{
	if (x->n == 0)
		return 0;
	x->gj.noise_scale = sim_app_noise(x->job->app,
	    x->progress / x->job->samples);
	return goodput_best(&x->gj, sim_distinct(x->node_of, x->n), x->n, NULL);
}

/* One round of the policy at s->now. */
static int
sim_round(struct sim *s, char *err, size_t errlen)
{
	struct policy_request req = { s->now, s->c->interval_s,
	    s->c->restart_s, s->nodes, s->c->nodes, s->racks, s->c->racks,
	    s->pj, 0 };
	struct policy_reply rep;
	double	 t0;
	int	 n = 0;

	for (int i = 0; i < s->t->n; i++) {
		struct sj *x = &s->j[i];
		int	 lo = s->p->elastic ? 1 : x->job->ranks;
		int	 hi = s->p->elastic ? s->slots : x->job->ranks;

		if (x->state != 1)
			continue;
		sim_rows(s, x);
		s->pj[n] = (struct policy_job){ x->job->name, x->job->arrival,
		    s->now - x->job->arrival, x->attained, x->restarts, lo, hi,
		    true, x->rows, x->nrows, x->node_of, x->n };
		s->of[n++] = i;
	}
	req.njobs = n;
	t0 = clock_mono();
	if (policy_decide(s->p, &req, &rep, err, errlen) != 0)
		return -1;
	t0 = clock_mono() - t0;
	s->decide_s += t0;
	s->decide_max = fmax(s->decide_max, t0);
	s->rounds++;
	for (int k = 0; k < n; k++) {
		struct sj *x = &s->j[s->of[k]];

		if (rep.n[k] != x->n || (x->n > 0 && memcmp(rep.node_of[k],
		    x->node_of, (size_t)x->n * sizeof(int)) != 0)) {
			if (x->n > 0)
				x->restarts++;
			if ((x->n = rep.n[k]) > 0)
				memcpy(x->node_of, rep.node_of[k],
				    (size_t)x->n * sizeof(int));
			x->busy_until = s->now + s->c->restart_s;
		}
		x->rate = sim_rate(x);
	}
	policy_reply_free(&rep);
	return 0;
}

/* When job x ends at its current rate; HUGE_VAL if it does not. */
static double
sim_end(const struct sim *s, const struct sj *x)
{
	if (x->state != 1 || x->n == 0 || !(x->rate > 0))
		return HUGE_VAL;
	return fmax(s->now, x->busy_until) +
	    (x->job->samples - x->progress) / x->rate;
}

/* Move the clock to t, advancing every running job. */
static void
sim_advance(struct sim *s, double t)
{
	for (int i = 0; i < s->t->n; i++) {
		struct sj *x = &s->j[i];
		double	 from = fmax(s->now, x->busy_until);

		if (x->state != 1 || x->n == 0)
			continue;
		if (t > from)
			x->progress += x->rate * (t - from);
		x->attained += x->n * (t - s->now);
		s->held += x->n * (t - s->now);
	}
	s->now = t;
}

static int
sim_double_cmp(const void *a, const void *b)
{
	double	 x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void
sim_results(struct sim *s, struct sim_result *res)
{
	int	 n = s->t->n;
	double	*sorted = xcalloc((size_t)n, sizeof *sorted), sum = 0;
	double	 last = 0, first = s->t->v[0].arrival;

	memset(res, 0, sizeof *res);
	res->jct = xcalloc((size_t)n, sizeof *res->jct);
	for (int i = 0; i < n; i++) {
		res->jct[i] = s->j[i].finish - s->j[i].job->arrival;
		sorted[i] = res->jct[i];
		sum += res->jct[i];
		last = fmax(last, s->j[i].finish);
		res->restarts += s->j[i].restarts;
	}
	qsort(sorted, (size_t)n, sizeof *sorted, sim_double_cmp);
	res->done = n;
	res->avg_jct = sum / n;
	/* The nearest rank: the smallest JCT that 99% are at or below. */
	res->p99_jct = sorted[(int)ceil(0.99 * n) - 1];
	res->makespan = last - first;
	res->util = res->makespan > 0 ? s->held / (s->slots * res->makespan) :
	    0;
	res->rounds = s->rounds;
	res->decide_ms_mean = s->rounds ? 1e3 * s->decide_s / s->rounds : 0;
	res->decide_ms_max = 1e3 * s->decide_max;
	free(sorted);
}

/* The time of the next event after s->now: an arrival, an end, a tick. */
static double
sim_next(const struct sim *s, int *ending)
{
	double	 t = HUGE_VAL, first = s->t->v[0].arrival, iv = s->c->interval_s;

	*ending = -1;
	for (int i = 0; i < s->t->n; i++) {
		const struct sj *x = &s->j[i];
		double	 e = x->state == 0 ? x->job->arrival : sim_end(s, x);

		if (e < t) {
			t = e;
			*ending = x->state == 1 ? i : -1;
		}
	}
	if (iv > 0 && t < HUGE_VAL) {
		double	 tick = first + iv * (floor((s->now - first) / iv) + 1);

		if (tick < t) {
			t = tick;
			*ending = -1;
		}
	}
	return t;
}

static void
sim_free(struct sim *s)
{
	for (int i = 0; s->j != NULL && i < s->t->n; i++) {
		free(s->j[i].node_of);
		free(s->j[i].rows);
	}
	free(s->j);
	free(s->nodes);
	free(s->names);
	free(s->racks);
	free(s->rack_names);
	free(s->pj);
	free(s->of);
}

static void
sim_job_init(struct sim *s, struct sj *x, const struct sim_job *job)
{
	const struct sim_app *a = job->app;

	x->job = job;
	x->node_of = xcalloc((size_t)s->slots + 1, sizeof *x->node_of);
	/* An elastic policy may choose the batch, from the job's own up to
	 * the application's most; the baselines run the job's. */
	x->gj = (struct goodput_job){ a->model, -1, job->batch, job->batch,
	    a->micro_max, 0, 0 };
	if (s->p->elastic && a->batch_max > job->batch)
		x->gj.batch_max = a->batch_max;
}

int
sim_run(const struct sim_cluster *c, const struct sim_trace *t,
    const struct policy *p, struct sim_result *res, char *err, size_t errlen)
{
	struct sim s = { .c = c, .t = t, .p = p };
	int	 left = t->n, ending, rc = 0;

	memset(res, 0, sizeof *res);
	if (c->nodes < 1 || c->slots < 1 || c->racks < 1 ||
	    c->racks > c->nodes || c->nodes > POLICY_MAX_NODES ||
	    c->slots > POLICY_MAX_SLOTS || !(c->interval_s >= 0) ||
	    !(c->restart_s >= 0))
		return (errf(err, errlen, "a cluster needs nodes >= 1, slots "
		    ">= 1 and 1 <= racks <= nodes"), -1);
	sim_cluster_make(&s);
	s.j = xcalloc((size_t)t->n, sizeof *s.j);
	s.pj = xcalloc((size_t)t->n, sizeof *s.pj);
	s.of = xcalloc((size_t)t->n, sizeof *s.of);
	for (int i = 0; i < t->n; i++)
		sim_job_init(&s, &s.j[i], &t->v[i]);
	s.now = t->v[0].arrival;
	while (left > 0 && rc == 0) {
		bool	 running = false, coming = false;
		double	 next;

		for (int i = 0; i < t->n; i++) {
			if (s.j[i].state == 0 && s.j[i].job->arrival <= s.now)
				s.j[i].state = 1;
		}
		if ((rc = sim_round(&s, err, errlen)) != 0)
			break;
		for (int i = 0; i < t->n; i++) {
			running |= s.j[i].state == 1 && s.j[i].n > 0;
			coming |= s.j[i].state == 0;
		}
		if (!running && !coming) {
			for (int i = 0; i < t->n; i++) {
				if (s.j[i].state == 1)
					rc = (errf(err, errlen, "job '%s' "
					    "(%d ranks of %s) never runs on %d "
					    "nodes of %d slots under %s",
					    t->v[i].name, t->v[i].ranks,
					    t->v[i].app->name, c->nodes, c->slots,
					    p->name), -1);
			}
			break;
		}
		next = sim_next(&s, &ending);
		sim_advance(&s, next);
		/* Every job ending now ends at once. */
		for (int i = 0; i < t->n; i++) {
			struct sj *x = &s.j[i];

			if (x->state != 1 || (i != ending && !(x->n > 0 &&
			    x->progress >= x->job->samples * (1 - 1e-12))))
				continue;
			x->state = 2;
			x->finish = s.now;
			x->progress = x->job->samples;
			x->n = 0;
			left--;
		}
	}
	if (rc == 0)
		sim_results(&s, res);
	sim_free(&s);
	return rc;
}

void
sim_result_free(struct sim_result *r)
{
	free(r->jct);
	memset(r, 0, sizeof *r);
}
