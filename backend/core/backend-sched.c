/*
 * backend-sched.c: the scheduler's hands (docs/scheduling.md, "The live
 * scheduler").  What each job's steps cost is observed from rank 0's
 * metrics, per configuration (nodes, ranks, micro-batch, accumulation);
 * every scheduler.interval the observations are fitted into its goodput
 * model (backend/sched/goodput.h), its speedup table made, and the
 * policy (backend/sched/policy.h) asked for the cluster's allocations,
 * the same request a simulator sends `hunter sched decide`.  What it
 * decides is carried out through the job's life (job.c): a running
 * elastic job whose count changes is resized, an elastic job that waits
 * is placed on what it was given.  Fixed jobs and jobs between phases are
 * in the request as they stand, where the policy may not move them.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/clock.h"
#include "lib/xmalloc.h"
#include "backend/sched/goodput.h"
#include "backend/sched/policy.h"
#include "backend/sched/policy-json.h"
#include "backend/core/backend-internal.h"

#define SCHED_ROWS_MAX	512

/* The distinct nodes j's ranks are on. */
static int
job_nodes_used(const struct job_state *j)
{
	int	 n = 0;

	for (int r = 0; r < j->world; r++) {
		bool	 seen = false;

		for (int k = 0; k < r && !seen; k++)
			seen = j->ranks[k].node == j->ranks[r].node;
		n += !seen;
	}
	return n;
}

void
sched_observe(struct job_state *j, const struct rank_state *rs)
{
	struct job_goodput *g = &j->gp;
	struct goodput_obs *o = NULL;
	int	 nodes = job_nodes_used(j);

	if (!(rs->known & RM_BIT(STEP_MS)) || !(rs->known & RM_BIT(MICRO_BATCH)) ||
	    !(rs->known & RM_BIT(ACCUM)) || rs->step_ms <= 0)
		return;
	for (int i = 0; i < g->nobs && o == NULL; i++) {
		struct goodput_obs *x = &g->obs[i];

		if (x->nodes == nodes && x->ranks == j->world &&
		    x->micro == rs->micro_batch && x->accum == rs->accum)
			o = x;
	}
	if (o == NULL) {
		if (g->nobs == GOODPUT_CONFIGS_MAX)
			return;		/* enough to fit a model from */
		o = &g->obs[g->nobs];
		g->n[g->nobs++] = 0;
		*o = (struct goodput_obs){ .nodes = nodes, .ranks = j->world,
		    .micro = (int)rs->micro_batch, .accum = (int)rs->accum };
	}
	/* A running mean, so the newest steps of a warm group count as much
	 * as its first ones. */
	{
		int	 k = (int)(o - g->obs);
		double	 w = 1.0 / ++g->n[k];

		o->step_s += (rs->step_ms / 1e3 - o->step_s) * w;
		o->exchange_s += ((rs->known & RM_BIT(COMM_MS) ? rs->comm_ms /
		    1e3 : 0) - o->exchange_s) * w;
	}
	if (rs->known & RM_BIT(NOISE_SCALE))
		g->noise_scale = rs->noise_scale;
	/* A backend that attached learns the batch from the ranks. */
	if ((rs->known & RM_BIT(GLOBAL_BATCH)) && g->batch == 0 &&
	    rs->global_batch > 0) {
		g->batch = (int)rs->global_batch;
		g->batch_world = j->world;
		g->lr = goodput_lr(&j->spec, g->batch, g->noise_scale);
	}
	if (rs->known & RM_BIT(SAMPLES_PER_S)) {
		g->goodput = rs->samples_per_s * goodput_efficiency(
		    g->noise_scale, j->spec.train.batch.global_min,
		    g->batch > 0 ? g->batch : j->spec.train.batch.global);
		g->known = true;
	}
}

/* j as the goodput model sees it, its model not fitted. */
static void
sched_job(const struct job_state *j, struct goodput_job *gj)
{
	const struct job_goodput *g = &j->gp;
	const struct job_spec *s = &j->spec;

	*gj = (struct goodput_job){ .noise_scale = g->noise_scale,
	    .batch0 = s->train.batch.global_min,
	    .batch_max = s->train.batch.global_max,
	    .micro_max = s->train.batch.micro > 0 ? s->train.batch.micro :
	    s->train.batch.global_max, .micro_fixed = s->train.batch.micro,
	    .min_ranks = s->train.batch.adaptive ? s->resources.min_ranks : 0 };
}

