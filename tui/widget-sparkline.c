/*
 * widget-sparkline.c: the newest values of a series, one column each,
 * as eighth-height blocks (or ASCII levels).  Unknown samples (stored
 * as negative numbers by the backend) leave a gap rather than a floor,
 * so a node whose counters cannot be read does not look idle.
 */
#include <math.h>

#include "tui/draw.h"
#include "tui/widget.h"

static void
spark_draw(WINDOW *w, struct rect r, const void *model)
{
	const struct spark_model *m = model;
	int	 n = m->s != NULL ? m->s->len : 0, from, col;
	double	 max = m->max;

	from = n > r.w ? n - r.w : 0;
	if (max <= 0) {
		for (int i = from; i < n; i++) {
			float v = series_get(m->s, i);

			if (v > max)
				max = v;
		}
	}
	draw_fill(w, r.y, r.x, r.w, EL_TEXT);
	col = r.x + r.w - (n - from);
	for (int i = from; i < n; i++, col++) {
		float	 v = series_get(m->s, i);
		int	 lvl;

		if (v < 0 || isnan(v)) {
			draw_text(w, r.y, col, 1, EL_TEXT_DIM, " ");
			continue;
		}
		lvl = max > 0 ? (int)(v / max * 7.0 + 0.5) : 0;
		if (lvl > 7)
			lvl = 7;
		draw_text(w, r.y, col, 1, m->e, glyphs->spark[lvl]);
	}
}

const struct widget widget_sparkline = {
	.name = "sparkline", .min_h = 1, .min_w = 1, .draw = spark_draw,
};
