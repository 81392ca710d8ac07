/*
 * widget-heatmap.c: the cluster at a glance, one row per rack.  When
 * every node's name and value fit, each cell reads "local0 42%";
 * otherwise (hundreds of nodes) each node is one cell whose glyph and
 * colour give its level, so the shape still shows without colour.  A
 * node that is down draws a cross; one nobody measured, a dash.
 */
#include <stdio.h>
#include <string.h>

#include "tui/draw.h"
#include "tui/widget.h"

static enum elem
heat_elem(const struct heat_cell *c)
{
	if (c->level == -1)
		return EL_NODE_DOWN;
	if (c->level == -2)
		return EL_TEXT_DIM;
	if (c->spare && c->level == 0)
		return EL_NODE_SPARE;
	return c->level == 0 ? EL_NODE_IDLE : c->level == 3 ? EL_NODE_HOT :
	    EL_NODE_BUSY;
}

static const char *
heat_glyph(const struct heat_cell *c)
{
	if (c->level == -1)
		return glyphs->down;
	if (c->level == -2)
		return glyphs->unknown;
	return glyphs->heat[c->level < 0 ? 0 : c->level > 3 ? 3 : c->level];
}

static int
heat_label_w(const struct heatmap_model *m)
{
	int	 gw = 0;

	for (int g = 0; g < m->ngroups; g++) {
		int l = draw_width(m->groups[g]);

		gw = l > gw ? l : gw;
	}
	return gw > 8 ? 9 : gw + 1;
}

/* Whether every group's cells fit on one line with their labels. */
static bool
heat_fits_labels(const struct heatmap_model *m, int avail, int rows)
{
	int	 used[64] = { 0 };
	struct heat_cell c;

	if (m->ngroups > rows || m->ngroups > 64)
		return false;
	for (int i = 0; i < m->ncells; i++) {
		m->cell(m->ctx, i, &c);
		if (c.group < 0 || c.group >= 64)
			return false;
		used[c.group] += draw_width(c.label) + draw_width(c.value) + 3;
		if (used[c.group] > avail)
			return false;
	}
	return true;
}

static void
heat_draw(WINDOW *w, struct rect r, const void *model)
{
	const struct heatmap_model *m = model;
	int	 gw = heat_label_w(m), avail = r.w - gw, line = 0;
	bool	 labels = heat_fits_labels(m, avail, r.h);
	struct heat_cell c;
	char	 buf[160];

	for (int y = 0; y < r.h; y++)
		draw_fill(w, r.y + y, r.x, r.w, EL_TEXT);
	for (int g = 0; g < m->ngroups && line < r.h; g++) {
		int	 x = 0, shown = 0, total = 0;

		draw_text(w, r.y + line, r.x, gw - 1, EL_TEXT_DIM, m->groups[g]);
		for (int i = 0; i < m->ncells; i++) {
			m->cell(m->ctx, i, &c);
			if (c.group != g)
				continue;
			total++;
			if (line >= r.h)
				continue;
			enum elem e = i == m->sel && m->focused ? EL_SELECTED :
			    heat_elem(&c);
			if (labels) {
				snprintf(buf, sizeof buf, " %s %s ", c.label,
				    c.level == -1 ? glyphs->down : c.value);
				x += draw_text(w, r.y + line, r.x + gw + x,
				    avail - x, e, buf) + 1;
			} else {
				if (x >= avail) {
					x = 0;
					if (++line >= r.h)
						continue;
				}
				draw_text(w, r.y + line, r.x + gw + x, 1, e,
				    heat_glyph(&c));
				x++;
			}
			shown++;
		}
		if (shown < total && r.w > 12) {
			snprintf(buf, sizeof buf, " +%d", total - shown);
			draw_text_right(w, r.y + r.h - 1, r.x, r.w,
			    EL_TEXT_DIM, buf);
		}
		line++;
	}
}

const struct widget widget_heatmap = {
	.name = "heatmap", .min_h = 1, .min_w = 10, .draw = heat_draw,
};