/* The same with its model; whether it could be fitted (it has
 * observations, and is not a program's). */
static bool
sched_model(const struct job_state *j, struct goodput_job *gj)
{
	const struct job_goodput *g = &j->gp;
	char	 err[128];

	sched_job(j, gj);
	return g->nobs > 0 && j->prog == NULL &&
	    goodput_fit(g->obs, g->nobs, &gj->model, err, sizeof err) == 0;
}

void
sched_batch(struct job_state *j)
{
	struct job_goodput *g = &j->gp;
	struct goodput_job gj;
	bool	 fitted;
	int	 batch;

	if (!j->spec.train.batch.adaptive || j->prog != NULL) {
		g->batch = j->spec.train.batch.global;
		g->lr = j->spec.train.lr.base;
		g->batch_world = j->world;
		return;
	}
	if (g->batch > 0 && g->batch_world == j->world)
		return;		/* a failover or a migration keeps it */
	fitted = sched_model(j, &gj);
	if ((batch = goodput_batch(&gj, fitted, job_nodes_used(j),
	    j->world)) == 0)
		batch = j->spec.train.batch.global_min;	/* cannot happen:
							 * counts fit */
	g->batch = batch;
	g->batch_world = j->world;
	g->lr = goodput_lr(&j->spec, batch, g->noise_scale);
}

/* The world sizes j may take: a batch it may run at splits evenly over
 * them (an adaptive one's, some batch in its range), and a fixed
 * micro-batch divides each rank's share. */
static bool
sched_count_fits(const struct job_state *j, int k)
{
	struct goodput_job gj;

	if (j->prog != NULL)
		return true;		/* a program cuts its own batch */
	sched_job(j, &gj);
	return goodput_batch(&gj, false, 1, k) > 0;
}

/* j's speedup table: from its fitted model once it has observations,
 * else the optimistic guess a new job gets (linear in its ranks).  An
 * adaptive job's rows are at the best batch of each count. */
static int
sched_rows(const struct job_state *j, int slots, int nnodes,
    struct policy_row *rows, int max)
{
	struct goodput_job gj;
	int	 lo = j->spec.resources.min_ranks, hi = j->spec.resources.max_ranks;
	int	 n = 0, got;

	if (sched_model(j, &gj) &&
	    (got = goodput_speedups(&gj, hi, slots, nnodes, rows, max)) > 0) {
		/* Only the counts it may run at, within min..max. */
		for (int i = 0; i < got; i++) {
			if (rows[i].ranks >= lo && sched_count_fits(j, rows[i].ranks))
				rows[n++] = rows[i];
		}
		if (n > 0)
			return n;
	}
	for (int k = lo; k <= hi && n < max; k++) {
		if (!sched_count_fits(j, k))
			continue;
		for (int nn = (k + slots - 1) / slots; nn <= k && nn <= nnodes &&
		    n < max; nn++)
			rows[n++] = (struct policy_row){ nn, k, (double)k *
			    (nn == 1 ? 1.0 : 0.9) };
	}
	return n;
}

/* Whether the policy may size j now: elastic, running, settled. */
static bool
sched_movable(const struct backend *b, const struct job_state *j, double now)
{
	return j->spec.resources.elastic && j->phase == JOB_RUNNING &&
	    now - j->phase_since >= b->sched.interval_s / 2;
}

struct sched_req {
	struct policy_node	*nodes;
	const char		**racks;
	int			 nracks;
	struct policy_job	*jobs;
	struct job_state	**of;		/* the job of each entry */
	struct policy_row	*rows;		/* SCHED_ROWS_MAX a job */
	int			*current;	/* a node per rank, by job */
	int			 njobs;
};

static void
sched_req_free(struct sched_req *q)
{
	free(q->nodes);
	free(q->racks);
	free(q->jobs);
	free(q->of);
	free(q->rows);
	free(q->current);
}

/* The cluster as the policy sees it: a node's slots are its placing
 * slots while its agent is up, none for a spare (kept for failover). */
