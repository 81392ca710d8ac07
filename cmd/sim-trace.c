/*
 * sim-trace.c: the workload of `hunter sim` (sim.h): a CSV of arrivals,
 * name,time,application,ranks,batch[,samples], read and checked line by
 * line; and the generator, whose arrivals and sizes follow what was
 * published of Microsoft's Philly trace (docs/scheduling.md, The
 * workload generator, gives each number's source):
 *
 *   arrivals   Poisson, jobs over hours (160 over 8: Pollux's workloads,
 *              sampled from the busiest 8 hours of the trace);
 *   size       by GPU-time, the categories of Pollux's workloads: under
 *              1 GPU-hour, 1-10, 10-100, 100-1000, in the proportions
 *              134 : 19 : 3 : 4 of Pollux's published sample of 160,
 *              log-uniform within a category (from 1 minute: Pollux
 *              drops shorter jobs); each category one application,
 *              the models sorted by their work at one rank;
 *   ranks      what a user who wants 50-80% of linear scaling asks for
 *              (Pollux's rule; the most asked for when every count scales
 *              better, 1 when none reaches half); batch: the
 *              application's, times the ranks (each rank keeps its
 *              share), within its max;
 *   samples    the GPU-time run at that size: GPU-time / ranks seconds.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/rng.h"
#include "lib/errf.h"
#include "lib/xmalloc.h"
#include "cmd/sim.h"

#define TRACE_LINE	1024
#define TRACE_HEADER	"name,time,application,ranks,batch"
#define TRACE_MAX_JOBS	100000

static bool
trace_name_ok(const char *s)
{
	if (*s == '\0' || strlen(s) >= SIM_NAME_MAX)
		return false;
	for (; *s != '\0'; s++) {
		if (!isalnum((unsigned char)*s) && strchr("._-", *s) == NULL)
			return false;
	}
	return true;
}

/* One line's fields (comma-separated, the newline cut) into f. */
static int
trace_split(char *line, char **f, int max)
{
	int	 n = 0;

	line[strcspn(line, "\r\n")] = '\0';
	for (char *p = line; n < max; ) {
		f[n++] = p;
		if ((p = strchr(p, ',')) == NULL)
			break;
		*p++ = '\0';
	}
	return n;
}

static int
trace_row(char *line, const char *path, int no, const struct sim_apps *apps,
    struct sim_job *j, char *err, size_t errlen)
{
	char	*f[7], *end;
	int	 n = trace_split(line, f, 7);
	long	 ranks, batch;

	if (n < 5 || n > 6)
		return (errf(err, errlen, "%s:%d: expected name,time,"
		    "application,ranks,batch[,samples]", path, no), -1);
	if (!trace_name_ok(f[0]))
		return (errf(err, errlen, "%s:%d: the name '%.64s' may only "
		    "hold letters, digits, '.', '_' and '-'", path, no, f[0]), -1);
	snprintf(j->name, sizeof j->name, "%s", f[0]);
	errno = 0;
	j->arrival = strtod(f[1], &end);
	if (end == f[1] || *end != '\0' || !isfinite(j->arrival) ||
	    j->arrival < 0)
		return (errf(err, errlen, "%s:%d: time must be seconds >= 0, "
		    "got '%.32s'", path, no, f[1]), -1);
	if ((j->app = sim_app_find(apps, f[2])) == NULL)
		return (errf(err, errlen, "%s:%d: no application model "
		    "'%.64s'", path, no, f[2]), -1);
	ranks = strtol(f[3], &end, 10);
	if (end == f[3] || *end != '\0' || ranks < 1 || ranks > POLICY_MAX_SLOTS)
		return (errf(err, errlen, "%s:%d: ranks must be an integer "
		    "in 1..%d, got '%.32s'", path, no, POLICY_MAX_SLOTS, f[3]), -1);
	batch = strtol(f[4], &end, 10);
	if (end == f[4] || *end != '\0' || batch < ranks || batch > 1 << 24 ||
	    batch % ranks != 0)
		return (errf(err, errlen, "%s:%d: batch must be a multiple of "
		    "ranks (%ld), got '%.32s'", path, no, ranks, f[4]), -1);
	j->ranks = (int)ranks;
	j->batch = (int)batch;
	j->samples = j->app->samples;
	if (n == 6) {
		j->samples = strtod(f[5], &end);
		if (end == f[5] || *end != '\0' || !isfinite(j->samples) ||
		    j->samples <= 0)
			return (errf(err, errlen, "%s:%d: samples must be > 0, "
			    "got '%.32s'", path, no, f[5]), -1);
	}
	return 0;
}

