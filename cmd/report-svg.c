/*
 * report-svg.c: the run report's charts as inline SVG (report.h): line
 * charts over steps with event markers, bars, stacked bars and the
 * timeline of events.  Every number goes into the page as an attribute
 * or text; nothing is computed by the browser.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backend/proto/event.h"
#include "cmd/report.h"

#define W	760
#define H	260
#define ML	72	/* room for the y axis' numbers */
#define MR	16
#define MT	28
#define MB	40
#define MAX_POINTS	1500	/* a line holds no more; the rest decimated */

static const char *const palette[] = { "#1f77b4", "#d62728", "#2ca02c",
	"#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf" };

const char *
report_colour(int i)
{
	return palette[(unsigned)i % (sizeof palette / sizeof *palette)];
}

/* The report's colour of each event kind (event.h); the others grey. */
static const char *const kind_colours[EV_COUNT] = {
	[EV_PLACED] = "#2ca02c", [EV_QUEUED] = "#7f7f7f",
	[EV_PAUSED] = "#ff7f0e", [EV_RESUMED] = "#bcbd22",
	[EV_CHECKPOINT] = "#17becf", [EV_MIGRATED] = "#9467bd",
	[EV_FAILOVER] = "#d62728", [EV_RESTARTED] = "#8c564b",
	[EV_FAILED] = "#000000", [EV_REFUSED] = "#e377c2",
	[EV_RESIZED] = "#1f77b4",
};

const char *
report_kind_colour(const char *kind)
{
	const char	*c = kind_colours[event_kind_named(kind)];

	return c != NULL ? c : "#555555";
}

void
html_text(FILE *f, const char *s)
{
	for (; s != NULL && *s != '\0'; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(*s, f); break;
		}
	}
}

/* A step of 1, 2 or 5 times a power of ten giving about 5 ticks. */
static double
nice_step(double span)
{
	double	 raw = span / 5, p, m;

	if (!(raw > 0))
		return 1;
	p = pow(10, floor(log10(raw)));
	m = raw / p;
	return p * (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10);
}

struct axes {
	double	 x0, x1, y0, y1;
	bool	 logy;
};

static double
px(const struct axes *a, double x)
{
	return ML + (x - a->x0) / (a->x1 - a->x0) * (W - ML - MR);
}

static double
py(const struct axes *a, double y)
{
	if (a->logy)
		y = log10(y > 0 ? y : a->y0);
	return H - MB - (y - a->y0) / (a->y1 - a->y0) * (H - MT - MB);
}

static void
axis_number(double v, char *buf, size_t len)
{
	double	 a = fabs(v);

	if (a >= 1e9)
		snprintf(buf, len, "%.3gG", v / 1e9);
	else if (a >= 1e6)
		snprintf(buf, len, "%.3gM", v / 1e6);
	else if (a >= 1e4)
		snprintf(buf, len, "%.3gk", v / 1e3);
	else
		snprintf(buf, len, "%.4g", v);
}

static void
svg_open(FILE *f, const char *cls, const char *title, int h)
{
	fprintf(f, "<svg class=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" "
	    "viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\">"
	    "<title>", cls, W, h, W, h);
	html_text(f, title);
	fprintf(f, "</title><text class=\"ttl\" x=\"%d\" y=\"18\">", ML);
	html_text(f, title);
	fputs("</text>\n", f);
}

