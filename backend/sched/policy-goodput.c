/*
 * policy-goodput.c: the goodput policy (docs/scheduling.md), Pollux's
 * objective (Qiao et al., OSDI '21, section 4) decided greedily, in
 * Tiresias's order:
 *
 *   order	jobs that may not be preempted keep their nodes; the rest in
 *		two queues as las takes them (policy-las.c), except that a
 *		job's attained service counts less the slot-seconds it has
 *		waited at its min, so one kept waiting climbs back to the
 *		first queue and stays there until it has run for the
 *		threshold again: nobody starves;
 *   admit	in that order, each job at its least count while the slots
 *		hold it;
 *   size	the slots left go, one step at a time, to the job whose
 *		next count raises the fitness most a slot: the harmonic
 *		mean of the speedups (Pollux's p = -1), a job whose
 *		allocation would change having its speedup taken down by
 *		the re-allocation factor (T - R d) / (T + d), T its age, R
 *		its restarts, d the restart cost (Pollux, section 4.2);
 *   place	jobs keeping their count keep their nodes, the others from
 *		the largest (pst_place: a node's current ranks first, the
 *		rows' fewest nodes, the tightest rack); one that does not fit
 *		steps down through its counts, or waits;
 *   keep	when every job runs where it ran and the decision does not
 *		raise the fitness past what the restarts cost, the current
 *		allocations stand: a request that matches them keeps them.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "lib/xmalloc.h"
#include "backend/sched/policy-internal.h"

/* The least a re-allocation's factor leaves of a speedup: a job that
 * has restarted more than its age pays for still weighs something. */
#define GOODPUT_FLOOR	0.01
/* A gain per slot below this is none (rounding of the speedups). */
#define GOODPUT_EPS	1e-12

struct gp {
	struct policy_state st;
	const struct policy_request *req;
	double		*factor;	/* per job: the re-allocation factor */
	int		*size;		/* per job: the count being decided */
	int		*cand;		/* per job: the best next count, 0 none */
	double		*gain;		/* per job: its gain a slot */
	char		*admitted;
	int		*pos;		/* per job: its place in st.order */
};

static int
gp_need(const struct policy_state *st, int j)
{
	return st->ix[j].nsizes > 0 ? st->ix[j].sizes[0] : 0;
}

/* Tiresias's queue, by attained service less the slot-seconds waited at
 * the job's least count: true puts it in the first queue. */
static bool
gp_promote(const struct policy_state *st, int j)
{
	const struct policy_job *job = &st->req->jobs[j];
	double	 need = gp_need(st, j) > 0 ? gp_need(st, j) : 1;
	double	 waited = job->age - job->attained / need;

	if (waited < 0)
		waited = 0;
	return job->attained - need * waited < POLICY_QUEUE_S;
}

static double
gp_factor(const struct policy_request *req, const struct policy_job *job)
{
	double	 d = req->restart_s, f;

	if (!(d > 0))
		return 1;
	f = (job->age - job->restarts * d) / (job->age + d);
	return f < GOODPUT_FLOOR ? GOODPUT_FLOOR : f > 1 ? 1 : f;
}

/* A job's term of the fitness with speedup s: -1 / s, the speedup
 * taken down by the re-allocation factor when its allocation changes. */
static double
gp_term(const struct gp *g, int j, bool changed, double s)
{
	if (changed)
		s *= g->factor[j];
	return s > 0 ? -1.0 / s : -1e12;
}

/* The term at count r: a running job changes unless r is its count. */
static double
gp_value(const struct gp *g, int j, int r)
{
	const struct policy_job *job = &g->req->jobs[j];

	return gp_term(g, j, job->ncurrent > 0 && r != job->ncurrent,
	    pst_speedup(&g->st, j, r));
}

/* Job j's best next count within left slots, and its gain a slot. */
static void
gp_next(struct gp *g, int j, int left)
{
	const struct policy_ix *ix = &g->st.ix[j];
	int	 cur = g->size[j];
	double	 v0 = gp_value(g, j, cur);

	g->cand[j] = 0;
	g->gain[j] = 0;
	for (int i = 0; i < ix->nsizes; i++) {
		int	 r = ix->sizes[i];
		double	 per;

		if (r <= cur)
			continue;
		if (r - cur > left)
			break;
		per = (gp_value(g, j, r) - v0) / (r - cur);
		if (per > g->gain[j] + GOODPUT_EPS) {
			g->gain[j] = per;
			g->cand[j] = r;
		}
	}
}

/* Admit in order, each job at its least count while the slots hold it;
 * the slots left. */
static int
gp_admit(struct gp *g)
{
	struct policy_state *st = &g->st;
	int	 room = st->left;

	for (int k = 0; k < g->req->njobs; k++) {
		int	 j = st->order[k], need = gp_need(st, j);

		if (g->st.reply->n[j] > 0 || need == 0 || need > room)
			continue;
		g->admitted[j] = 1;
		g->size[j] = need;
		room -= need;
	}
	return room;
}

/* The slots left, a step at a time, to the admitted job whose next
 * count gains the fitness most a slot. */
static void
gp_size(struct gp *g, int room)
{
	for (int j = 0; j < g->req->njobs; j++) {
		if (g->admitted[j])
			gp_next(g, j, room);
	}
	for (;;) {
		int	 best = -1;

		for (int j = 0; j < g->req->njobs; j++) {
			if (!g->admitted[j] || g->cand[j] == 0)
				continue;
			if (g->cand[j] - g->size[j] > room)
				gp_next(g, j, room);
			if (g->cand[j] != 0 && (best < 0 ||
			    g->gain[j] > g->gain[best] + GOODPUT_EPS))
				best = j;
		}
		if (best < 0)
			break;
		room -= g->cand[best] - g->size[best];
		g->size[best] = g->cand[best];
		gp_next(g, best, room);
	}
}