static int
trace_arrival_cmp(const void *a, const void *b)
{
	const struct sim_job *x = a, *y = b;

	if (x->arrival != y->arrival)
		return x->arrival < y->arrival ? -1 : 1;
	return strcmp(x->name, y->name);
}

int
sim_trace_load(const char *path, const struct sim_apps *apps,
    struct sim_trace *t, char *err, size_t errlen)
{
	FILE	*f = fopen(path, "r");
	char	 line[TRACE_LINE];
	int	 no = 1, cap = 0;

	memset(t, 0, sizeof *t);
	if (f == NULL)
		return (errf(err, errlen, "%s: %s", path, strerror(errno)), -1);
	if (fgets(line, sizeof line, f) == NULL ||
	    strncmp(line, TRACE_HEADER, strlen(TRACE_HEADER)) != 0) {
		fclose(f);
		return (errf(err, errlen, "%s:1: the header must be name,time,"
		    "application,ranks,batch[,samples]", path), -1);
	}
	while (fgets(line, sizeof line, f) != NULL) {
		no++;
		if (line[0] == '#' || line[strspn(line, " \r\n")] == '\0')
			continue;
		if (t->n == TRACE_MAX_JOBS) {
			fclose(f);
			sim_trace_free(t);
			return (errf(err, errlen, "%s:%d: more than %d jobs",
			    path, no, TRACE_MAX_JOBS), -1);
		}
		if (t->n == cap) {
			cap = cap ? 2 * cap : 64;
			t->v = xreallocarray(t->v, (size_t)cap, sizeof *t->v);
		}
		if (trace_row(line, path, no, apps, &t->v[t->n], err,
		    errlen) != 0) {
			fclose(f);
			sim_trace_free(t);
			return -1;
		}
		for (int i = 0; i < t->n; i++) {
			if (strcmp(t->v[i].name, t->v[t->n].name) == 0) {
				fclose(f);
				errf(err, errlen, "%s:%d: job '%s' is named "
				    "twice", path, no, t->v[i].name);
				sim_trace_free(t);
				return -1;
			}
		}
		t->n++;
	}
	fclose(f);
	if (t->n == 0)
		return (errf(err, errlen, "%s: no jobs", path), -1);
	qsort(t->v, (size_t)t->n, sizeof *t->v, trace_arrival_cmp);
	return 0;
}

void
sim_trace_free(struct sim_trace *t)
{
	free(t->v);
	memset(t, 0, sizeof *t);
}

/* The categories: GPU-hours bounds and how many of Pollux's 160. */
static const struct {
	double	 lo_h, hi_h;
	int	 count;
} gen_size[] = {
	{ 1.0 / 60, 1, 134 },
	{ 1, 10, 19 },
	{ 10, 100, 3 },
	{ 100, 1000, 4 },
};
#define GEN_SIZES	((int)(sizeof gen_size / sizeof gen_size[0]))

/* An application's fixed-batch throughput at ranks on as few nodes of
 * slots as hold them; 0 when the batch does not split. */
static double
gen_throughput(const struct sim_app *a, int ranks, int batch, int slots)
{
	struct goodput_job j = { a->model, -1, batch, batch, a->micro_max, 0, 0 };
	struct goodput_choice c;

	goodput_best(&j, (ranks + slots - 1) / slots, ranks, &c);
	return c.throughput;
}

