/*
 * screen-logs.c: the selected job's lines, for one rank or all: its
 * events, log lines and epoch results, newest at the bottom.  Up and
 * down scroll (the view follows new lines while at the bottom), left and
 * right change the rank, '/' keeps the lines holding a text and marks
 * it.  Every line was sanitized when it arrived.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "tui/console.h"
#include "tui/draw.h"

enum { P_LOG = 2 };

static bool
logs_match(const struct console *c, const struct logline *l, const char *job)
{
	const char *q = c->filter[SCR_LOGS];

	if (strcmp(l->job, job) != 0)
		return false;
	if (c->log_rank >= 0 && l->rank != c->log_rank)
		return false;
	return q[0] == '\0' || strcasestr(l->text, q) != NULL ||
	    strcasestr(l->kind, q) != NULL || strcasestr(l->node, q) != NULL;
}

/* Indices into the feed of the lines shown, oldest first. */
static int
logs_lines(struct console *c, const char *job, int *idx)
{
	int	 n = 0;

	for (int i = 0; i < c->feed.len; i++) {
		if (logs_match(c, feed_line(&c->feed, i), job))
			idx[n++] = i;
	}
	return n;
}

/* The text with the first match of the search marked. */
static void
logs_text(struct console *c, WINDOW *w, int y, int x, int wd, const char *s)
{
	const char *q = c->filter[SCR_LOGS], *m;
	char	 part[1024];

	if (q[0] == '\0' || (m = strcasestr(s, q)) == NULL) {
		draw_text(w, y, x, wd, EL_TEXT, s);
		return;
	}
	snprintf(part, sizeof part, "%.*s", (int)(m - s), s);
	x += draw_text(w, y, x, wd, EL_TEXT, part);
	snprintf(part, sizeof part, "%.*s", (int)strlen(q), m);
	x += draw_text(w, y, x, wd - draw_width(s) + draw_width(m), EL_MATCH, part);
	draw_text(w, y, x, wd, EL_TEXT, m + strlen(q));
}

static void
logs_draw(struct console *c)
{
	struct job_state *j = console_job(c);
	int		 H = console_height(), W = COLS, rows = H - 2, n, first;
	int		*idx;
	char		 title[256], who[16];
	WINDOW		*w;

	if ((w = console_panel(c, P_LOG, console_top(), 0, H, W, console_mix(
	    console_mix(c->ui_gen, c->feed.gen_events), c->feed.gen_jobs))) == NULL)
		return;
	if (j == NULL) {
		draw_box(w, "logs", false);
		draw_text(w, 1, 2, W - 4, EL_TEXT_DIM, "no job yet");
		return;
	}
	if (c->log_rank >= j->world)
		c->log_rank = -1;
	idx = calloc(FEED_LOG_MAX, sizeof *idx);
	if (idx == NULL)
		abort();
	n = logs_lines(c, j->name, idx);
	if (c->scroll[SCR_LOGS] > n - rows)
		c->scroll[SCR_LOGS] = n - rows > 0 ? n - rows : 0;
	first = n - rows - c->scroll[SCR_LOGS];
	first = first < 0 ? 0 : first;
	if (c->log_rank >= 0)
		snprintf(who, sizeof who, "rank %d", c->log_rank);
	else
		snprintf(who, sizeof who, "all ranks");
	snprintf(title, sizeof title, "log: %s, %s%s%s%s  %d line%s%s", j->name,
	    who, c->filter[SCR_LOGS][0] ? ", search '" : "",
	    c->filter[SCR_LOGS], c->filter[SCR_LOGS][0] ? "'" : "", n,
	    n == 1 ? "" : "s", c->scroll[SCR_LOGS] ? " (scrolled)" : "");
	draw_box(w, title, false);
	for (int i = 0; i < rows && first + i < n; i++) {
		const struct logline *l = feed_line(&c->feed, idx[first + i]);
		char	 t[16];
		time_t	 s = (time_t)l->t;
		int	 x = 1;

		strftime(t, sizeof t, "%H:%M:%S", localtime(&s));
		x += draw_textf(w, 1 + i, x, W - 2, EL_TEXT_DIM, "%s ", t);
		if (l->rank >= 0)
			x += draw_textf(w, 1 + i, x, W - 1 - x, EL_TEXT_DIM,
			    "r%-3d ", l->rank);
		else
			x += draw_text(w, 1 + i, x, W - 1 - x, EL_TEXT_DIM,
			    "     ");
		x += draw_textf(w, 1 + i, x, W - 1 - x, feed_line_elem(l),
		    "%-10s ", l->kind);
		logs_text(c, w, 1 + i, x, W - 1 - x, l->text);
	}
	if (n == 0)
		draw_text(w, 1, 2, W - 4, EL_TEXT_DIM, c->filter[SCR_LOGS][0] ?
		    "no line matches the search" : "no lines yet");
	free(idx);
}

static int
logs_move(struct console *c, int dy, int dx)
{
	struct job_state *j = console_job(c);

	if (j == NULL)
		return ACT_NONE;
	if (dx != 0) {
		c->log_rank += dx;
		if (c->log_rank < -1)
			c->log_rank = j->world - 1;
		if (c->log_rank >= j->world)
			c->log_rank = -1;
		c->scroll[SCR_LOGS] = 0;
		return ACT_REDRAW;
	}
	c->scroll[SCR_LOGS] -= dy;	/* up is older */
	if (c->scroll[SCR_LOGS] < 0)
		c->scroll[SCR_LOGS] = 0;
	return ACT_REDRAW;
}

const struct screen screen_logs = {
	.name = "logs",
	.about = "a job's events and log lines, per rank, searchable",
	.filter_what = "search the log",
	.draw = logs_draw,
	.nav = logs_move,
};