static void
sched_nodes(struct backend *b, struct sched_req *q, int *slots_per_node)
{
	const struct cluster_spec *c = backend_placing(b);

	q->nodes = xcalloc((size_t)c->n_nodes + 1, sizeof *q->nodes);
	q->racks = xcalloc((size_t)c->n_nodes + 1, sizeof *q->racks);
	*slots_per_node = 1;
	for (int i = 0; i < c->n_nodes; i++) {
		const struct node_spec *ns = &c->nodes[i];
		int	 rack = -1;

		for (int k = 0; k < q->nracks && rack < 0; k++)
			rack = strcmp(q->racks[k], ns->rack) == 0 ? k : -1;
		if (rack < 0) {
			rack = q->nracks;
			q->racks[q->nracks++] = ns->rack;
		}
		q->nodes[i] = (struct policy_node){ ns->name, ns->spare ||
		    (b->fleet.nodes != NULL && !b->fleet.nodes[i].up) ? 0 :
		    ns->cpu_slots, rack };
		if (q->nodes[i].slots > *slots_per_node)
			*slots_per_node = q->nodes[i].slots;
	}
}

/* The jobs: the elastic ones the policy may size, and every other that
 * holds slots, as it stands. */
static void
sched_jobs(struct backend *b, struct sched_req *q, int slots, double now)
{
	int	 nnodes = backend_placing(b)->n_nodes, ncur = 0;

	q->jobs = xcalloc((size_t)b->njobs + 1, sizeof *q->jobs);
	q->of = xcalloc((size_t)b->njobs + 1, sizeof *q->of);
	q->rows = xcalloc((size_t)(b->njobs + 1) * SCHED_ROWS_MAX,
	    sizeof *q->rows);
	for (int i = 0; i < b->njobs; i++)
		ncur += job_done(&b->jobs[i]) ? 0 : b->jobs[i].world;
	q->current = xcalloc((size_t)ncur + 1, sizeof *q->current);
	ncur = 0;
	for (int i = 0; i < b->njobs; i++) {
		struct job_state *j = &b->jobs[i];
		struct policy_row *rows = q->rows + (size_t)q->njobs * SCHED_ROWS_MAX;
		bool	 queued = j->phase == JOB_QUEUED;
		bool	 sized = queued ? j->spec.resources.elastic :
		    sched_movable(b, j, now);
		int	 nrows;

		if (job_done(j) || (queued && !sized))
			continue;	/* the queue places a fixed job */
		if (sized)
			nrows = sched_rows(j, slots, nnodes, rows, SCHED_ROWS_MAX);
		else {
			rows[0] = (struct policy_row){ job_nodes_used(j), j->world,
			    1.0 };
			nrows = 1;
		}
		if (nrows == 0)
			continue;
		q->jobs[q->njobs] = (struct policy_job){ .name = j->name,
		    .submitted = j->submitted, .age = now - j->submitted,
		    .attained = j->gp.attained, .restarts = j->restarts,
		    .min_ranks = sized ? j->spec.resources.min_ranks : j->world,
		    .max_ranks = sized ? j->spec.resources.max_ranks : j->world,
		    .preemptible = sized, .rows = rows, .nrows = nrows };
		if (!queued) {
			for (int r = 0; r < j->world; r++)
				q->current[ncur + r] = j->ranks[r].node;
			q->jobs[q->njobs].current = q->current + ncur;
			q->jobs[q->njobs].ncurrent = j->world;
			ncur += j->world;
		}
		q->of[q->njobs++] = j;
	}
}

/* A waiting elastic job given n ranks on node_of: placed there now if
 * they are free, else it waits for the shrinks the same decision made. */
static void
sched_place(struct backend *b, struct job_state *j, const int *node_of,
    int n)
{
	int	*need = xcalloc((size_t)b->fleet.n + 1, sizeof *need);
	bool	 fits = true;

	for (int r = 0; r < n; r++)
		need[node_of[r]]++;
	for (int k = 0; k < b->fleet.n && fits; k++)
		fits = need[k] == 0 || job_node_free(b, j, k) >= need[k];
	free(need);
	if (!fits)
		return;
	backend_set_world(j, n);
	for (int r = 0; r < n; r++) {
		j->ranks[r].node = node_of[r];
		b->used[node_of[r]]++;
	}
	j->reason[0] = '\0';
	backend_launch_job(b, j, "the scheduler's allocation");
}

