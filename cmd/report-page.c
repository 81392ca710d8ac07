/*
 * report-page.c: the run report's page (report.h): a head of facts, the
 * charts over steps (events marked where they happened: the loss with a
 * validation or test loss where the job evaluated, the throughput in
 * tokens/s for a language model, the gradient norm where known), where
 * each rank's step time went, the bytes on the wire, then the autotune
 * trace, the epochs (report-facts.c), what moved on the nodes
 * (report-moved.c) and the events.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "build-id.h"
#include "lib/xmalloc.h"
#include "backend/proto/event.h"
#include "cmd/report.h"

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

/* The events marked on the charts over steps: their kind says so
 * (event.h). */
static bool
marked(const char *kind)
{
	return event_kind_marked(event_kind_named(kind));
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
		    rd->n, false, false };
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
		    rd->v[C_SENT], rd->n, false, false };
		l[2 * r + 1] = (struct chart_line){ names[2 * r + 1],
		    rd->v[C_STEP], rd->v[C_DENSE], rd->n, true, false };
	}
	svg_line_chart(f, &(struct chart){ "Gradient bytes on the wire, "
	    "each rank since its launch (log scale; dashed: dense)", "step",
	    "bytes", l, n * 2, NULL, 0, true });
	free(l);
	free(names);
}

/* Whether rank 0 said column c in any report. */
static bool
said(const struct report *rp, int c)
{
	for (int i = 0; rp->nranks > 0 && i < rp->ranks[0].n; i++) {
		if (!isnan(rp->ranks[0].v[c][i]))
			return true;
	}
	return false;
}

/* Rank 0's loss (the global batch's) and, where the job evaluated, the
 * validation loss of a language model or the test loss of an image one,
 * as points at the steps it was measured: the eval frames', else the
 * epochs'. */
static void
page_loss(FILE *f, const struct report *rp, const struct chart_mark *marks,
    int nmarks)
{
	const json_t	*src = json_array_size(rp->evals) > 0 ? rp->evals :
			    rp->epochs, *e;
	bool		 tok = report_tokens(rp);
	const char	*k = tok ? "val_loss" : "test_loss";
	size_t		 n = json_array_size(src), i;
	double		*x = xcalloc(n + 1, sizeof *x);
	double		*y = xcalloc(n + 1, sizeof *y);
	struct chart_line l[2];
	int		 m = 0, nl = 0;

	json_array_foreach(src, i, e) {
		if (json_is_number(json_object_get(e, k))) {
			x[m] = num(e, "step");
			y[m++] = num(e, k);
		}
	}
	if (rp->nranks > 0)
		l[nl++] = (struct chart_line){ "training (rank 0)",
		    rp->ranks[0].v[C_STEP], rp->ranks[0].v[C_LOSS],
		    rp->ranks[0].n, false, false };
	if (m > 0)
		l[nl++] = (struct chart_line){ tok ? "validation" : "test",
		    x, y, m, true, true };
	svg_line_chart(f, &(struct chart){ m > 0 ? tok ? "Loss: training "
	    "(the global batch's) and validation" : "Loss: training (the "
	    "global batch's) and test" : "Loss (rank 0: the global batch's)",
	    "step", tok ? "loss (nats a token)" : "loss", l, nl, marks,
	    nmarks, false });
	free(x);
	free(y);
}

/* The job's allocation over time: its ranks at each launch record
 * (every generation journals one, a resize's with its new world), as a
 * step line over the seconds since the series began. */
static void
page_allocation(FILE *f, const struct report *rp)
{
	size_t		 n = json_array_size(rp->jobs), i;
	double		*x = xcalloc(2 * n + 2, sizeof *x);
	double		*y = xcalloc(2 * n + 2, sizeof *y);
	const json_t	*o;
	int		 k = 0;
	bool		 moved = false;

	json_array_foreach(rp->jobs, i, o) {
		double	 t = num(o, "ts") - rp->t0;

		if (k > 0) {		/* a step: the old count until now */
			x[k] = t;
			y[k] = y[k - 1];
			k++;
		}
		x[k] = t;
		y[k] = num(o, "world");
		moved |= k > 0 && y[k] != y[k - 1];
		k++;
	}
	if (k > 0) {
		x[k] = (rp->ended ? rp->t1 : (double)time(NULL)) - rp->t0;
		y[k] = y[k - 1];
		k++;
	}
	if (k > 1)
		svg_line_chart(f, &(struct chart){ moved ? "Allocation: ranks "
		    "over time (the scheduler resized it)" : "Allocation: ranks "
		    "over time", "seconds", "ranks", &(struct chart_line){
		    "ranks", x, y, k, false, false }, 1, NULL, 0, false });
	free(x);
	free(y);
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
	report_wall((double)time(NULL), now, sizeof now);
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	    "<title>hunter report: ", f);
	html_text(f, rp->job);
	fprintf(f, "</title><style>%s</style></head><body>\n<h1>hunter "
	    "report: ", style);
	html_text(f, rp->job);
	fputs("</h1>\n", f);
	report_facts(f, rp);
	fputs("<h2>Training</h2>\n", f);
	page_loss(f, rp, marks, (int)k);
	if (report_tokens(rp) && said(rp, C_TOKENS))
		page_steps(f, rp, "Throughput", "tokens/s", C_TOKENS, 1, false,
		    marks, (int)k);
	else
		page_steps(f, rp, "Throughput", "samples/s", C_SPS, 1, false,
		    marks, (int)k);
	if (said(rp, C_GRAD))
		page_steps(f, rp, "Gradient norm before clipping (rank 0: the "
		    "summed gradient's)", "norm", C_GRAD, 1, false, marks,
		    (int)k);
	page_steps(f, rp, "Step time, each rank", "ms", C_STEP_MS, 1, true,
	    marks, (int)k);
	page_split(f, rp);
	page_allocation(f, rp);
	page_bytes(f, rp);
	report_autotune(f, rp);
	report_epochs(f, rp);
	report_moved(f, rp);
	report_events(f, rp);
	fprintf(f, "<p class=\"muted\">Written by hunter %s at %s.</p>\n"
	    "</body></html>\n", HUNTER_GIT_DESCRIBE, now);
	free(marks);
}
