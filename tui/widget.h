/*
 * widget.h: the console's widgets.  Each lives in tui/widget-NAME.c and
 * exports one const struct widget; widget_list[] in widget.c names them
 * all and widget_draw() is the one way to draw one.  A widget draws its
 * model into a rectangle of a window and keeps no state: selection,
 * sort and filter live in the model the screen fills.
 */
#ifndef HUNTER_WIDGET_H
#define HUNTER_WIDGET_H

#include <stdbool.h>
#include <stddef.h>

#include <curses.h>

#include "backend/core/backend.h"
#include "tui/theme.h"

struct rect {
	int	 y, x, h, w;
};

struct widget {
	const char	*name;
	int		 min_h, min_w;	/* smaller rectangles draw nothing */
	void		(*draw)(WINDOW *, struct rect, const void *model);
};

enum widget_kind { W_BAR, W_SPARKLINE, W_CHART, W_TABLE, W_HEATMAP,
	W_STATUSBAR, W_COUNT };

extern const struct widget widget_bar, widget_sparkline, widget_chart,
	widget_table, widget_heatmap, widget_statusbar;
extern const struct widget *const widget_list[W_COUNT];

void	widget_draw(enum widget_kind, WINDOW *, struct rect, const void *model);

/* A horizontal bar: "CPU ████▌    42%", coloured low/mid/high by the
 * fraction value/max; unknown draws a dash. */
struct bar_model {
	const char	*label;		/* drawn in label_w columns */
	int		 label_w;
	double		 value, max;
	bool		 valid;
	const char	*text;		/* right of the bar, e.g. "42%" */
};

/* The newest of n values (get(ctx, 0) the oldest), one column each, or
 * with pool all of them, each column the largest of its share; values
 * below 0 are unknown and draw as a gap. */
struct spark_model {
	float		(*get)(const void *ctx, int i);
	const void	*ctx;
	int		 n;
	double		 max;		/* 0 = the largest value shown */
	enum elem	 e;
	bool		 pool;
};

/* A line chart of n values (braille dots, or '*' in ASCII) with its
 * range on the left. */
struct chart_model {
	float		(*get)(const void *ctx, int i);
	const void	*ctx;
	int		 n;
	enum elem	 e;
	const char	*fmt;		/* axis labels, "%.3f" */
	const char	*empty;		/* text while n == 0 */
};

struct table_col {
	const char	*title;
	int		 width;		/* columns; 0 = what is left */
	bool		 right;		/* a number: aligned right, key() sorts */
};

/* Rows come through callbacks; sort_col < 0 keeps the model's order,
 * the filter keeps rows whose text (any column) holds it. */
struct table_model {
	const struct table_col *cols;
	int		 ncols, nrows;
	void		(*cell)(void *ctx, int row, int col, char *buf,
			    size_t len, enum elem *e);
	double		(*key)(void *ctx, int row, int col);	/* NULL: text */
	void		*ctx;
	int		 sort_col;
	bool		 sort_desc;
	const char	*filter;
	int		 sel;		/* position in the shown order */
	bool		 focused;
};

/* The rows shown, in order (at most max); returns how many. */
int	table_order(const struct table_model *, int *order, int max);

struct heat_cell {
	int		 group;		/* index into groups */
	int		 level;		/* 0..3, -1 down, -2 unknown */
	bool		 spare;
	const char	*label;		/* node name */
	const char	*value;		/* "42%" */
};

/* Cells in rows by group (rack), labelled when they all fit, else one
 * glyph a cell. */
struct heatmap_model {
	const char *const *groups;
	int		 ngroups, ncells;
	void		(*cell)(void *ctx, int i, struct heat_cell *);
	void		*ctx;
	int		 sel;		/* -1: none */
	bool		 focused;
};

struct status_hint {
	const char	*key, *label;
};

struct statusbar_model {
	const char	*screen;
	const struct status_hint *hints;
	int		 nhints;
	const char	*msg;		/* NULL: show the hints */
	enum elem	 msg_elem;
};

#endif
