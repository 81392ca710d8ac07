/*
 * report-page.c: the run report's page (report.h): a head of facts, the
 * charts over steps (events marked where they happened), where each
 * rank's step time went, the bytes on the wire, the autotune trace, the
 * epochs, and the events on a timeline and in a table with their
 * reasons.  Every string from the journal or a frame is escaped.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "build-id.h"
#include "lib/xmalloc.h"
#include "cmd/report.h"

static const char style[] =
	"body{font:14px/1.4 sans-serif;margin:24px auto;max-width:800px;"
	"color:#222}h1{font-size:22px}h2{font-size:17px;margin-top:28px;"
	"border-bottom:1px solid #ddd}table{border-collapse:collapse;"
	"font-size:13px}td,th{padding:2px 8px;text-align:left;"
	"border-bottom:1px solid #eee;vertical-align:top}"
	"th{background:#f4f4f4}svg{display:block;margin:10px 0}"
	".plot{fill:#fcfcfc;stroke:#bbb}.grid{stroke:#eee}"
	".tick,.key,.lbl{font-size:11px;fill:#444}.ttl{font-size:13px;"
	"font-weight:bold}.marklbl{font-size:10px}.none{fill:#999}"
	".refused{opacity:.6}.muted{color:#777}"
	".events td:first-child{white-space:nowrap}";

static double
num(const json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

static const char *
str(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s != NULL ? s : "";
}

/* 409600 as "400 KiB". */
static void
bytes_text(double v, char *buf, size_t len)
{
	static const char *const units[] = { "bytes", "KiB", "MiB", "GiB",
		"TiB" };
	int	 u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", v, units[u]);
}

