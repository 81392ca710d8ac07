/*
 * policy-state.c: what the policy members share while one decision is
 * made (policy-internal.h): the slots still free on each node and which
 * job spanning several nodes holds each; every job's table sorted so a
 * count's best row is found at once; keeping a job where it runs;
 * placing a count of ranks on as few nodes and racks as its rows allow;
 * and the orders the members start from.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "lib/xmalloc.h"
#include "backend/sched/policy-internal.h"

static int
ix_row_cmp(const void *a, const void *b)
{
	const struct policy_row *x = a, *y = b;

	if (x->ranks != y->ranks)
		return x->ranks < y->ranks ? -1 : 1;
	if (x->speedup != y->speedup)
		return x->speedup > y->speedup ? -1 : 1;
	return (x->nodes > y->nodes) - (x->nodes < y->nodes);
}

static void
ix_build(struct policy_ix *ix, const struct policy_job *job)
{
	int	 lo = job->min_ranks > 0 ? job->min_ranks : 1;

	ix->nrows = job->nrows;
	ix->rows = xcalloc((size_t)job->nrows + 1, sizeof *ix->rows);
	if (job->nrows > 0)
		memcpy(ix->rows, job->rows, (size_t)job->nrows * sizeof *ix->rows);
	qsort(ix->rows, (size_t)ix->nrows, sizeof *ix->rows, ix_row_cmp);
	ix->sizes = xcalloc((size_t)job->nrows + 1, sizeof *ix->sizes);
	ix->nsizes = 0;
	for (int r = 0; r < ix->nrows; r++) {
		int	 k = ix->rows[r].ranks;

		if (k < lo || k > job->max_ranks ||
		    (ix->nsizes > 0 && ix->sizes[ix->nsizes - 1] == k))
			continue;
		ix->sizes[ix->nsizes++] = k;
	}
}

void
pst_init(struct policy_state *st, const struct policy_request *req,
    struct policy_reply *rep)
{
	memset(st, 0, sizeof *st);
	st->req = req;
	st->reply = rep;
	st->ix = xcalloc((size_t)req->njobs + 1, sizeof *st->ix);
	st->free = xcalloc((size_t)req->nnodes + 1, sizeof *st->free);
	st->multi = xcalloc((size_t)req->nnodes + 1, sizeof *st->multi);
	st->count = xcalloc((size_t)req->nnodes + 1, sizeof *st->count);
	st->nodes = xcalloc((size_t)req->nnodes + 1, sizeof *st->nodes);
	st->order = xcalloc((size_t)req->njobs + 1, sizeof *st->order);
	for (int i = 0; i < req->nnodes; i++) {
		st->free[i] = req->nodes[i].slots;
		st->multi[i] = -1;
		st->total += req->nodes[i].slots;
	}
	st->left = st->total;
	for (int j = 0; j < req->njobs; j++) {
		ix_build(&st->ix[j], &req->jobs[j]);
		st->order[j] = j;
	}
}

void
pst_free(struct policy_state *st)
{
	for (int j = 0; j < st->req->njobs; j++) {
		free(st->ix[j].rows);
		free(st->ix[j].sizes);
	}
	free(st->ix);
	free(st->free);
	free(st->multi);
	free(st->count);
	free(st->nodes);
	free(st->order);
}

int
pst_row(const struct policy_state *st, int j, int ranks)
{
	const struct policy_ix *ix = &st->ix[j];
	int	 lo = 0, hi = ix->nrows;

	while (lo < hi) {
		int	 mid = lo + (hi - lo) / 2;

		if (ix->rows[mid].ranks < ranks)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ix->nrows && ix->rows[lo].ranks == ranks ? lo : -1;
}

double
pst_speedup(const struct policy_state *st, int j, int ranks)
{
	int	 r = pst_row(st, j, ranks);

	return r < 0 ? 0 : st->ix[j].rows[r].speedup;
}

bool
pst_size_ok(const struct policy_state *st, int j, int ranks)
{
	const struct policy_job *job = &st->req->jobs[j];

	return ranks == 0 || (ranks >= (job->min_ranks > 0 ? job->min_ranks : 1)
	    && ranks <= job->max_ranks && pst_row(st, j, ranks) >= 0);
}

int
pst_distinct(const int *node_of, int n)
{
	int	 d = 0;

	/* Allocations list a node's ranks together, as pst_place writes
	 * them; a request's may not, so look back over all. */
	for (int k = 0; k < n; k++) {
		int	 seen = 0;

		for (int i = k - 1; i >= 0 && !seen; i--)
			seen = node_of[i] == node_of[k];
		d += !seen;
	}
	return d;
}

