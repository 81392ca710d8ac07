/*
 * widget-chart.c: a line chart.  With a UTF-8 locale each cell holds a
 * 2x4 braille dot matrix, so a 40x6 rectangle plots 80 points on 24
 * levels; otherwise one '*' a cell.  The series is stretched or thinned
 * to the width (interpolated between points), consecutive points are
 * joined by a vertical run so the line has no holes, and the range is
 * printed on the left.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/draw.h"
#include "tui/widget.h"

#define CHART_LABEL_W	8

static const unsigned char chart_bit[2][4] = {
	{ 0x01, 0x02, 0x04, 0x40 }, { 0x08, 0x10, 0x20, 0x80 },
};

static void
chart_range(const struct chart_model *m, double *lo, double *hi)
{
	*lo = INFINITY;
	*hi = -INFINITY;
	for (int i = 0; i < m->n; i++) {
		double v = m->get(m->ctx, i);

		if (isfinite(v)) {
			*lo = v < *lo ? v : *lo;
			*hi = v > *hi ? v : *hi;
		}
	}
	if (!isfinite(*lo)) {
		*lo = 0;
		*hi = 1;
	} else if (*hi - *lo < 1e-9) {
		*hi += fabs(*hi) * 0.05 + 1e-3;
		*lo -= fabs(*lo) * 0.05 + 1e-3;
	}
}

/* Dot row (0 = top) of value v on a grid rows tall. */
static int
chart_row(double v, double lo, double hi, int rows)
{
	int r = (int)lrint((hi - v) / (hi - lo) * (rows - 1));

	return r < 0 ? 0 : r >= rows ? rows - 1 : r;
}

static void
chart_draw(WINDOW *w, struct rect r, const void *model)
{
	const struct chart_model *m = model;
	int	 pw = r.w - CHART_LABEL_W, ph = r.h, sx = glyphs->utf8 ? 2 : 1;
	int	 sy = glyphs->utf8 ? 4 : 1, X = pw * sx, Y = ph * sy, prev = -1;
	unsigned char *grid;
	double	 lo, hi;
	char	 lab[32], *row;

	for (int y = 0; y < r.h; y++)
		draw_fill(w, r.y + y, r.x, r.w, EL_TEXT);
	if (m->n == 0) {
		draw_text(w, r.y + r.h / 2, r.x + 1, r.w - 1, EL_TEXT_DIM,
		    m->empty != NULL ? m->empty : "no data yet");
		return;
	}
	chart_range(m, &lo, &hi);
	snprintf(lab, sizeof lab, m->fmt, hi);
	draw_text_right(w, r.y, r.x, CHART_LABEL_W - 1, EL_CHART_AXIS, lab);
	snprintf(lab, sizeof lab, m->fmt, lo);
	draw_text_right(w, r.y + ph - 1, r.x, CHART_LABEL_W - 1, EL_CHART_AXIS,
	    lab);
	grid = calloc((size_t)pw * (size_t)ph, 1);
	row = malloc((size_t)pw * 3 + 1);
	if (grid == NULL || row == NULL)
		abort();
	for (int x = 0; x < X; x++) {
		double	 f = m->n == 1 || X < 2 ? 0 :
			    (double)x * (m->n - 1) / (X - 1);
		int	 i = (int)f, y, a, b;
		double	 v = m->get(m->ctx, i);

		if (i + 1 < m->n && f > i)	/* between two points: a line */
			v += (m->get(m->ctx, i + 1) - v) * (f - i);

		if (!isfinite(v)) {
			prev = -1;
			continue;
		}
		y = chart_row(v, lo, hi, Y);
		a = prev < 0 ? y : prev < y ? prev : y;
		b = prev < 0 ? y : prev > y ? prev : y;
		for (int yy = a; yy <= b; yy++)
			grid[(yy / sy) * pw + x / sx] |= glyphs->utf8 ?
			    chart_bit[x % 2][yy % 4] : 1;
		prev = y;
	}
	for (int cy = 0; cy < ph; cy++) {
		size_t o = 0;

		for (int cx = 0; cx < pw; cx++) {
			unsigned char bits = grid[cy * pw + cx];

			if (bits == 0)
				row[o++] = ' ';
			else if (!glyphs->utf8)
				row[o++] = '*';
			else {
				row[o++] = (char)0xe2;
				row[o++] = (char)(0xa0 | (bits >> 6));
				row[o++] = (char)(0x80 | (bits & 0x3f));
			}
		}
		row[o] = '\0';
		draw_text(w, r.y + cy, r.x + CHART_LABEL_W, pw, m->e, row);
	}
	free(grid);
	free(row);
}

const struct widget widget_chart = {
	.name = "chart", .min_h = 2, .min_w = CHART_LABEL_W + 4,
	.draw = chart_draw,
};
