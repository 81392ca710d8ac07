/*
 * report-facts.c: the run report's text (report.h): the head of facts
 * (state, placements, the summary's outcome), the autotune trace, the
 * epochs and the events' table beside their timeline, and the helpers
 * the page shares.  Every string from the journal or a frame is escaped.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/xmalloc.h"
#include "cmd/report.h"

bool
report_tokens(const struct report *rp)
{
	const json_t	*e;
	size_t		 i;

	if (json_is_number(json_object_get(rp->summary, "tokens_per_s")))
		return true;
	json_array_foreach(rp->epochs, i, e) {
		if (json_is_number(json_object_get(e, "val_loss")))
			return true;
	}
	json_array_foreach(rp->evals, i, e) {
		if (json_is_number(json_object_get(e, "val_loss")))
			return true;
	}
	for (int k = 0; rp->nranks > 0 && k < rp->ranks[0].n; k++) {
		if (!isnan(rp->ranks[0].v[C_TOKENS][k]))
			return true;
	}
	return false;
}

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

void
report_wall(double t, char *buf, size_t len)
{
	time_t		 s = (time_t)t;
	struct tm	 tm;

	localtime_r(&s, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M:%S %Z", &tm);
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

void
report_facts(FILE *f, const struct report *rp)
{
	const json_t	*s = rp->summary, *jr;
	char		 t0[64], t1[64];
	size_t		 i;

	report_wall(rp->t0, t0, sizeof t0);
	report_wall(rp->t1, t1, sizeof t1);
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
		if (json_is_number(json_object_get(s, "test_acc")))
			row(f, "test accuracy", "%.4f", num(s, "test_acc"));
		if (json_is_number(json_object_get(s, "val_loss")))
			row(f, "validation", "loss %.4f, perplexity %.2f",
			    num(s, "val_loss"), num(s, "perplexity"));
		if (json_is_number(json_object_get(s, "tokens_per_s")))
			row(f, "throughput", "%.0f tokens/s (%.0f samples/s), "
			    "data wait %.1f%%", num(s, "tokens_per_s"),
			    num(s, "samples_per_s"), num(s, "data_wait_pct"));
		else
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


void
report_autotune(FILE *f, const struct report *rp)
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

/* A language model's epochs say its validation loss, perplexity and
 * tokens/s; an image model's its test accuracy, test loss and samples/s. */
void
report_epochs(FILE *f, const struct report *rp)
{
	bool		 tok = report_tokens(rp);
	const char	*k1 = tok ? "val_loss" : "test_acc";
	const char	*k2 = tok ? "perplexity" : "test_loss";
	const char	*k3 = tok ? "tokens_per_s" : "samples_per_s";
	const json_t	*e;
	size_t		 i;

	fprintf(f, "<h2>Epochs</h2>\n<table class=\"epochs\"><tr>"
	    "<th>epoch</th><th>step</th><th>loss</th><th>%s</th><th>%s</th>"
	    "<th>%s</th><th>data wait</th></tr>\n", tok ? "val loss" :
	    "test acc", tok ? "perplexity" : "test loss", tok ? "tokens/s" :
	    "samples/s");
	json_array_foreach(rp->epochs, i, e)
		fprintf(f, "<tr><td>%d/%d</td><td>%.0f</td><td>%.4f</td>"
		    "<td>%.4f</td><td>%.*f</td><td>%.0f</td><td>%.1f%%</td>"
		    "</tr>\n", (int)num(e, "epoch"), (int)num(e, "epochs"),
		    num(e, "step"), num(e, "loss"), num(e, k1), tok ? 2 : 4,
		    num(e, k2), num(e, k3), num(e, "data_wait_pct"));
	fputs("</table>\n", f);
}

void
report_events(FILE *f, const struct report *rp)
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

