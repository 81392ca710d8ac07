/*
 * widget-statusbar.c: the bottom line: the screen's name, then either a
 * message (an error, a command's outcome) or the key hints of the
 * screen, drawn from the key table so they never disagree with it.
 */
#include <stdio.h>

#include "tui/draw.h"
#include "tui/widget.h"

static void
status_draw(WINDOW *w, struct rect r, const void *model)
{
	const struct statusbar_model *m = model;
	int	 x = r.x, end = r.x + r.w;
	char	 buf[64];

	draw_fill(w, r.y, r.x, r.w, EL_STATUS);
	snprintf(buf, sizeof buf, " %s ", m->screen);
	x += draw_text(w, r.y, x, end - x, EL_SELECTED, buf) + 1;
	if (m->msg != NULL && *m->msg != '\0') {
		draw_text(w, r.y, x, end - x, m->msg_elem, m->msg);
		return;
	}
	for (int i = 0; i < m->nhints && x < end; i++) {
		x += draw_text(w, r.y, x, end - x, EL_STATUS_KEY, m->hints[i].key);
		x += draw_text(w, r.y, x, end - x, EL_STATUS, " ");
		x += draw_text(w, r.y, x, end - x, EL_STATUS, m->hints[i].label);
		x += draw_text(w, r.y, x, end - x, EL_STATUS, "  ");
	}
}

const struct widget widget_statusbar = {
	.name = "statusbar", .min_h = 1, .min_w = 10, .draw = status_draw,
};
