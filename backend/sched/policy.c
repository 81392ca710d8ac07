/*
 * policy.c: the table of scheduling policies (policy.h), one
 * policy-NAME.c each: a new member is one file that exports a const
 * struct policy, plus one line here.  Beside it, what every member is
 * held to: the request's check before a decision and the reply's after.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xmalloc.h"
#include "backend/sched/policy-internal.h"

/* The first is the default of `hunter sched decide` and `hunter sim`. */
const struct policy *const policy_table[] = {
	&policy_goodput,
	&policy_fifo,
	&policy_las,
	NULL
};

const struct policy *
policy_find(const char *name)
{
	for (int i = 0; policy_table[i] != NULL; i++) {
		if (strcmp(policy_table[i]->name, name) == 0)
			return policy_table[i];
	}
	return NULL;
}

static int
check_name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Whether the n names are unique and well formed; what for messages. */
static int
check_names(const char **names, int n, const char *what, char *err,
    size_t errlen)
{
	for (int i = 0; i < n; i++) {
		size_t len = names[i] != NULL ? strlen(names[i]) : 0;

		if (len == 0 || len > POLICY_MAX_NAME) {
			snprintf(err, errlen, "%s %d: a name of 1 to %d bytes "
			    "is needed", what, i, POLICY_MAX_NAME);
			return -1;
		}
	}
	qsort(names, (size_t)n, sizeof *names, check_name_cmp);
	for (int i = 1; i < n; i++) {
		if (strcmp(names[i - 1], names[i]) == 0) {
			snprintf(err, errlen, "%s '%s' is named twice", what,
			    names[i]);
			return -1;
		}
	}
	return 0;
}

static int
check_job(const struct policy_request *req, const struct policy_job *job,
    int *used, char *err, size_t errlen)
{
	if (!isfinite(job->submitted) || !isfinite(job->age) ||
	    !isfinite(job->attained) || job->age < 0 || job->attained < 0) {
		snprintf(err, errlen, "job '%s': submitted, age and attained "
		    "must be finite, age and attained >= 0", job->name);
		return -1;
	}
	if (job->restarts < 0 || job->min_ranks < 0 || job->max_ranks < 0 ||
	    job->min_ranks > job->max_ranks) {
		snprintf(err, errlen, "job '%s': restarts, min_ranks and "
		    "max_ranks must be >= 0 and min_ranks <= max_ranks (%d, %d)",
		    job->name, job->min_ranks, job->max_ranks);
		return -1;
	}
	if (job->nrows < 0 || job->nrows > POLICY_MAX_ROWS) {
		snprintf(err, errlen, "job '%s': %d speedup rows; at most %d",
		    job->name, job->nrows, POLICY_MAX_ROWS);
		return -1;
	}
	for (int r = 0; r < job->nrows; r++) {
		const struct policy_row *w = &job->rows[r];

		if (w->nodes < 1 || w->ranks < w->nodes ||
		    !isfinite(w->speedup) || w->speedup < 0) {
			snprintf(err, errlen, "job '%s': speedup row %d [%d, %d, "
			    "%g]: nodes must be >= 1, ranks >= nodes, speedup "
			    "finite and >= 0", job->name, r, w->nodes, w->ranks,
			    w->speedup);
			return -1;
		}
	}
	for (int k = 0; k < job->ncurrent; k++) {
		int	 n = job->current[k];

		if (n < 0 || n >= req->nnodes) {
			snprintf(err, errlen, "job '%s': current rank %d is on "
			    "no node of the request", job->name, k);
			return -1;
		}
		if (++used[n] > req->nodes[n].slots) {
			snprintf(err, errlen, "current allocations put more "
			    "than node '%s''s %d slots on it (job '%s')",
			    req->nodes[n].name, req->nodes[n].slots, job->name);
			return -1;
		}
	}
	return 0;
}