bool
pst_pinned(const struct policy_state *st, int j)
{
	const struct policy_job *job = &st->req->jobs[j];

	return !job->preemptible && job->ncurrent > 0;
}

/* Count job j's current ranks on each node into st->count (reset it with
 * count_clear); returns the distinct nodes. */
static int
count_current(struct policy_state *st, int j)
{
	const struct policy_job *job = &st->req->jobs[j];
	int	 d = 0;

	for (int k = 0; k < job->ncurrent; k++)
		d += st->count[job->current[k]]++ == 0;
	return d;
}

static void
count_clear(struct policy_state *st, int j)
{
	const struct policy_job *job = &st->req->jobs[j];

	for (int k = 0; k < job->ncurrent; k++)
		st->count[job->current[k]] = 0;
}

static bool
row_offered(const struct policy_state *st, int j, int nodes, int ranks)
{
	const struct policy_ix *ix = &st->ix[j];

	for (int r = pst_row(st, j, ranks); r >= 0 && r < ix->nrows &&
	    ix->rows[r].ranks == ranks; r++) {
		if (ix->rows[r].nodes == nodes)
			return true;
	}
	return false;
}

bool
pst_current_fits(const struct policy_state *st0, int j)
{
	struct policy_state *st = (struct policy_state *)st0;
	const struct policy_job *job = &st->req->jobs[j];
	int	 d;
	bool	 ok = job->ncurrent > 0;

	if (!ok)
		return false;
	d = count_current(st, j);
	for (int k = 0; k < job->ncurrent && ok; k++) {
		int	 x = job->current[k];

		ok = st->free[x] >= st->count[x] && (d < 2 || st->multi[x] < 0);
	}
	count_clear(st, j);
	if (ok && !pst_pinned(st, j))
		ok = pst_size_ok(st, j, job->ncurrent) &&
		    row_offered(st, j, d, job->ncurrent);
	return ok;
}

/* Record node_of (n ranks) as job j's allocation. */
static void
take(struct policy_state *st, int j, const int *node_of, int n)
{
	int	 d = pst_distinct(node_of, n);

	free(st->reply->node_of[j]);
	st->reply->node_of[j] = xcalloc((size_t)n + 1, sizeof(int));
	memcpy(st->reply->node_of[j], node_of, (size_t)n * sizeof(int));
	st->reply->n[j] = n;
	for (int k = 0; k < n; k++) {
		st->free[node_of[k]]--;
		if (d >= 2)
			st->multi[node_of[k]] = j;
	}
	st->left -= n;
}

void
pst_keep(struct policy_state *st, int j)
{
	const struct policy_job *job = &st->req->jobs[j];

	take(st, j, job->current, job->ncurrent);
}

void
pst_release(struct policy_state *st, int j)
{
	struct policy_reply *rep = st->reply;

	for (int k = 0; k < rep->n[j]; k++) {
		int	 x = rep->node_of[j][k];

		st->free[x]++;
		if (st->multi[x] == j)
			st->multi[x] = -1;
	}
	st->left += rep->n[j];
	rep->n[j] = 0;
	free(rep->node_of[j]);
	rep->node_of[j] = NULL;
}

/* One node with room for every rank: the one holding most of the job's
 * current ranks, else the fullest that fits (best fit keeps whole nodes
 * for the jobs that span several). */
static int
pick_one(const struct policy_state *st, int ranks)
{
	int	 best = -1;

	for (int x = 0; x < st->req->nnodes; x++) {
		if (st->free[x] < ranks)
			continue;
		if (best < 0 || st->count[x] > st->count[best] ||
		    (st->count[x] == st->count[best] &&
		    st->free[x] < st->free[best]))
			best = x;
	}
	return best;
}

