/*
 * screen-overview.c: the first screen.  Under the header, the cluster as
 * a heat map (one row per rack) of CPU use or another metric of heat.c,
 * the job table, and the event
 * pane with the newest events and the console's own messages, newest
 * first.  Up and
 * down pick a job, left and right a node; Enter opens whichever was
 * picked last.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tui/console.h"
#include "tui/draw.h"

enum { P_HEAT = 2, P_JOBS, P_EVENTS };

#define RACKS_MAX	64

struct ov_ctx {
	struct console	*c;
	const char	*racks[RACKS_MAX];
	int		 nracks;
	char		 value[16];
	double		 max;		/* the heat metric's (heat.c) */
};

static int
ov_rack(struct ov_ctx *x, const char *rack)
{
	for (int i = 0; i < x->nracks; i++) {
		if (strcmp(x->racks[i], rack) == 0)
			return i;
	}
	if (x->nracks == RACKS_MAX)
		return RACKS_MAX - 1;
	x->racks[x->nracks] = rack;
	return x->nracks++;
}

static void
ov_cell(void *ctx, int i, struct heat_cell *hc)
{
	struct ov_ctx	*x = ctx;
	struct node_view *nv = backend_node_at(x->c->b, i);

	hc->group = ov_rack(x, nv->spec->rack);
	hc->spare = nv->spec->spare;
	hc->label = nv->spec->name;
	heat_cell_of(x->c->heat, nv, x->max, hc, x->value, sizeof x->value);
}

static const struct table_col ov_cols[] = {
	{ "job", 0, false }, { "state", 9, false }, { "ranks", 7, true },
	{ "epoch", 6, true }, { "step", 7, true }, { "loss", 7, true },
	{ "samples/s", 9, true }, { "acc", 6, true }, { "goodput", 7, true },
};
#define OV_NCOLS ((int)(sizeof ov_cols / sizeof ov_cols[0]))

static void
ov_job_cell(void *ctx, int row, int col, char *buf, size_t len, enum elem *e)
{
	struct console	*c = ctx;
	struct job_state *j = backend_job_at(c->b, row);
	struct job_info	 ji;

	job_info(c, j, &ji);
	switch (col) {
	case 0: snprintf(buf, len, "%s", j->name); break;
	case 1: snprintf(buf, len, "%s", ji.state); *e = ji.state_e; break;
	case 2:		/* an elastic job's range after its count */
		if (j->spec.resources.elastic)
			snprintf(buf, len, "%d/%d-%d", j->world,
			    j->spec.resources.min_ranks, j->spec.resources.max_ranks);
		else
			snprintf(buf, len, "%d", j->world);
		break;
	case 3:
		if (ji.has_acc || ji.has_step)
			snprintf(buf, len, "%d/%d", ji.epoch, ji.epochs);
		else
			fmt_num(buf, len, false, "", 0);
		break;
	case 4: fmt_num(buf, len, ji.has_step, "%.0f", (double)ji.step); break;
	case 5: fmt_num(buf, len, ji.has_loss, "%.4f", ji.loss); break;
	case 6: fmt_si(buf, len, ji.has_samples, ji.samples_per_s); break;
	case 7: fmt_num(buf, len, ji.has_acc, "%.4f", ji.acc); break;
	case 8: fmt_si(buf, len, j->gp.known && !job_done(j), j->gp.goodput);
		break;
	}
}

static double
ov_job_key(void *ctx, int row, int col)
{
	struct console	*c = ctx;
	struct job_info	 ji;

	job_info(c, backend_job_at(c->b, row), &ji);
	switch (col) {
	case 2: return backend_job_at(c->b, row)->world;
	case 3: return ji.epoch;
	case 4: return ji.has_step ? ji.step : -1;
	case 5: return ji.has_loss ? ji.loss : INFINITY;
	case 6: return ji.has_samples ? ji.samples_per_s : -1;
	case 7: return ji.has_acc ? ji.acc : -1;
	case 8: return backend_job_at(c->b, row)->gp.known ?
	    backend_job_at(c->b, row)->gp.goodput : -1;
	}
	return 0;
}

