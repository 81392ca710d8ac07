/*
 * widget-bar.c: a one-line bar, "CPU ████▌     42%".  The fill is drawn
 * in eighths of a cell (Unicode) or whole cells (ASCII) and coloured by
 * how full it is: bar_low below 50%, bar_mid below 80%, bar_high above.
 * An unknown value draws its label and a dash, never an empty bar that
 * would read as 0.
 */
#include <stdio.h>

#include "tui/draw.h"
#include "tui/widget.h"

static enum elem
bar_elem(double frac)
{
	return frac < 0.5 ? EL_BAR_LOW : frac < 0.8 ? EL_BAR_MID : EL_BAR_HIGH;
}

static void
bar_draw(WINDOW *w, struct rect r, const void *model)
{
	const struct bar_model *m = model;
	int	 tw = m->text != NULL ? draw_width(m->text) : 0;
	int	 bx = r.x + m->label_w, bw = r.w - m->label_w - tw - 1;
	int	 cells8, full, part;
	double	 frac;
	enum elem e;

	if (m->label != NULL)
		draw_text(w, r.y, r.x, m->label_w - 1, EL_TEXT_DIM, m->label);
	if (!m->valid || m->max <= 0) {
		draw_text(w, r.y, bx, r.w - m->label_w, EL_TEXT_DIM,
		    glyphs->unknown);
		return;
	}
	if (bw < 2) {
		if (m->text != NULL)
			draw_text(w, r.y, bx, r.w - m->label_w, EL_TEXT, m->text);
		return;
	}
	frac = m->value / m->max;
	if (frac < 0)
		frac = 0;
	if (frac > 1)
		frac = 1;
	e = bar_elem(frac);
	cells8 = (int)(frac * bw * 8 + 0.5);
	full = cells8 / 8;
	part = glyphs->utf8 ? cells8 % 8 : 0;
	if (!glyphs->utf8 && cells8 % 8 >= 4 && full < bw)
		full++;
	for (int i = 0; i < full; i++)
		draw_text(w, r.y, bx + i, 1, e, glyphs->eighths[8]);
	if (part > 0 && full < bw)
		draw_text(w, r.y, bx + full, 1, e, glyphs->eighths[part]);
	for (int i = full + (part > 0); i < bw; i++)
		draw_text(w, r.y, bx + i, 1, EL_TEXT_DIM,
		    glyphs->utf8 ? " " : ".");
	if (m->text != NULL)
		draw_text_right(w, r.y, bx + bw, tw + 1, EL_TEXT, m->text);
}

const struct widget widget_bar = {
	.name = "bar", .min_h = 1, .min_w = 6, .draw = bar_draw,
};