static void
svg_axes(FILE *f, const struct axes *a, const char *xlabel,
    const char *ylabel)
{
	double	 s;
	char	 num[32];

	fprintf(f, "<rect class=\"plot\" x=\"%d\" y=\"%d\" width=\"%d\" "
	    "height=\"%d\"/>\n", ML, MT, W - ML - MR, H - MT - MB);
	s = nice_step(a->x1 - a->x0);
	for (double x = ceil(a->x0 / s) * s; xlabel != NULL &&
	    x <= a->x1 + s * 1e-9; x += s) {
		axis_number(x, num, sizeof num);
		fprintf(f, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" "
		    "y1=\"%d\" y2=\"%d\"/><text class=\"tick\" x=\"%.1f\" "
		    "y=\"%d\" text-anchor=\"middle\">%s</text>\n", px(a, x),
		    px(a, x), MT, H - MB, px(a, x), H - MB + 14, num);
	}
	s = a->logy ? 1 : nice_step(a->y1 - a->y0);
	for (double y = ceil(a->y0 / s) * s; y <= a->y1 + s * 1e-9; y += s) {
		double	 v = a->logy ? pow(10, y) : y;
		double	 yy = H - MB - (y - a->y0) / (a->y1 - a->y0) *
		    (H - MT - MB);

		axis_number(v, num, sizeof num);
		fprintf(f, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" "
		    "y1=\"%.1f\" y2=\"%.1f\"/><text class=\"tick\" x=\"%d\" "
		    "y=\"%.1f\" text-anchor=\"end\">%s</text>\n", ML, W - MR,
		    yy, yy, ML - 6, yy + 4, num);
	}
	fprintf(f, "<text class=\"lbl\" x=\"%d\" y=\"%d\" "
	    "text-anchor=\"middle\">", (ML + W - MR) / 2, H - 6);
	html_text(f, xlabel != NULL ? xlabel : "");
	fprintf(f, "</text><text class=\"lbl\" transform=\"translate(14,%d) "
	    "rotate(-90)\" text-anchor=\"middle\">", (MT + H - MB) / 2);
	html_text(f, ylabel);
	fputs("</text>\n", f);
}

/* Whether a point can be drawn: both coordinates known (a number, not
 * NaN or infinite) and, on a log scale, y above 0. */
static bool
known(double x, double y, bool logy)
{
	return isfinite(x) && isfinite(y) && (!logy || y > 0);
}

/* The line's points, a segment to a polyline; its dots. */
static void
svg_polylines(FILE *f, const struct axes *a, const struct chart_line *l,
    int idx)
{
	int	 every = l->n > MAX_POINTS ?
	    (l->n + MAX_POINTS - 1) / MAX_POINTS : 1;
	int	 open = 0;

	for (int i = 0; i < l->n; i++) {
		bool	 back = i > 0 && l->x[i] < l->x[i - 1];

		if (i % every != 0 && i != l->n - 1 && !back)
			continue;
		/* What a rank did not report is no point ("nan" in points
		 * makes a browser drop the whole line). */
		if (!known(l->x[i], l->y[i], a->logy))
			continue;
		if (back && open) {
			fputs("\"/>\n", f);
			open = 0;
		}
		if (!open) {
			fprintf(f, "<polyline class=\"series\" data-name=\"");
			html_text(f, l->name);
			fprintf(f, "\" fill=\"none\" stroke=\"%s\" "
			    "stroke-width=\"1.5\"%s points=\"",
			    report_colour(idx), l->dashed ? " stroke-dasharray=\"5,3\"" : "");
			open = 1;
		}
		fprintf(f, "%.1f,%.1f ", px(a, l->x[i]), py(a, l->y[i]));
	}
	if (open)
		fputs("\"/>\n", f);
	for (int i = 0; l->dots && i < l->n; i++) {
		if (known(l->x[i], l->y[i], a->logy))
			fprintf(f, "<circle class=\"point\" cx=\"%.1f\" "
			    "cy=\"%.1f\" r=\"2.5\" fill=\"%s\"/>\n",
			    px(a, l->x[i]), py(a, l->y[i]), report_colour(idx));
	}
}