static void
wall_text(double t, char *buf, size_t len)
{
	time_t		 s = (time_t)t;
	struct tm	 tm;

	localtime_r(&s, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M:%S %Z", &tm);
}

/* The step rank 0 was at, wall time t: its last report by then. */
static double
step_at(const struct report *rp, double t)
{
	const struct rank_data *rd = rp->nranks > 0 ? &rp->ranks[0] : NULL;
	double	 step = 0;

	for (int i = 0; rd != NULL && i < rd->n && rd->v[C_TS][i] <= t; i++) {
		if (!isnan(rd->v[C_STEP][i]))
			step = rd->v[C_STEP][i];
	}
	return step;
}

/* The events marked on the charts over steps. */
static bool
marked(const char *kind)
{
	static const char *const kinds[] = { "paused", "resumed", "migrated",
		"failover", "restarted", "failed", NULL };

	for (int i = 0; kinds[i] != NULL; i++) {
		if (strcmp(kind, kinds[i]) == 0)
			return true;
	}
	return false;
}

static void
row(FILE *f, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
row(FILE *f, const char *key, const char *fmt, ...)
{
	char	 buf[1024];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	fputs("<tr><th>", f);
	html_text(f, key);
	fputs("</th><td>", f);
	html_text(f, buf);
	fputs("</td></tr>\n", f);
}

static void
page_head(FILE *f, const struct report *rp)
{
	const json_t	*s = rp->summary, *jr;
	char		 t0[64], t1[64];
	size_t		 i;

	wall_text(rp->t0, t0, sizeof t0);
	wall_text(rp->t1, t1, sizeof t1);
	fputs("<table class=\"facts\">\n", f);
	row(f, "state", "%s", rp->ended ? rp->end_state : "running (or its "
	    "end is not in the journal)");
	row(f, "ranks", "%d", rp->nranks);
	row(f, "from", "%s", t0);
	row(f, rp->ended ? "to" : "last report", "%s (%.0f s)", t1,
	    rp->t1 - rp->t0);
	json_array_foreach(rp->jobs, i, jr) {
		char	*pl = json_dumps(json_object_get(jr, "placement"),
		    JSON_COMPACT);
		char	 key[32];

		snprintf(key, sizeof key, "generation %d",
		    (int)json_integer_value(json_object_get(jr, "generation")));
		row(f, key, "on %s", pl != NULL ? pl : "?");
		free(pl);
	}
	if (s != NULL) {
		row(f, "steps", "%lld, %d epochs", (long long)json_integer_value(
		    json_object_get(s, "steps")), (int)json_integer_value(
		    json_object_get(s, "epochs")));
		row(f, "test accuracy", "%.4f", num(s, "test_acc"));
		row(f, "throughput", "%.0f samples/s, data wait %.1f%%",
		    num(s, "samples_per_s"), num(s, "data_wait_pct"));
		if (num(s, "bytes_sent") > 0) {
			char	 sent[32], dense[32];

			bytes_text(num(s, "bytes_sent"), sent, sizeof sent);
			bytes_text(num(s, "bytes_dense"), dense, sizeof dense);
			row(f, "bytes sent", "%s for %s dense: compression "
			    "%.2fx (the last generation's)", sent, dense,
			    num(s, "bytes_dense") / num(s, "bytes_sent"));
		}
		row(f, "batch", "micro %d x accum %d", (int)num(s,
		    "micro_batch"), (int)num(s, "accum"));
		if (*str(s, "checkpoint") != '\0')
			row(f, "last checkpoint", "%s", str(s, "checkpoint"));
	}
	row(f, "sources", "%s and %s/journal.jsonl", rp->series_path,
	    rp->state_dir);
	fputs("</table>\n", f);
}

/* A chart over steps of column c: rank 0 only when all, else each rank. */
static void
page_steps(FILE *f, const struct report *rp, const char *title,
    const char *ylabel, int c, double scale, bool all,
    const struct chart_mark *marks, int nmarks)
{
	int		 n = all ? rp->nranks : rp->nranks > 0;
	struct chart_line *l = xcalloc((size_t)n + 1, sizeof *l);
	double		**y = xcalloc((size_t)n + 1, sizeof *y);
	char		(*names)[32] = xcalloc((size_t)n + 1, sizeof *names);

	for (int r = 0; r < n; r++) {
		const struct rank_data *rd = &rp->ranks[r];

		y[r] = xcalloc((size_t)rd->n + 1, sizeof **y);
		for (int i = 0; i < rd->n; i++)
			y[r][i] = rd->v[c][i] * scale;
		snprintf(names[r], sizeof names[r], "rank %d", r);
		l[r] = (struct chart_line){ names[r], rd->v[C_STEP], y[r],
		    rd->n, false };
	}
	svg_line_chart(f, &(struct chart){ title, "step", ylabel, l, n,
	    marks, nmarks, false });
	for (int r = 0; r < n; r++)
		free(y[r]);
	free(y);
	free(l);
	free(names);
}

/* Each rank's mean compute, exchange and data wait per step. */
static void
page_split(FILE *f, const struct report *rp)
{
	static const char *const parts[] = { "compute", "exchange",
		"data wait" };
	const char	**rows = xcalloc((size_t)rp->nranks + 1, sizeof *rows);
	char		(*names)[32] = xcalloc((size_t)rp->nranks + 1,
			    sizeof *names);
	double		*v = xcalloc((size_t)rp->nranks * 3 + 1, sizeof *v);

	for (int r = 0; r < rp->nranks; r++) {
		const struct rank_data *rd = &rp->ranks[r];
		int	 k[3] = { 0 };

		snprintf(names[r], sizeof names[r], "rank %d", r);
		rows[r] = names[r];
		for (int i = 0; i < rd->n; i++) {
			for (int p = 0; p < 3; p++) {
				double	 x = rd->v[C_COMPUTE + p][i];

				if (!isnan(x)) {
					v[r * 3 + p] += x;
					k[p]++;
				}
			}
		}
		for (int p = 0; p < 3; p++)
			v[r * 3 + p] = k[p] ? v[r * 3 + p] / k[p] : 0;
	}
	svg_stack_chart(f, "Where each rank's step went (mean of its "
	    "reports)", "ms", rows, rp->nranks, parts, 3, v);
	free(rows);
	free(names);
	free(v);
}

/* Bytes handed to the collectives and what they would have been dense,
 * each rank's since its launch, on a log scale. */
static void
page_bytes(FILE *f, const struct report *rp)
{
	int		 n = rp->nranks;
	struct chart_line *l = xcalloc((size_t)n * 2 + 1, sizeof *l);
	char		(*names)[40] = xcalloc((size_t)n * 2 + 1, sizeof *names);

	for (int r = 0; r < n; r++) {
		const struct rank_data *rd = &rp->ranks[r];

		snprintf(names[2 * r], sizeof names[0], "rank %d sent", r);
		snprintf(names[2 * r + 1], sizeof names[0], "rank %d dense", r);
		l[2 * r] = (struct chart_line){ names[2 * r], rd->v[C_STEP],
		    rd->v[C_SENT], rd->n, false };
		l[2 * r + 1] = (struct chart_line){ names[2 * r + 1],
		    rd->v[C_STEP], rd->v[C_DENSE], rd->n, true };
	}
	svg_line_chart(f, &(struct chart){ "Gradient bytes on the wire, "
	    "each rank since its launch (log scale; dashed: dense)", "step",
	    "bytes", l, n * 2, NULL, 0, true });
	free(l);
	free(names);
}

static void
page_autotune(FILE *f, const struct report *rp)
{
	const json_t	*a = rp->autotune, *t;
	struct chart_bar *b;
	char		 budget[32], peak[32];
	size_t		 i, n;

	fputs("<h2>Autotune</h2>\n", f);
	if (a == NULL) {
		fputs("<p class=\"muted\">No micro-batch search: the job set "
		    "its micro-batch (or resumed with one).</p>\n", f);
		return;
	}
	n = json_array_size(json_object_get(a, "trials"));
	bytes_text(num(a, "budget"), budget, sizeof budget);
	fprintf(f, "<p>Micro-batch %d x accumulation %d chosen in %.2f s, "
	    "within a budget of %s a rank, after %zu trials.</p>\n",
	    (int)num(a, "micro_batch"), (int)num(a, "accum"), num(a, "seconds"),
	    budget, n);
	b = xcalloc(n + 1, sizeof *b);
	fputs("<table class=\"autotune\"><tr><th>size</th><th>fits</th>"
	    "<th>peak</th><th>samples/s</th><th>steps</th></tr>\n", f);
	json_array_foreach(json_object_get(a, "trials"), i, t) {
		bool	 fit = json_is_true(json_object_get(t, "fit"));

		snprintf(b[i].label, sizeof b[i].label, "%d",
		    (int)num(t, "size"));
		b[i].v = fit ? num(t, "samples_per_s") : 0;
		b[i].ok = fit;
		snprintf(b[i].note, sizeof b[i].note, "%s: %.0f samples/s",
		    fit ? "fits" : "over budget", num(t, "samples_per_s"));
		bytes_text(num(t, "peak_bytes"), peak, sizeof peak);
		fprintf(f, "<tr><td>%d</td><td>%s</td><td>%s</td>"
		    "<td>%.0f</td><td>%.0f</td></tr>\n", (int)num(t, "size"),
		    fit ? "yes" : "no", peak,
		    num(t, "samples_per_s"), num(t, "steps"));
	}
	fputs("</table>\n", f);
	svg_bar_chart(f, "Autotune trials: samples/s by micro-batch",
	    "samples/s", b, (int)n);
	free(b);
}

static void
page_epochs(FILE *f, const struct report *rp)
{
	const json_t	*e;
	size_t		 i;

	fputs("<h2>Epochs</h2>\n<table class=\"epochs\"><tr><th>epoch</th>"
	    "<th>step</th><th>loss</th><th>test acc</th><th>test loss</th>"
	    "<th>samples/s</th><th>data wait</th></tr>\n", f);
	json_array_foreach(rp->epochs, i, e)
		fprintf(f, "<tr><td>%d/%d</td><td>%.0f</td><td>%.4f</td>"
		    "<td>%.4f</td><td>%.4f</td><td>%.0f</td><td>%.1f%%</td>"
		    "</tr>\n", (int)num(e, "epoch"), (int)num(e, "epochs"),
		    num(e, "step"), num(e, "loss"), num(e, "test_acc"),
		    num(e, "test_loss"), num(e, "samples_per_s"),
		    num(e, "data_wait_pct"));
	fputs("</table>\n", f);
}

static void
page_events(FILE *f, const struct report *rp)
{
	size_t		 n = json_array_size(rp->events), i;
	struct tl_event	*ev = xcalloc(n + 1, sizeof *ev);
	const json_t	*e;

	fputs("<h2>Events</h2>\n", f);
	json_array_foreach(rp->events, i, e)
		ev[i] = (struct tl_event){ num(e, "ts"), str(e, "kind"),
		    str(e, "node"), str(e, "reason"),
		    (int)json_integer_value(json_object_get(e, "rank")) };
	svg_timeline(f, ev, (int)n, rp->t0, rp->t1);
	fputs("<table class=\"events\"><tr><th>time</th><th>kind</th>"
	    "<th>rank</th><th>node</th><th>reason</th></tr>\n", f);
	for (i = 0; i < n; i++) {
		fprintf(f, "<tr class=\"event ev-");
		html_text(f, ev[i].kind);
		fprintf(f, "\"><td>+%.1f s</td><td>", ev[i].t - rp->t0);
		html_text(f, ev[i].kind);
		fputs("</td><td>", f);
		if (ev[i].rank >= 0)
			fprintf(f, "%d", ev[i].rank);
		fputs("</td><td>", f);
		html_text(f, ev[i].node);
		fputs("</td><td>", f);
		html_text(f, ev[i].reason);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
	free(ev);
}

void
report_page(FILE *f, const struct report *rp)
{
	size_t		 n = json_array_size(rp->events), i, k = 0;
	struct chart_mark *marks = xcalloc(n + 1, sizeof *marks);
	const json_t	*e;
	char		 now[64];

	json_array_foreach(rp->events, i, e) {
		double	 x = step_at(rp, num(e, "ts"));
		bool	 dup = false;

		for (size_t m = 0; m < k; m++)
			dup |= marks[m].x == x && strcmp(marks[m].kind,
			    str(e, "kind")) == 0;
		if (marked(str(e, "kind")) && !dup)	/* one a rank, once */
			marks[k++] = (struct chart_mark){ x, str(e, "kind"),
			    str(e, "kind") };
	}
	wall_text((double)time(NULL), now, sizeof now);
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	    "<title>hunter report: ", f);
	html_text(f, rp->job);
	fprintf(f, "</title><style>%s</style></head><body>\n<h1>hunter "
	    "report: ", style);
	html_text(f, rp->job);
	fputs("</h1>\n", f);
	page_head(f, rp);
	fputs("<h2>Training</h2>\n", f);
	page_steps(f, rp, "Loss (rank 0: the global batch's)", "loss",
	    C_LOSS, 1, false, marks, (int)k);
	page_steps(f, rp, "Throughput", "samples/s", C_SPS, 1, false, marks,
	    (int)k);
	page_steps(f, rp, "Step time, each rank", "ms", C_STEP_MS, 1, true,
	    marks, (int)k);
	page_split(f, rp);
	page_bytes(f, rp);
	page_autotune(f, rp);
	page_epochs(f, rp);
	page_events(f, rp);
	fprintf(f, "<p class=\"muted\">Written by hunter %s at %s.</p>\n"
	    "</body></html>\n", HUNTER_GIT_DESCRIBE, now);
	free(marks);
}