static int
gp_place_cmp(const void *a, const void *b, void *arg)
{
	const struct gp *g = arg;
	int	 x = *(const int *)a, y = *(const int *)b;

	if (g->size[x] != g->size[y])
		return g->size[x] > g->size[y] ? -1 : 1;
	return (g->pos[x] > g->pos[y]) - (g->pos[x] < g->pos[y]);
}

static void
gp_place(struct gp *g)
{
	struct policy_state *st = &g->st;
	const struct policy_request *req = g->req;
	int	*todo = xcalloc((size_t)req->njobs + 1, sizeof *todo), nt = 0;

	for (int k = 0; k < req->njobs; k++) {
		int	 j = st->order[k];

		if (!g->admitted[j])
			continue;
		if (req->jobs[j].ncurrent == g->size[j] &&
		    pst_current_fits(st, j))
			pst_keep(st, j);
		else
			todo[nt++] = j;
	}
	/* The largest first, ties in priority order. */
	qsort_r(todo, (size_t)nt, sizeof *todo, gp_place_cmp, g);
	for (int t = 0; t < nt; t++) {
		int	 j = todo[t];
		const struct policy_ix *ix = &st->ix[j];

		for (int i = ix->nsizes - 1; i >= 0; i--) {
			if (ix->sizes[i] <= g->size[j] &&
			    pst_place(st, j, ix->sizes[i]) == 0)
				break;
		}
	}
	free(todo);
}

/* The speedup of job j's exact row (nodes, ranks); 0 when none. */
static double
gp_row_speedup(const struct gp *g, int j, const int *node_of, int n)
{
	const struct policy_ix *ix = &g->st.ix[j];
	int	 nodes = pst_distinct(node_of, n);

	for (int r = pst_row(&g->st, j, n); r >= 0 && r < ix->nrows &&
	    ix->rows[r].ranks == n; r++) {
		if (ix->rows[r].nodes == nodes)
			return ix->rows[r].speedup;
	}
	return 0;
}

/*
 * Whether the current allocations should stand instead of the decision:
 * they are all valid together, the same jobs run in both, and the
 * decision's fitness, its changes paying the re-allocation factor, is
 * not above theirs.
 */
static bool
gp_keep_current(struct gp *g)
{
	const struct policy_request *req = g->req;
	struct policy_reply cur = { req->njobs, NULL, NULL };
	struct policy_state st;
	double	 fp = 0, fc = 0;
	bool	 keep = true;

	cur.n = xcalloc((size_t)req->njobs + 1, sizeof *cur.n);
	cur.node_of = xcalloc((size_t)req->njobs + 1, sizeof *cur.node_of);
	pst_init(&st, req, &cur);
	for (int j = 0; j < req->njobs && keep; j++) {
		const struct policy_job *job = &req->jobs[j];
		int	 n = g->st.reply->n[j];

		if ((n > 0) != (job->ncurrent > 0))
			keep = false;
		else if (job->ncurrent == 0 || pst_pinned(&st, j))
			continue;
		else if (!pst_current_fits(&st, j))
			keep = false;
		else {
			pst_keep(&st, j);
			bool	 moved = n != job->ncurrent ||
			    memcmp(g->st.reply->node_of[j], job->current,
			    (size_t)n * sizeof(int)) != 0;

			fc += gp_term(g, j, false, gp_row_speedup(g, j,
			    job->current, job->ncurrent));
			fp += gp_term(g, j, moved, gp_row_speedup(g, j,
			    g->st.reply->node_of[j], n));
		}
	}
	pst_free(&st);
	policy_reply_free(&cur);
	return keep && fp <= fc + 1e-9;
}

static void
gp_decide(const struct policy_request *req, struct policy_reply *rep)
{
	struct gp g = { .req = req };
	size_t	 n = (size_t)req->njobs + 1;

	pst_init(&g.st, req, rep);
	g.factor = xcalloc(n, sizeof *g.factor);
	g.size = xcalloc(n, sizeof *g.size);
	g.cand = xcalloc(n, sizeof *g.cand);
	g.gain = xcalloc(n, sizeof *g.gain);
	g.admitted = xcalloc(n, 1);
	g.pos = xcalloc(n, sizeof *g.pos);
	for (int j = 0; j < req->njobs; j++) {
		g.factor[j] = gp_factor(req, &req->jobs[j]);
		if (pst_pinned(&g.st, j))
			pst_keep(&g.st, j);
	}
	pst_order_las(&g.st, gp_promote);
	for (int k = 0; k < req->njobs; k++)
		g.pos[g.st.order[k]] = k;
	gp_size(&g, gp_admit(&g));
	gp_place(&g);
	if (gp_keep_current(&g)) {
		for (int j = 0; j < req->njobs; j++) {
			if (rep->n[j] > 0 && !pst_pinned(&g.st, j))
				pst_release(&g.st, j);
		}
		for (int j = 0; j < req->njobs; j++) {
			if (req->jobs[j].ncurrent > 0 && !pst_pinned(&g.st, j))
				pst_keep(&g.st, j);
		}
	}
	pst_free(&g.st);
	free(g.factor);
	free(g.size);
	free(g.cand);
	free(g.gain);
	free(g.admitted);
	free(g.pos);
}

const struct policy policy_goodput = {
	.name = "goodput",
	.summary = "each job the ranks its speedup pays for (Pollux's "
	    "fitness), in Tiresias's order, restarts weighed, nobody starved",
	.elastic = true,
	.decide = gp_decide,
};
