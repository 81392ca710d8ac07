/*
 * report-moved.c: the run report's "what moved on the nodes" (report.h):
 * of the samples the backend saved of every node the job ran on (a
 * "node" line every 10 s: the node's rows, its GPUs', its ranks'
 * processes'), each metric that changed during the run by more than 5%
 * of its largest value, and by more than its unit's noise, with its
 * least, largest and last value and a line of its course.  Metrics that
 * held still are left out: the table says what to look at.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xmalloc.h"
#include "cmd/report.h"

/* One metric of one thing (a node, a GPU, a rank) over the run. */
struct track {
	double		*ts, *v;
	int		 n, cap;
	double		 min, max;
};

/* A thing and the tracks of the rows of its table. */
struct group {
	char		 who[96];
	const struct metric_field *f;
	int		 nf;
	struct track	*t;
};

struct moved {
	struct group	*g;
	int		 n, cap;
};

static struct group *
group_of(struct moved *m, const char *who, const struct metric_field *f,
    int nf)
{
	for (int i = 0; i < m->n; i++) {
		if (m->g[i].f == f && strcmp(m->g[i].who, who) == 0)
			return &m->g[i];
	}
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 16;
		m->g = xreallocarray(m->g, (size_t)m->cap, sizeof *m->g);
	}
	memset(&m->g[m->n], 0, sizeof m->g[m->n]);
	snprintf(m->g[m->n].who, sizeof m->g[m->n].who, "%s", who);
	m->g[m->n].f = f;
	m->g[m->n].nf = nf;
	m->g[m->n].t = xcalloc((size_t)nf, sizeof *m->g[m->n].t);
	return &m->g[m->n++];
}

/* The numbers of an object's fields into the tracks of who. */
static void
moved_add(struct moved *m, const char *who, const struct metric_field *f,
    int nf, const json_t *o, double ts)
{
	struct group	*g = group_of(m, who, f, nf);

	for (int r = 0; r < nf; r++) {
		const json_t	*v = json_object_get(o, f[r].name);
		struct track	*t = &g->t[r];
		double		 x;

		if (!json_is_number(v))
			continue;
		x = json_number_value(v);
		if (t->n == t->cap) {
			t->cap = t->cap ? t->cap * 2 : 64;
			t->ts = xreallocarray(t->ts, (size_t)t->cap, sizeof *t->ts);
			t->v = xreallocarray(t->v, (size_t)t->cap, sizeof *t->v);
		}
		t->ts[t->n] = ts;
		t->v[t->n] = x;
		t->min = t->n == 0 || x < t->min ? x : t->min;
		t->max = t->n == 0 || x > t->max ? x : t->max;
		t->n++;
	}
}

/* What a change must exceed in a row's unit to be more than noise. */
static double
unit_noise(const char *unit)
{
	static const struct { const char *unit; double noise; } n[] = {
		{ "percent", 1 }, { "bytes", 1 << 20 }, { "bytes/s", 10000 },
		{ "MHz", 50 }, { "celsius", 2 }, { "watts", 5 },
	};

	for (size_t i = 0; i < sizeof n / sizeof n[0]; i++) {
		if (strcmp(unit, n[i].unit) == 0)
			return n[i].noise;
	}
	return 0;
}

static bool
track_moved(const struct track *t, const struct metric_field *f)
{
	double	 range = t->max - t->min;

	return t->n >= 2 && range > unit_noise(f->unit) &&
	    range > 0.05 * fmax(fabs(t->max), fabs(t->min));
}