/*
 * Each decision, its request and its reply as the protocol's lines, into
 * STATE/sched.jsonl (begun again past SCHED_LOG_MAX): what the policy
 * was told and said, for an operator to read and for `hunter sched
 * decide` to be asked again.
 */
#define SCHED_LOG_MAX	(4L << 20)
static void
sched_log(struct backend *b, const struct policy_request *req,
    const struct policy_reply *rep)
{
	char		 path[PATH_MAX + 32], *a, *r;
	struct stat	 st;
	FILE		*f;

	snprintf(path, sizeof path, "%s/sched.jsonl", b->dir);
	if ((f = fopen(path, stat(path, &st) == 0 && st.st_size >
	    SCHED_LOG_MAX ? "w" : "a")) == NULL)
		return;
	a = policy_json_request(req);
	r = policy_json_reply(req, rep);
	fprintf(f, "%s\n%s\n", a, r);
	free(a);
	free(r);
	fclose(f);
}

/* What the policy decided, carried out. */
static void
sched_apply(struct backend *b, const struct sched_req *q,
    const struct policy_reply *rep)
{
	for (int i = 0; i < q->njobs; i++) {
		struct job_state *j = q->of[i];
		int	 n = rep->n[i];

		if (!q->jobs[i].preemptible || n == 0)
			continue;
		if (j->phase == JOB_QUEUED)
			sched_place(b, j, rep->node_of[i], n);
		else if (n != j->world)
			job_resize(b, j, rep->node_of[i], n, "%s: %d -> %d ranks "
			    "(goodput %.0f samples/s at %d)", b->sched_policy->name,
			    j->world, n, j->gp.goodput, j->world);
	}
}

void
sched_tick(struct backend *b, double now)
{
	struct sched_req q = { 0 };
	struct policy_request req;
	struct policy_reply rep = { 0 };
	char	 err[256];
	int	 slots, movable = 0;

	/* Attained service: slot-seconds, counted on every tick. */
	for (int i = 0; i < b->njobs; i++) {
		struct job_state *j = &b->jobs[i];

		if (!job_done(j) && j->phase != JOB_QUEUED && b->sched_last > 0)
			j->gp.attained += j->world * (now - b->sched_last);
	}
	b->sched_last = now;
	if (b->preempting || b->sched_policy == NULL || now < b->sched_next)
		return;
	b->sched_next = now + b->sched.interval_s;
	sched_nodes(b, &q, &slots);
	sched_jobs(b, &q, slots, now);
	for (int i = 0; i < q.njobs; i++)
		movable += q.jobs[i].preemptible;
	if (movable == 0)
		goto out;		/* nothing the policy may move */
	req = (struct policy_request){ .time = now, .interval_s =
	    b->sched.interval_s, .restart_s = b->sched.restart_s,
	    .nodes = q.nodes, .nnodes = backend_placing(b)->n_nodes,
	    .racks = q.racks, .nracks = q.nracks, .jobs = q.jobs,
	    .njobs = q.njobs };
	if (policy_decide(b->sched_policy, &req, &rep, err, sizeof err) != 0)
		backend_event(b, NULL, EV_REFUSED, -1, NULL, "the scheduler "
		    "(%s): %s", b->sched_policy->name, err);
	else {
		if (b->dir[0] != '\0')
			sched_log(b, &req, &rep);
		sched_apply(b, &q, &rep);
	}
	policy_reply_free(&rep);
out:
	sched_req_free(&q);
}

int
sched_open(struct backend *b, const struct sched_config *cluster,
    const struct sched_config *user, char *err, size_t errlen)
{
	const char	*name = cluster->policy[0] != '\0' ? cluster->policy :
	    user->policy[0] != '\0' ? user->policy : "goodput";

	b->sched.interval_s = cluster->interval_s >= 0 ? cluster->interval_s :
	    user->interval_s >= 0 ? user->interval_s : 60;
	b->sched.restart_s = cluster->restart_s >= 0 ? cluster->restart_s :
	    user->restart_s >= 0 ? user->restart_s : 30;
	if ((b->sched_policy = policy_find(name)) == NULL) {
		snprintf(err, errlen, "scheduler.policy: no policy '%s' (known: "
		    "goodput, fifo, las)", name);
		return -1;
	}
	snprintf(b->sched.policy, sizeof b->sched.policy, "%s", name);
	b->sched_next = clock_mono() + b->sched.interval_s;
	return 0;
}