/* What Pollux's user asks for: a count whose scaling is 50-80% of
 * linear, drawn among those; when every count up to max_ranks scales
 * better than that, max_ranks; 1 when not even 2 ranks reach 50%. */
static int
gen_ranks(const struct sim_app *a, const struct sim_gen *g, struct rng *r,
    int *batch)
{
	int	 ok[64], n = 0, good = 1;
	double	 one = gen_throughput(a, 1, a->batch, 1);

	for (int k = 2; k <= g->max_ranks && n < 64; k++) {
		int	 b = a->batch * k <= a->batch_max ? a->batch * k :
		    a->batch_max / k * k;
		double	 eff = b >= k ? gen_throughput(a, k, b, g->slots) /
		    (k * one) : 0;

		if (eff >= 0.5 && eff <= 0.8)
			ok[n++] = k;
		if (eff > 0.8 && good == k - 1)
			good = k;
	}
	n = n > 0 ? ok[rng_below(r, (uint32_t)n)] : good;
	*batch = a->batch * n <= a->batch_max ? a->batch * n :
	    a->batch_max / n * n;
	return n;
}

static int
gen_work_cmp(const void *x, const void *y)
{
	const struct sim_app *a = *(const struct sim_app *const *)x;
	const struct sim_app *b = *(const struct sim_app *const *)y;
	double	 wa = a->samples / gen_throughput(a, 1, a->batch, 1);
	double	 wb = b->samples / gen_throughput(b, 1, b->batch, 1);

	return (wa > wb) - (wa < wb);
}

int
sim_generate(FILE *out, const struct sim_apps *apps, const struct sim_gen *g,
    char *err, size_t errlen)
{
	const struct sim_app *by_work[GEN_SIZES], **sorted;
	struct rng r;
	double	 t = 0, total = 0;

	if (g->jobs < 1 || g->jobs > TRACE_MAX_JOBS || !(g->hours > 0) ||
	    g->slots < 1)
		return (errf(err, errlen, "the generator needs 1..%d jobs "
		    "over hours > 0", TRACE_MAX_JOBS), -1);
	/* The models by their work on one rank: the shortest serves the
	 * smallest category, the longest the largest. */
	sorted = xcalloc((size_t)apps->n, sizeof *sorted);
	for (int i = 0; i < apps->n; i++)
		sorted[i] = &apps->v[i];
	qsort(sorted, (size_t)apps->n, sizeof *sorted, gen_work_cmp);
	for (int c = 0; c < GEN_SIZES; c++)
		by_work[c] = sorted[(long)c * apps->n / GEN_SIZES];
	free(sorted);
	for (int c = 0; c < GEN_SIZES; c++)
		total += gen_size[c].count;
	rng_seed(&r, g->seed, 25);
	fprintf(out, "name,time,application,ranks,batch,samples\n");
	for (int i = 0; i < g->jobs; i++) {
		double	 u = rng_float(&r) * total, hours, secs;
		int	 c = 0, ranks, batch;
		const struct sim_app *a;

		t += -log(1.0 - rng_float(&r)) * g->hours * 3600 / g->jobs;
		while (c < GEN_SIZES - 1 && u >= gen_size[c].count) {
			u -= gen_size[c].count;
			c++;
		}
		a = by_work[c];
		hours = gen_size[c].lo_h * pow(gen_size[c].hi_h /
		    gen_size[c].lo_h, rng_float(&r));
		ranks = gen_ranks(a, g, &r, &batch);
		secs = hours * 3600 / ranks;
		fprintf(out, "%s-%d,%.0f,%s,%d,%d,%.0f\n", a->name, i, t, a->name,
		    ranks, batch, secs * gen_throughput(a, ranks, batch,
		    g->slots));
	}
	return 0;
}