/* A value in its unit, as a person reads it. */
static void
value_text(double v, const char *unit, char *buf, size_t len)
{
	static const char *const b[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int	 i = 0;
	bool	 rate = strcmp(unit, "bytes/s") == 0;

	if (strcmp(unit, "bytes") == 0 || rate) {
		while (fabs(v) >= 1024 && i < 4) {
			v /= 1024;
			i++;
		}
		snprintf(buf, len, i ? "%.1f %s%s" : "%.0f %s%s", v, b[i],
		    rate ? "/s" : "");
	} else if (strcmp(unit, "percent") == 0)
		snprintf(buf, len, "%.1f%%", v);
	else
		snprintf(buf, len, "%.4g%s%s", v, *unit ? " " : "", unit);
}

/* A line of a track's course, 160 by 20. */
static void
track_svg(FILE *f, const struct track *t)
{
	double	 t0 = t->ts[0], span = t->ts[t->n - 1] - t0;
	double	 range = t->max - t->min;

	fputs("<svg width=\"160\" height=\"20\" viewBox=\"0 0 160 20\">"
	    "<polyline fill=\"none\" stroke=\"#36c\" stroke-width=\"1.2\" "
	    "points=\"", f);
	for (int i = 0; i < t->n; i++)
		fprintf(f, "%s%.1f,%.1f", i ? " " : "", span > 0 ? (t->ts[i] -
		    t0) / span * 158 + 1 : 80.0, range > 0 ? 19 - (t->v[i] -
		    t->min) / range * 18 : 10.0);
	fputs("\"/></svg>", f);
}

/* The groups of the node lines: a node's rows, each GPU's, each rank's
 * processes'. */
static void
moved_read(struct moved *m, const json_t *lines)
{
	const json_t	*l, *o, *gpus;
	size_t		 i, k;
	char		 who[96];

	json_array_foreach(lines, i, l) {
		const char	*node = json_string_value(json_object_get(l,
		    "node"));
		double		 ts = json_number_value(json_object_get(l, "ts"));

		if (node == NULL)
			continue;
		moved_add(m, node, node_metrics, NM_COUNT, l, ts);
		gpus = json_object_get(l, "gpus");
		json_array_foreach(json_object_get(gpus, "index"), k, o) {
			json_t	*one = json_object();

			/* The GPU's column entries, as an object. */
			for (int r = 0; r < GM_COUNT; r++)
				json_object_set(one, gpu_metrics[r].name,
				    json_array_get(json_object_get(gpus,
				    gpu_metrics[r].name), k));
			snprintf(who, sizeof who, "%s GPU %lld", node,
			    (long long)json_integer_value(o));
			moved_add(m, who, gpu_metrics, GM_COUNT, one, ts);
			json_decref(one);
		}
		json_array_foreach(json_object_get(l, "ranks"), k, o) {
			snprintf(who, sizeof who, "rank %lld (%s)", (long long)
			    json_integer_value(json_object_get(o, "rank")), node);
			moved_add(m, who, rank_metrics, RM_COUNT, o, ts);
		}
	}
}

void
report_moved(FILE *f, const struct report *rp)
{
	struct moved	 m = { 0 };
	char		 a[48], b[48], c[48];
	int		 rows = 0;

	if (json_array_size(rp->nodes) == 0)
		return;
	moved_read(&m, rp->nodes);
	fputs("<h2>What moved on the nodes</h2>\n<p class=\"muted\">Every "
	    "metric of the nodes the job ran on, their GPUs and its ranks' "
	    "processes that changed by more than 5% during the run (a sample "
	    "every 10 s); what held still is left out.</p>\n", f);
	for (int i = 0; i < m.n; i++) {
		struct group *g = &m.g[i];

		for (int r = 0; r < g->nf; r++) {
			const struct track *t = &g->t[r];

			if (!track_moved(t, &g->f[r]))
				continue;
			if (rows++ == 0)
				fputs("<table class=\"moved\"><tr><th>where</th>"
				    "<th>metric</th><th>least</th><th>largest"
				    "</th><th>last</th><th>course</th></tr>\n",
				    f);
			value_text(t->min, g->f[r].unit, a, sizeof a);
			value_text(t->max, g->f[r].unit, b, sizeof b);
			value_text(t->v[t->n - 1], g->f[r].unit, c, sizeof c);
			fputs("<tr><td>", f);
			html_text(f, g->who);
			fputs("</td><td title=\"", f);
			html_text(f, g->f[r].help);
			fprintf(f, "\">%s</td><td>%s</td><td>%s</td><td>%s</td>"
			    "<td>", g->f[r].name, a, b, c);
			track_svg(f, t);
			fputs("</td></tr>\n", f);
		}
	}
	fputs(rows > 0 ? "</table>\n" : "<p>Nothing moved by more than 5%.</p>\n",
	    f);
	for (int i = 0; i < m.n; i++) {
		for (int r = 0; r < m.g[i].nf; r++) {
			free(m.g[i].t[r].ts);
			free(m.g[i].t[r].v);
		}
		free(m.g[i].t);
	}
	free(m.g);
}
