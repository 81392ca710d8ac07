/*
 * widget-table.c: a table with a header row, a selected row, sorting by
 * any column (numbers by their value, text by strcmp) and a filter that
 * keeps rows whose text holds a substring.  The order is computed by
 * table_order(), which screens also call to map the selection back to
 * their item; scrolling follows the selection.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tui/draw.h"
#include "tui/widget.h"

#define TABLE_CELL	128

struct table_sortkey {
	int	 row;
	double	 num;
	char	 text[TABLE_CELL];
};

static int
table_cmp_num(const void *a, const void *b)
{
	const struct table_sortkey *x = a, *y = b;

	if (x->num != y->num)
		return x->num < y->num ? -1 : 1;
	return x->row - y->row;
}

static int
table_cmp_text(const void *a, const void *b)
{
	const struct table_sortkey *x = a, *y = b;
	int c = strcmp(x->text, y->text);

	return c != 0 ? c : x->row - y->row;
}

static bool
table_match(const struct table_model *m, int row)
{
	char	 buf[TABLE_CELL];
	enum elem e;

	if (m->filter == NULL || *m->filter == '\0')
		return true;
	for (int c = 0; c < m->ncols; c++) {
		buf[0] = '\0';
		m->cell(m->ctx, row, c, buf, sizeof buf, &e);
		if (strcasestr(buf, m->filter) != NULL)
			return true;
	}
	return false;
}

int
table_order(const struct table_model *m, int *order, int max)
{
	struct table_sortkey *k;
	int		 n = 0;
	enum elem	 e;
	bool		 sorted = m->sort_col >= 0 && m->sort_col < m->ncols;
	bool		 numeric = sorted && m->key != NULL &&
			    m->cols[m->sort_col].right;

	k = calloc(m->nrows > 0 ? (size_t)m->nrows : 1, sizeof *k);
	if (k == NULL)
		abort();
	for (int r = 0; r < m->nrows; r++) {
		if (!table_match(m, r))
			continue;
		k[n].row = r;
		if (sorted) {
			if (numeric)
				k[n].num = m->key(m->ctx, r, m->sort_col);
			else
				m->cell(m->ctx, r, m->sort_col, k[n].text,
				    sizeof k[n].text, &e);
		}
		n++;
	}
	if (sorted)
		qsort(k, (size_t)n, sizeof *k, numeric ? table_cmp_num :
		    table_cmp_text);
	for (int i = 0; i < n && i < max; i++)
		order[i] = k[m->sort_desc ? n - 1 - i : i].row;
	free(k);
	return n < max ? n : max;
}

/* The least the 0-width column (a name) is given before the columns to
 * the right of it go: a table on a narrow terminal keeps its names whole
 * and drops its last numbers, as top does. */
#define TABLE_FLEX_MIN	10

/*
 * Column widths: fixed ones as given, the 0-width one takes the rest; a
 * column that does not fit is 0 wide and not drawn, the last one first,
 * until the flexible one has TABLE_FLEX_MIN (or only it and the first
 * fixed one are left).
 */
static void
table_widths(const struct table_model *m, int total, int *wd)
{
	int	 fixed = 0, flex = -1, last = m->ncols - 1;

	for (int c = 0; c < m->ncols; c++) {
		wd[c] = m->cols[c].width;
		if (wd[c] == 0 && flex < 0)
			flex = c;
		fixed += wd[c] + 1;
	}
	if (flex < 0)
		return;
	for (; last > flex + 1 && total - fixed < TABLE_FLEX_MIN; last--) {
		fixed -= wd[last] + 1;
		wd[last] = 0;
	}
	wd[flex] = total - fixed > 4 ? total - fixed : 4;
}

static void
table_draw(WINDOW *w, struct rect r, const void *model)
{
	const struct table_model *m = model;
	int	 wd[16], *order, n, rows = r.h - 1, top = 0, x;
	char	 buf[TABLE_CELL], title[64];

	if (m->ncols > 16)
		return;
	table_widths(m, r.w, wd);
	order = calloc(m->nrows > 0 ? (size_t)m->nrows : 1, sizeof *order);
	if (order == NULL)
		abort();
	n = table_order(m, order, m->nrows);
	x = r.x;
	draw_fill(w, r.y, r.x, r.w, EL_TITLE);
	for (int c = 0; c < m->ncols && x < r.x + r.w; c++) {
		const char *dir = m->sort_desc ? glyphs->dn : glyphs->up;

		if (wd[c] == 0)
			continue;	/* no room for it */
		snprintf(title, sizeof title, "%s%s", m->cols[c].title,
		    c == m->sort_col ? dir : "");
		if (m->cols[c].right)
			draw_text_right(w, r.y, x, wd[c], EL_TITLE, title);
		else
			draw_text(w, r.y, x, wd[c], EL_TITLE, title);
		x += wd[c] + 1;
	}
	if (m->sel >= rows)
		top = m->sel - rows + 1;
	for (int i = 0; i < rows; i++) {
		int	 y = r.y + 1 + i, row;
		bool	 sel = top + i == m->sel && m->focused;

		draw_fill(w, y, r.x, r.w, sel ? EL_SELECTED : EL_TEXT);
		if (top + i >= n)
			continue;
		row = order[top + i];
		x = r.x;
		for (int c = 0; c < m->ncols && x < r.x + r.w; c++) {
			enum elem e = EL_TEXT;

			if (wd[c] == 0)
				continue;
			buf[0] = '\0';
			m->cell(m->ctx, row, c, buf, sizeof buf, &e);
			if (sel)
				e = EL_SELECTED;
			if (m->cols[c].right)
				draw_text_right(w, y, x, wd[c], e, buf);
			else
				draw_text(w, y, x, wd[c], e, buf);
			x += wd[c] + 1;
		}
	}
	if (n == 0 && rows > 0)
		draw_text(w, r.y + 1, r.x, r.w, EL_TEXT_DIM, m->filter != NULL &&
		    *m->filter != '\0' ? "no rows match the filter" : "none");
	free(order);
}

const struct widget widget_table = {
	.name = "table", .min_h = 2, .min_w = 10, .draw = table_draw,
};