struct pick_ctx {
	const struct policy_state *st;
	const int	*rack_rank;	/* a rack's place in the preference */
	bool		 current;	/* the job's current nodes first */
};

/* The job's current nodes first, then by preferred rack, then the most
 * free, then the request's order. */
static int
pick_cmp(const void *a, const void *b, void *arg)
{
	const struct pick_ctx *c = arg;
	const struct policy_state *st = c->st;
	int	 x = *(const int *)a, y = *(const int *)b;
	int	 rx = c->rack_rank[st->req->nodes[x].rack];
	int	 ry = c->rack_rank[st->req->nodes[y].rack];

	if (c->current && (st->count[x] > 0) != (st->count[y] > 0))
		return st->count[x] > 0 ? -1 : 1;
	if (rx != ry)
		return rx < ry ? -1 : 1;
	if (st->free[x] != st->free[y])
		return st->free[x] > st->free[y] ? -1 : 1;
	return (x > y) - (x < y);
}

struct rack_ctx {
	const int	*held;		/* the job's current ranks a rack */
	const int	*room;		/* free slots of eligible nodes a rack */
	int		 ranks;		/* the job's */
};

/* Racks holding the job first; then those with room for it alone, the
 * tightest first, so that a large rack stays whole; then the rest,
 * largest first, so that as few racks as may be are mixed. */
static int
rack_cmp(const void *a, const void *b, void *arg)
{
	const struct rack_ctx *c = arg;
	int	 x = *(const int *)a, y = *(const int *)b;
	bool	 fx = c->room[x] >= c->ranks, fy = c->room[y] >= c->ranks;

	if (c->held[x] != c->held[y])
		return c->held[x] > c->held[y] ? -1 : 1;
	if (fx != fy)
		return fx ? -1 : 1;
	if (c->room[x] != c->room[y])
		return (c->room[x] < c->room[y]) == fx ? -1 : 1;
	return (x > y) - (x < y);
}

/*
 * n nodes that hold ranks between them, none holding another job that
 * spans several nodes: into out, in the order ranks fill them, racks as
 * rack_cmp prefers them.  When those are too small together, the n with
 * the most room wherever they are.  Returns n, or 0.
 */
static int
pick_many(struct policy_state *st, int ranks, int n, int *out)
{
	const struct policy_request *req = st->req;
	int	*held = xcalloc((size_t)req->nracks + 1, sizeof *held);
	int	*room = xcalloc((size_t)req->nracks + 1, sizeof *room);
	int	*order = xcalloc((size_t)req->nracks + 1, sizeof *order);
	int	*rank_of = xcalloc((size_t)req->nracks + 1, sizeof *rank_of);
	int	 ne = 0, sum = 0;
	struct rack_ctx rc = { held, room, ranks };
	struct pick_ctx pc = { st, rank_of, true };

	for (int x = 0; x < req->nnodes; x++) {
		if (st->free[x] < 1 || st->multi[x] >= 0)
			continue;
		st->nodes[ne++] = x;
		held[req->nodes[x].rack] += st->count[x];
		room[req->nodes[x].rack] += st->free[x];
	}
	for (int r = 0; r < req->nracks; r++)
		order[r] = r;
	qsort_r(order, (size_t)req->nracks, sizeof *order, rack_cmp, &rc);
	for (int i = 0; i < req->nracks; i++)
		rank_of[order[i]] = i;
	qsort_r(st->nodes, (size_t)ne, sizeof *st->nodes, pick_cmp, &pc);
	for (int i = 0; i < ne && i < n; i++)
		sum += st->free[out[i] = st->nodes[i]];
	if (ne >= n && sum < ranks) {
		memset(rank_of, 0, (size_t)req->nracks * sizeof *rank_of);
		pc.current = false;
		qsort_r(st->nodes, (size_t)ne, sizeof *st->nodes, pick_cmp, &pc);
		sum = 0;
		for (int i = 0; i < n; i++)
			sum += st->free[out[i] = st->nodes[i]];
	}
	free(held);
	free(room);
	free(order);
	free(rank_of);
	return ne >= n && sum >= ranks ? n : 0;
}