void
svg_line_chart(FILE *f, const struct chart *c)
{
	struct axes	 a = { INFINITY, -INFINITY, INFINITY, -INFINITY,
	    c->logy };
	int		 points = 0;

	for (int i = 0; i < c->nlines; i++) {
		for (int k = 0; k < c->lines[i].n; k++) {
			double	 y = c->lines[i].y[k];

			if (!known(c->lines[i].x[k], y, c->logy))
				continue;
			y = c->logy ? log10(y) : y;
			a.x0 = fmin(a.x0, c->lines[i].x[k]);
			a.x1 = fmax(a.x1, c->lines[i].x[k]);
			a.y0 = fmin(a.y0, y);
			a.y1 = fmax(a.y1, y);
			points++;
		}
	}
	svg_open(f, "chart", c->title, H);
	if (points == 0) {
		fprintf(f, "<text class=\"none\" x=\"%d\" y=\"%d\">no data "
		    "for this chart</text></svg>\n", ML, H / 2);
		return;
	}
	if (!c->logy && a.y0 > 0 && a.y0 < (a.y1 - a.y0))
		a.y0 = 0;		/* from zero when it is near anyway */
	if (a.x1 <= a.x0)
		a.x1 = a.x0 + 1;
	if (a.y1 <= a.y0)
		a.y1 = a.y0 + (a.logy ? 1 : fabs(a.y0) > 0 ? fabs(a.y0) : 1);
	svg_axes(f, &a, c->xlabel, c->ylabel);
	for (int i = 0; i < c->nmarks; i++) {
		double	 x = c->marks[i].x;

		if (x < a.x0 || x > a.x1)
			continue;
		fprintf(f, "<g class=\"mark ev-%s\"><line x1=\"%.1f\" "
		    "x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-dasharray=\"2,3\"/>"
		    "<text class=\"marklbl\" x=\"%.1f\" y=\"%d\" fill=\"%s\">",
		    c->marks[i].kind, px(&a, x), px(&a, x), MT, H - MB,
		    report_kind_colour(c->marks[i].kind), px(&a, x) + 3,
		    MT + 10 + 10 * (i % 6), report_kind_colour(c->marks[i].kind));
		html_text(f, c->marks[i].label);
		fputs("</text></g>\n", f);
	}
	for (int i = 0; i < c->nlines; i++)
		svg_polylines(f, &a, &c->lines[i], i);
	for (int i = 0; i < c->nlines && c->nlines > 1; i++) {
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"3\" "
		    "fill=\"%s\"/><text class=\"key\" x=\"%d\" y=\"%d\">",
		    W - MR - 150, MT + 8 + 13 * i, report_colour(i),
		    W - MR - 136, MT + 12 + 13 * i);
		html_text(f, c->lines[i].name);
		fputs("</text>\n", f);
	}
	fputs("</svg>\n", f);
}

void
svg_bar_chart(FILE *f, const char *title, const char *ylabel,
    const struct chart_bar *b, int n)
{
	struct axes	 a = { 0, 1, 0, 0, false };
	double		 slot;

	for (int i = 0; i < n; i++)
		a.y1 = fmax(a.y1, b[i].v);
	svg_open(f, "chart bars", title, H);
	if (n == 0 || !(a.y1 > 0)) {
		fprintf(f, "<text class=\"none\" x=\"%d\" y=\"%d\">no data "
		    "for this chart</text></svg>\n", ML, H / 2);
		return;
	}
	a.y1 *= 1.1;
	slot = (double)(W - ML - MR) / n;
	svg_axes(f, &(struct axes){ 0, n, 0, a.y1, false }, NULL, ylabel);
	for (int i = 0; i < n; i++) {
		double	 x = ML + slot * i + slot * 0.15, y = py(&a, b[i].v);

		fprintf(f, "<rect class=\"bar%s\" x=\"%.1f\" y=\"%.1f\" "
		    "width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>",
		    b[i].ok ? "" : " refused", x, y, slot * 0.7,
		    H - MB - y, b[i].ok ? report_colour(0) : "#cccccc");
		html_text(f, b[i].note);
		fprintf(f, "</title></rect><text class=\"tick\" x=\"%.1f\" "
		    "y=\"%d\" text-anchor=\"middle\">", x + slot * 0.35,
		    H - MB + 28);
		html_text(f, b[i].label);
		fputs("</text>\n", f);
	}
	fputs("</svg>\n", f);
}

void
svg_stack_chart(FILE *f, const char *title, const char *unit,
    const char *const *rows, int n, const char *const *parts, int k,
    const double *v)
{
	double	 max = 0, row_h = 22;
	int	 h = MT + (int)(row_h * n) + 34;

	for (int r = 0; r < n; r++) {
		double	 sum = 0;

		for (int p = 0; p < k; p++)
			sum += v[r * k + p] > 0 ? v[r * k + p] : 0;
		max = fmax(max, sum);
	}
	svg_open(f, "chart stack", title, h);
	for (int r = 0; r < n && max > 0; r++) {
		double	 x = ML, y = MT + row_h * r, sum = 0;

		fprintf(f, "<text class=\"tick\" x=\"%d\" y=\"%.1f\" "
		    "text-anchor=\"end\">", ML - 6, y + 14);
		html_text(f, rows[r]);
		fputs("</text>\n", f);
		for (int p = 0; p < k; p++) {
			double	 part = v[r * k + p] > 0 ? v[r * k + p] : 0;
			double	 w = part / max * (W - ML - MR - 90);

			fprintf(f, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" "
			    "width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>",
			    x, y + 3, w, row_h - 6, report_colour(p));
			html_text(f, parts[p]);
			fprintf(f, " %.3g %s</title></rect>\n", part, unit);
			x += w;
			sum += part;
		}
		fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\">%.3g %s"
		    "</text>\n", x + 4, y + 14, sum, unit);
	}
	for (int p = 0; p < k; p++) {
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" "
		    "fill=\"%s\"/><text class=\"key\" x=\"%d\" y=\"%d\">",
		    ML + 130 * p, h - 16, report_colour(p), ML + 130 * p + 14,
		    h - 7);
		html_text(f, parts[p]);
		fputs("</text>\n", f);
	}
	fputs("</svg>\n", f);
}