int
policy_check(const struct policy_request *req, char *err, size_t errlen)
{
	int	 n = req->nnodes > req->njobs ? req->nnodes : req->njobs, rc = 0;
	long long total = 0;
	const char **names;
	int	*used;

	if (req->nnodes < 0 || req->nnodes > POLICY_MAX_NODES ||
	    req->njobs < 0 || req->njobs > POLICY_MAX_JOBS) {
		snprintf(err, errlen, "%d nodes and %d jobs; at most %d of "
		    "each", req->nnodes, req->njobs, POLICY_MAX_NODES);
		return -1;
	}
	if (!isfinite(req->time) || !isfinite(req->interval_s) ||
	    !isfinite(req->restart_s) || req->interval_s < 0 ||
	    req->restart_s < 0) {
		snprintf(err, errlen, "time, interval_s and restart_s must be "
		    "finite, interval_s and restart_s >= 0");
		return -1;
	}
	names = xcalloc((size_t)n + 1, sizeof *names);
	used = xcalloc((size_t)req->nnodes + 1, sizeof *used);
	for (int i = 0; i < req->nnodes; i++) {
		const struct policy_node *nd = &req->nodes[i];

		names[i] = nd->name;
		total += nd->slots;
		if (nd->slots < 0 || nd->slots > POLICY_MAX_SLOTS ||
		    nd->rack < 0 || nd->rack >= req->nracks) {
			snprintf(err, errlen, "node %d ('%s'): slots must be in "
			    "0..%d and the rack one of the request's", i,
			    nd->name != NULL ? nd->name : "", POLICY_MAX_SLOTS);
			rc = -1;
			goto out;
		}
	}
	if (total > POLICY_MAX_TOTAL) {
		snprintf(err, errlen, "the nodes hold %lld slots; at most %d",
		    total, POLICY_MAX_TOTAL);
		rc = -1;
		goto out;
	}
	if ((rc = check_names(names, req->nnodes, "node", err, errlen)) != 0)
		goto out;
	for (int j = 0; j < req->njobs; j++)
		names[j] = req->jobs[j].name;
	if ((rc = check_names(names, req->njobs, "job", err, errlen)) != 0)
		goto out;
	for (int j = 0; j < req->njobs && rc == 0; j++)
		rc = check_job(req, &req->jobs[j], used, err, errlen);
out:
	free(names);
	free(used);
	return rc;
}

static int
verify_job(const struct policy_request *req, const struct policy_reply *rep,
    int j, int *used, int *multi, char *err, size_t errlen)
{
	const struct policy_job *job = &req->jobs[j];
	int	 n = rep->n[j], lo = job->min_ranks > 0 ? job->min_ranks : 1;
	int	 nodes = pst_distinct(rep->node_of[j], n), found = 0;

	if (!job->preemptible && job->ncurrent > 0) {
		if (n != job->ncurrent || memcmp(rep->node_of[j], job->current,
		    (size_t)n * sizeof(int)) != 0) {
			snprintf(err, errlen, "job '%s' may not be preempted "
			    "and was moved", job->name);
			return -1;
		}
	} else if (n != 0) {
		if (n < lo || n > job->max_ranks) {
			snprintf(err, errlen, "job '%s' given %d ranks, outside "
			    "%d..%d", job->name, n, lo, job->max_ranks);
			return -1;
		}
		for (int r = 0; r < job->nrows && !found; r++)
			found = job->rows[r].nodes == nodes &&
			    job->rows[r].ranks == n;
		if (!found) {
			snprintf(err, errlen, "job '%s' given %d ranks on %d "
			    "nodes, which its table does not offer", job->name,
			    n, nodes);
			return -1;
		}
	}
	for (int k = 0; k < n; k++) {
		int	 x = rep->node_of[j][k];

		if (x < 0 || x >= req->nnodes ||
		    ++used[x] > req->nodes[x].slots) {
			snprintf(err, errlen, "job '%s': rank %d is on a node "
			    "without room", job->name, k);
			return -1;
		}
		if (nodes < 2 || multi[x] == j)
			continue;
		if (multi[x] >= 0) {
			snprintf(err, errlen, "jobs '%s' and '%s' both span "
			    "several nodes and share '%s'", job->name,
			    req->jobs[multi[x]].name, req->nodes[x].name);
			return -1;
		}
		multi[x] = j;
	}
	return 0;
}

int
policy_verify(const struct policy_request *req, const struct policy_reply *rep,
    char *err, size_t errlen)
{
	int	*used = xcalloc((size_t)req->nnodes + 1, sizeof *used);
	int	*multi = xcalloc((size_t)req->nnodes + 1, sizeof *multi);
	int	 rc = 0;

	for (int i = 0; i < req->nnodes; i++)
		multi[i] = -1;
	if (rep->njobs != req->njobs) {
		snprintf(err, errlen, "a reply for %d jobs, not %d", rep->njobs,
		    req->njobs);
		rc = -1;
	}
	for (int j = 0; j < req->njobs && rc == 0; j++)
		rc = verify_job(req, rep, j, used, multi, err, errlen);
	free(used);
	free(multi);
	return rc;
}

void
policy_reply_free(struct policy_reply *rep)
{
	for (int j = 0; rep->node_of != NULL && j < rep->njobs; j++)
		free(rep->node_of[j]);
	free(rep->node_of);
	free(rep->n);
	memset(rep, 0, sizeof *rep);
}

int
policy_decide(const struct policy *p, const struct policy_request *req,
    struct policy_reply *rep, char *err, size_t errlen)
{
	char	 why[512];

	memset(rep, 0, sizeof *rep);
	if (policy_check(req, err, errlen) != 0)
		return -1;
	rep->njobs = req->njobs;
	rep->n = xcalloc((size_t)req->njobs + 1, sizeof *rep->n);
	rep->node_of = xcalloc((size_t)req->njobs + 1, sizeof *rep->node_of);
	p->decide(req, rep);
	if (policy_verify(req, rep, why, sizeof why) != 0) {
		snprintf(err, errlen, "policy %s broke its rules (a bug): %s",
		    p->name, why);
		policy_reply_free(rep);
		return -1;
	}
	return 0;
}