static void
ov_table(struct console *c, struct table_model *m)
{
	*m = (struct table_model){ .cols = ov_cols, .ncols = OV_NCOLS,
	    .nrows = backend_njobs(c->b), .cell = ov_job_cell,
	    .key = ov_job_key, .ctx = c, .sort_col = c->sort_col[SCR_OVERVIEW],
	    .sort_desc = c->sort_desc[SCR_OVERVIEW],
	    .filter = c->filter[SCR_OVERVIEW], .focused = !c->focus_nodes };
}

/* The table position of the selected job, which follows c->job. */
static int
ov_sync(struct console *c, struct table_model *m, int *order, int max, int *n)
{
	struct job_state *sel = console_job(c);

	*n = table_order(m, order, max);
	for (int i = 0; i < *n; i++) {
		if (backend_job_at(c->b, order[i]) == sel)
			return i;
	}
	return 0;
}

static void
ov_events(struct console *c, WINDOW *w, int h, int wd)
{
	int	 rows = h - 2, shown = 0;

	draw_box(w, "events", false);
	for (int i = c->feed.len - 1; i >= 0 && shown < rows; i--) {
		const struct logline *l = feed_line(&c->feed, i);
		char	 t[16], who[160];
		time_t	 s = (time_t)l->t;
		int	 x = 1, y = 1 + shown;

		if (strcmp(l->kind, "log") == 0 || strcmp(l->kind, "epoch") == 0)
			continue;
		strftime(t, sizeof t, "%H:%M:%S", localtime(&s));
		x += draw_textf(w, y, x, wd - 2, EL_TEXT_DIM, "%s ", t);
		x += draw_textf(w, y, x, wd - 1 - x, feed_line_elem(l),
		    "%-10s ", l->kind);
		who[0] = '\0';
		if (l->job[0] != '\0')
			snprintf(who, sizeof who, "%s%s", l->job, l->rank >= 0 ||
			    l->node[0] ? " " : "");
		if (l->rank >= 0)
			snprintf(who + strlen(who), sizeof who - strlen(who),
			    "r%d%s", l->rank, l->node[0] ? " " : "");
		if (l->node[0] != '\0')
			snprintf(who + strlen(who), sizeof who - strlen(who),
			    "%s", l->node);
		if (who[0] != '\0')
			x += draw_textf(w, y, x, wd - 1 - x, EL_TEXT_DIM,
			    "%s: ", who);
		draw_text(w, y, x, wd - 1 - x, EL_TEXT, l->text);
		shown++;
	}
	if (shown == 0)
		draw_text(w, 1, 2, wd - 4, EL_TEXT_DIM, "no events yet");
}

/* Rows the heat map needs at this width: glyph mode, the worst case. */
static int
ov_heat_rows(struct console *c, int avail)
{
	struct ov_ctx	 x = { .c = c };
	int		 count[RACKS_MAX] = { 0 }, rows = 0;

	for (int i = 0; i < backend_nnodes(c->b); i++)
		count[ov_rack(&x, backend_node_at(c->b, i)->spec->rack)]++;
	for (int g = 0; g < x.nracks; g++)
		rows += avail > 0 ? (count[g] + avail - 1) / avail : 1;
	return rows > 0 ? rows : 1;
}