/* Lanes of the timeline, by kind; what is not named goes in the last. */
static int
tl_lane(const char *kind)
{
	static const char *const lanes[][5] = {
		{ "queued", "placed", "started", "finished" },
		{ "paused", "resumed", "checkpoint", NULL },
		{ "migrated", "failover", "restarted", NULL },
	};

	for (int l = 0; l < 3; l++) {
		for (int i = 0; lanes[l][i] != NULL; i++) {
			if (strcmp(kind, lanes[l][i]) == 0)
				return l;
		}
	}
	return 3;
}

/* The marklbl font's width a character, in px (10px sans-serif, a little
 * over its mean, so labels keep apart). */
#define TL_CHAR_PX	6.0

/* The row (0 above the lane, 1 below) where a label at x fits after the
 * labels already there, or -1: none, or the row's last label says the
 * same kind and has not ended yet. */
static int
tl_row(const double *ends, const char *const *last, const char *kind,
    double x)
{
	for (int r = 0; r < 2; r++) {
		if (last[r] != NULL && strcmp(last[r], kind) == 0 &&
		    x < ends[r] + 4)
			return -1;
	}
	for (int r = 0; r < 2; r++) {
		if (x >= ends[r] + 4)
			return r;
	}
	return -1;
}

void
svg_timeline(FILE *f, const struct tl_event *ev, int n, double t0, double t1)
{
	static const char *const names[] = { "life", "control",
		"re-form", "failures" };
	struct axes	 a = { 0, t1 - t0 > 0 ? t1 - t0 : 1, 0, 1, false };
	int		 h = MT + 4 * 36 + 30;
	double		 ends[4][2] = { { 0 } };	/* where a row's label ends */
	const char	*last[4][2] = { { NULL } };

	svg_open(f, "timeline", "Events over time", h);
	for (int l = 0; l < 4; l++)
		fprintf(f, "<text class=\"tick\" x=\"%d\" y=\"%d\" "
		    "text-anchor=\"end\">%s</text><line class=\"grid\" "
		    "x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\"/>\n", ML - 6,
		    MT + 36 * l + 22, names[l], ML, W - MR, MT + 36 * l + 18,
		    MT + 36 * l + 18);
	for (double s = nice_step(a.x1), x = 0; x <= a.x1; x += s)
		fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" "
		    "text-anchor=\"middle\">%gs</text>\n", px(&a, x), h - 12, x);
	for (int i = 0; i < n; i++) {
		int	 lane = tl_lane(ev[i].kind), row;
		double	 x = px(&a, ev[i].t - t0);
		int	 y = MT + 36 * lane + 18;

		fprintf(f, "<g class=\"event ev-%s\"><circle cx=\"%.1f\" "
		    "cy=\"%d\" r=\"5\" fill=\"%s\"/>", ev[i].kind, x, y,
		    report_kind_colour(ev[i].kind));
		/* A label goes above or below its lane where it does not
		 * run into the one before it there, and the same kind
		 * again right after is not labelled twice; the event's
		 * title (its tooltip) says it either way. */
		if ((row = tl_row(ends[lane], last[lane], ev[i].kind, x)) >= 0) {
			fprintf(f, "<text class=\"marklbl\" x=\"%.1f\" "
			    "y=\"%d\">", x + 6, y - 7 + 14 * row);
			html_text(f, ev[i].kind);
			fputs("</text>", f);
			ends[lane][row] = x + 6 + TL_CHAR_PX * strlen(ev[i].kind);
			last[lane][row] = ev[i].kind;
		}
		fputs("<title>", f);
		html_text(f, ev[i].reason);
		fputs("</title></g>\n", f);
	}
	fputs("</svg>\n", f);
}
