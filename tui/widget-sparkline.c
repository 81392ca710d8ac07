/*
 * widget-sparkline.c: the newest values of a history, one column each,
 * or all of them pooled (each column the largest of its share, so a
 * spike of one second still shows), as eighth-height blocks (or ASCII
 * levels).  Unknown samples (negative numbers) leave a gap rather than a
 * floor, so a node whose counters cannot be read does not look idle.
 */
#include <math.h>

#include "tui/draw.h"
#include "tui/widget.h"

/* Column c of w: its value, < 0 when every sample in it is unknown. */
static float
spark_col(const struct spark_model *m, int c, int w, int from)
{
	int	 a, b;
	float	 best = -1;

	if (!m->pool || m->n <= w)
		return m->get(m->ctx, from + c);
	/* Columns cover the values evenly, the newest on the right. */
	a = (int)((long)c * m->n / w);
	b = (int)((long)(c + 1) * m->n / w);
	for (int i = a; i < b; i++) {
		float	 v = m->get(m->ctx, i);

		if (!isnan(v) && v > best)
			best = v;
	}
	return best;
}

static void
spark_draw(WINDOW *w, struct rect r, const void *model)
{
	const struct spark_model *m = model;
	int	 n = m->get != NULL ? m->n : 0, cols, from, x0;
	double	 max = m->max;

	cols = m->pool || n <= r.w ? (n < r.w ? n : r.w) : r.w;
	from = !m->pool && n > r.w ? n - r.w : 0;
	if (max <= 0) {
		for (int c = 0; c < cols; c++) {
			float v = spark_col(m, c, cols, from);

			if (v > max)
				max = v;
		}
	}
	draw_fill(w, r.y, r.x, r.w, EL_TEXT);
	x0 = r.x + r.w - cols;
	for (int c = 0; c < cols; c++) {
		float	 v = spark_col(m, c, cols, from);
		int	 lvl;

		if (v < 0 || isnan(v)) {
			draw_text(w, r.y, x0 + c, 1, EL_TEXT_DIM, " ");
			continue;
		}
		lvl = max > 0 ? (int)(v / max * 7.0 + 0.5) : 0;
		if (lvl > 7)
			lvl = 7;
		draw_text(w, r.y, x0 + c, 1, m->e, glyphs->spark[lvl]);
	}
}

const struct widget widget_sparkline = {
	.name = "sparkline", .min_h = 1, .min_w = 1, .draw = spark_draw,
};