/* Spread ranks over the n nodes of pick: each in turn to its room,
 * leaving one for each node after it, so a node's ranks stand together. */
static void
fill(const struct policy_state *st, const int *pick, int n, int ranks,
    int *node_of)
{
	int	 k = 0;

	for (int i = 0; i < n; i++) {
		int	 rest = ranks - k - (n - i - 1);
		int	 give = st->free[pick[i]] < rest ? st->free[pick[i]] : rest;

		for (int g = 0; g < give; g++)
			node_of[k++] = pick[i];
	}
}

/* Whether an earlier row of the same count, from first to r, has n. */
static bool
tried_before(const struct policy_ix *ix, int first, int r, int n)
{
	for (int i = first; i < r; i++) {
		if (ix->rows[i].nodes == n)
			return true;
	}
	return false;
}

int
pst_place(struct policy_state *st, int j, int ranks)
{
	const struct policy_ix *ix = &st->ix[j];
	int	*pick, *node_of;
	int	 first = pst_row(st, j, ranks), rc = -1;

	/* A table may offer more ranks than the cluster holds. */
	if (ranks < 1 || ranks > st->left || first < 0)
		return -1;
	pick = xcalloc((size_t)ranks + 1, sizeof *pick);
	node_of = xcalloc((size_t)ranks + 1, sizeof *node_of);
	count_current(st, j);
	for (int r = first; r >= 0 && r < ix->nrows &&
	    ix->rows[r].ranks == ranks && rc != 0; r++) {
		int	 n = ix->rows[r].nodes, x;

		if (n > st->req->nnodes || tried_before(ix, first, r, n))
			continue;
		if (n == 1) {
			if ((x = pick_one(st, ranks)) < 0)
				continue;
			for (int k = 0; k < ranks; k++)
				node_of[k] = x;
		} else {
			if (pick_many(st, ranks, n, pick) != n)
				continue;
			fill(st, pick, n, ranks, node_of);
		}
		rc = 0;
	}
	count_clear(st, j);
	if (rc == 0)
		take(st, j, node_of, ranks);
	free(pick);
	free(node_of);
	return rc;
}

int
pst_fixed_size(const struct policy_state *st, int j)
{
	const struct policy_ix *ix = &st->ix[j];

	return ix->nsizes > 0 ? ix->sizes[ix->nsizes - 1] : 0;
}

static int
order_fifo_cmp(const void *a, const void *b, void *arg)
{
	const struct policy_state *st = arg;
	int	 x = *(const int *)a, y = *(const int *)b;
	double	 sx = st->req->jobs[x].submitted, sy = st->req->jobs[y].submitted;

	if (sx != sy)
		return sx < sy ? -1 : 1;
	return (x > y) - (x < y);
}

void
pst_order_fifo(struct policy_state *st)
{
	qsort_r(st->order, (size_t)st->req->njobs, sizeof *st->order,
	    order_fifo_cmp, st);
}

struct las_ctx {
	const struct policy_state *st;
	const char	*queue;		/* per job: 0 or 1 */
};

static int
order_las_cmp(const void *a, const void *b, void *arg)
{
	const struct las_ctx *c = arg;
	int	 x = *(const int *)a, y = *(const int *)b;

	if (c->queue[x] != c->queue[y])
		return c->queue[x] < c->queue[y] ? -1 : 1;
	return order_fifo_cmp(a, b, (void *)c->st);
}

void
pst_order_las(struct policy_state *st,
    bool (*promote)(const struct policy_state *, int j))
{
	int	 n = st->req->njobs;
	char	*queue = xcalloc((size_t)n + 1, 1);
	struct las_ctx c = { st, queue };

	for (int j = 0; j < n; j++)
		queue[j] = st->req->jobs[j].attained >= POLICY_QUEUE_S &&
		    (promote == NULL || !promote(st, j));
	qsort_r(st->order, (size_t)n, sizeof *st->order, order_las_cmp, &c);
	free(queue);
}
