/*
 * widget.c: the widget table and the one entry point that draws a
 * widget, after checking its rectangle fits the window and its minimum.
 */
#include "tui/widget.h"

const struct widget *const widget_list[W_COUNT] = {
	[W_BAR] = &widget_bar,
	[W_SPARKLINE] = &widget_sparkline,
	[W_CHART] = &widget_chart,
	[W_TABLE] = &widget_table,
	[W_HEATMAP] = &widget_heatmap,
	[W_STATUSBAR] = &widget_statusbar,
};

void
widget_draw(enum widget_kind k, WINDOW *win, struct rect r, const void *model)
{
	const struct widget *wd = widget_list[k];

	if (win == NULL || r.y < 0 || r.x < 0)
		return;
	if (r.y + r.h > getmaxy(win))
		r.h = getmaxy(win) - r.y;
	if (r.x + r.w > getmaxx(win))
		r.w = getmaxx(win) - r.x;
	if (r.h < wd->min_h || r.w < wd->min_w)
		return;
	wd->draw(win, r, model);
}
