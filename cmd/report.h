/*
 * report.h: the parts of `hunter report`: what cmd-report.c reads (the
 * saved series and the journal) into struct report, the page made of it
 * (report-page.c, its text in report-facts.c, what moved on its nodes in
 * report-moved.c), and the charts it draws as inline SVG (report-svg.c),
 * written straight into the page, so the file needs nothing else to be
 * read: no script, no font, no network.
 */
#ifndef HUNTER_REPORT_H
#define HUNTER_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "backend/proto/metrics.h"

/* The columns kept of each rank's metrics frames, by table row (the
 * order of the C_ names), and the wall clock they came at. */
#define NCOLS	11
extern const enum rank_metric report_cols[NCOLS];
enum { C_STEP, C_LOSS, C_SPS, C_STEP_MS, C_COMPUTE, C_COMM, C_WAIT, C_SENT,
	C_DENSE, C_TOKENS, C_GRAD, C_TS, C_ALL };

struct rank_data {
	double		*v[C_ALL];	/* NAN where a frame did not say */
	int		 n, cap;
};

/* What the report is made of (cmd-report.c reads it). */
struct report {
	const char	*job;
	double		 t0, t1;	/* the series' start; the job's end */
	bool		 ended;
	json_t		*header, *summary, *autotune, *epochs, *evals, *events,
			*jobs;
	json_t		*nodes;		/* the saved node lines, in order */
	char		 end_state[32];
	struct rank_data *ranks;
	int		 nranks;
	const char	*series_path, *state_dir;
};

/* The page (report-page.c). */
void	report_page(FILE *, const struct report *);
/* Its text (report-facts.c): the head of facts, the autotune trace, the
 * epochs, the events' timeline and table. */
void	report_facts(FILE *, const struct report *);
void	report_autotune(FILE *, const struct report *);
void	report_epochs(FILE *, const struct report *);
void	report_events(FILE *, const struct report *);
/* What moved on the nodes the job ran on (report-moved.c). */
void	report_moved(FILE *, const struct report *);
/* Whether the job is a language model: its frames say tokens/s or a
 * validation loss. */
bool	report_tokens(const struct report *);
/* Wall clock t as local time. */
void	report_wall(double t, char *buf, size_t len);

/* One line of a chart; a step back in x (a resume after a re-formation)
 * starts a new segment.  dots: each point drawn too (a few, far apart). */
struct chart_line {
	const char	*name;
	const double	*x, *y;
	int		 n;
	bool		 dashed, dots;
};

/* A vertical marker at x: an event, by kind. */
struct chart_mark {
	double		 x;
	const char	*kind;
	const char	*label;
};

struct chart {
	const char	*title, *xlabel, *ylabel;
	const struct chart_line *lines;
	int		 nlines;
	const struct chart_mark *marks;
	int		 nmarks;
	bool		 logy;		/* a log scale: bytes dense and sent */
};

/* A bar of a bar chart; a bar that is not ok is drawn as refused. */
struct chart_bar {
	char		 label[32];
	double		 v;
	bool		 ok;
	char		 note[64];
};

/* An event of the timeline. */
struct tl_event {
	double		 t;		/* wall clock seconds */
	const char	*kind, *node, *reason;
	int		 rank;		/* -1: the job's or a node's */
};

/* Text with &, <, >, " and ' as entities. */
void	html_text(FILE *, const char *);
void	svg_line_chart(FILE *, const struct chart *);
void	svg_bar_chart(FILE *, const char *title, const char *ylabel,
	    const struct chart_bar *, int n);
/* Stacked horizontal bars: n rows of k parts (row-major), named. */
void	svg_stack_chart(FILE *, const char *title, const char *unit,
	    const char *const *rows, int n, const char *const *parts, int k,
	    const double *v);
void	svg_timeline(FILE *, const struct tl_event *, int n, double t0,
	    double t1);
/* The colour of series i, and of an event kind. */
const char *report_colour(int i);
const char *report_kind_colour(const char *kind);

#endif
