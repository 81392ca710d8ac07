/*
 * detect.c: the table of detectors (detect.h) and what they share: the
 * round that runs them in order, the means and medians over a series,
 * the full window the slow-rank detectors compare, and the choice of a
 * spare to migrate to.  A new detector is one file that exports a const
 * struct detector, plus one line in detect_table.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/sched/detect-internal.h"
#include "backend/sched/detect.h"

/* In the order they are asked: a rank its agent does not have, a
 * re-formation's stragglers, a failover that is due, a silent rank, then
 * slow ranks, then leaks. */
const struct detector *const detect_table[] = {
	&detect_absent,
	&detect_lingering,
	&detect_failover,
	&detect_heartbeat,
	&detect_straggler,
	&detect_util,
	&detect_leak,
	NULL
};

const struct detector *
detect_find(const char *name)
{
	for (int i = 0; detect_table[i] != NULL; i++) {
		if (strcmp(detect_table[i]->name, name) == 0)
			return detect_table[i];
	}
	return NULL;
}

int
detect_run(const struct detect_job *job, struct detect_decision *out, int max)
{
	int	 n;

	for (int i = 0; detect_table[i] != NULL; i++) {
		if ((n = detect_table[i]->run(job, out, max)) > 0)
			return n;
	}
	return 0;
}

static int
cmp_double(const void *a, const void *b)
{
	double	 x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double
detect_mean(const struct series *s, int n)
{
	double	 sum = 0;

	if (n > s->len)
		n = s->len;
	if (n <= 0)
		return 0;
	for (int i = s->len - n; i < s->len; i++)
		sum += series_get(s, i);
	return sum / n;
}

double
detect_median_others(const double *v, int n, int skip)
{
	double	 tmp[DETECT_SLOW_MAX];
	int	 k = 0;

	for (int i = 0; i < n && k < DETECT_SLOW_MAX; i++) {
		if (i != skip)
			tmp[k++] = v[i];
	}
	if (k == 0)
		return 0;
	qsort(tmp, (size_t)k, sizeof *tmp, cmp_double);
	return k % 2 ? tmp[k / 2] : (tmp[k / 2 - 1] + tmp[k / 2]) / 2;
}

bool
detect_watching(const struct detect_job *job)
{
	return !job->reforming && job->now >= job->grace_until && !job->paused;
}

int
detect_window(const struct detect_job *job, double *compute, double *share)
{
	int	 window = detect_window_len(job), nr = 0;

	for (int r = 0; r < job->world && r < DETECT_SLOW_MAX; r++) {
		const struct detect_rank *rk = &job->ranks[r];
		double	 busy = detect_mean(rk->step_ms, window) -
		    detect_mean(rk->comm_ms, window);

		if (rk->compute_ms->len < window)
			return 0;
		compute[r] = detect_mean(rk->compute_ms, window);
		share[r] = busy > 0 ? compute[r] / busy : 1;
		nr++;
	}
	return nr;
}

int
detect_window_len(const struct detect_job *job)
{
	int	 window = (int)job->spec->policy.low_util_for_s;

	return window < 1 ? 1 : window;
}

bool
detect_node_silent(const struct detect_job *job, int n)
{
	const struct detect_node *nd = &job->nodes[n];

	return !nd->up ||
	    job->now - nd->heard > job->spec->policy.heartbeat_timeout_s;
}

bool
detect_rank_silent(const struct detect_job *job, int r)
{
	const struct detect_rank *rk = &job->ranks[r];

	return detect_watching(job) && rk->running && !rk->paused &&
	    job->now - rk->last_seen > job->spec->policy.heartbeat_timeout_s;
}

/* Only CPU jobs move to a spare on their own: a spare's GPUs are not
 * counted here.  A silent spare is no refuge: it is as cut off as the
 * node the rank would leave. */
int
detect_spare(const struct detect_job *job)
{
	if (job->spec->resources.device != DEVICE_CPU)
		return -1;
	for (int n = 0; n < job->nnodes; n++) {
		const struct detect_node *nd = &job->nodes[n];

		if (nd->spare && !detect_node_silent(job, n) && nd->cpu_free > 0)
			return n;
	}
	return -1;
}

void
detect_decide(struct detect_decision *d, enum detect_kind kind, int rank,
    int node, const char *fmt, ...)
{
	va_list	 ap;

	d->kind = kind;
	d->rank = rank;
	d->node = node;
	d->reason[0] = '\0';
	if (fmt != NULL) {
		va_start(ap, fmt);
		vsnprintf(d->reason, sizeof d->reason, fmt, ap);
		va_end(ap);
	}
}