static void
ov_draw(struct console *c)
{
	struct ov_ctx	 x = { .c = c };
	struct table_model tm;
	int		 H = console_height(), top = console_top(), W = COLS;
	int		 hh, jh, order[1024], n, sel;
	uint64_t	 ui = console_mix(c->ui_gen, 0), up = 0;
	WINDOW		*w;

	hh = ov_heat_rows(c, W - 2 - 9) + 2;
	if (hh > H / 3)
		hh = H / 3;
	jh = backend_njobs(c->b) + 3;
	jh = jh < 5 ? 5 : jh > H / 3 ? H / 3 : jh;
	ov_table(c, &tm);
	sel = ov_sync(c, &tm, order, 1024, &n);
	c->sel[SCR_OVERVIEW] = tm.sel = sel;
	for (int i = 0; i < backend_nnodes(c->b); i++)
		up = console_mix(up, backend_node_at(c->b, i)->up);

	if ((w = console_panel(c, P_HEAT, top, 0, hh, W,
	    console_mix(console_mix(ui, up), c->feed.gen_nodes))) != NULL) {
		struct heatmap_model hm = { .ncells = backend_nnodes(c->b),
		    .cell = ov_cell, .ctx = &x, .sel = c->node,
		    .focused = c->focus_nodes };

		char	 title[64];

		for (int i = 0; i < hm.ncells; i++)	/* racks in order */
			ov_rack(&x, backend_node_at(c->b, i)->spec->rack);
		hm.groups = x.racks;
		hm.ngroups = x.nracks;
		x.max = heat_max(c->heat, c);
		snprintf(title, sizeof title, "nodes: %s (v: next)",
		    heat_name(c->heat));
		draw_box(w, title, c->focus_nodes);
		widget_draw(W_HEATMAP, w, (struct rect){ 1, 1, hh - 2, W - 2 },
		    &hm);
	}
	if ((w = console_panel(c, P_JOBS, top + hh, 0, jh, W,
	    console_mix(ui, c->feed.gen_jobs + (uint64_t)n))) != NULL) {
		draw_box(w, c->filter[SCR_OVERVIEW][0] ? "jobs (filtered)" :
		    "jobs", !c->focus_nodes);
		widget_draw(W_TABLE, w, (struct rect){ 1, 1, jh - 2, W - 2 }, &tm);
	}
	if ((w = console_panel(c, P_EVENTS, top + hh + jh, 0, H - hh - jh, W,
	    console_mix(ui, c->feed.gen_events))) != NULL)
		ov_events(c, w, H - hh - jh, W);
}

static int
ov_move(struct console *c, int dy, int dx)
{
	struct table_model tm;
	int		 order[1024], n, sel, nn = backend_nnodes(c->b);

	if (dx != 0 && nn > 0) {
		c->focus_nodes = true;
		c->node = (c->node + dx + nn) % nn;
		return ACT_REDRAW;
	}
	c->focus_nodes = false;
	ov_table(c, &tm);
	sel = ov_sync(c, &tm, order, 1024, &n) + dy;
	if (n == 0)
		return ACT_REDRAW;
	sel = sel < 0 ? 0 : sel >= n ? n - 1 : sel;
	snprintf(c->job, sizeof c->job, "%s", backend_job_at(c->b,
	    order[sel])->name);
	return ACT_REDRAW;
}

static int
ov_enter(struct console *c)
{
	if (c->focus_nodes) {
		c->scr = SCR_NODES;
	} else if (console_job(c) != NULL)
		c->scr = SCR_JOB;
	return ACT_LAYOUT;
}

/* Cycle the sort: none, then each column (numbers largest first). */
static int
ov_sort(struct console *c)
{
	int	*col = &c->sort_col[SCR_OVERVIEW];

	*col = *col + 1 >= OV_NCOLS ? -1 : *col + 1;
	c->sort_desc[SCR_OVERVIEW] = *col >= 0 && ov_cols[*col].right;
	c->focus_nodes = false;
	return ACT_REDRAW;
}

const struct screen screen_overview = {
	.name = "overview",
	.about = "cluster heat map, jobs, events",
	.filter_what = "filter jobs (any column)",
	.draw = ov_draw,
	.nav = ov_move,
	.enter = ov_enter,
	.sort = ov_sort,
};
