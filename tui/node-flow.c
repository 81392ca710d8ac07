/*
 * node-flow.c: how a node's detail view (node-detail.h) lays itself out:
 * rows of a view that may run past its window, the host's rows placed
 * where there is room for them (dv_map), compact numbers, and the flow
 * that puts fields "label value [sparkline]" left to right into lines.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tui/console.h"
#include "tui/draw.h"
#include "tui/node-detail.h"

int
dv_map(const struct dview *d, int y)
{
	if (y < DV_HOST)
		return y;
	y -= DV_HOST;
	return y < d->host_k ? d->host_y + y : d->rest_y + y - d->host_k;
}

bool
dv_visible(const struct dview *d, int y)
{
	y = dv_map(d, y);
	return y >= d->top && y < d->top + d->rows;
}

int
dv_text(struct dview *d, int y, int x, int maxw, enum elem e, const char *s)
{
	if (!dv_visible(d, y) || maxw <= 0)
		return draw_width(s);
	return draw_text(d->w, dv_map(d, y) - d->top, x, maxw, e, s);
}

/* v in few columns: divided by step while it is that large, with the
 * suffix of its step; a decimal below 100 (or below 10 unscaled). */
static const char *
dv_scaled(char *buf, size_t n, bool valid, double v, double step,
    const char *const *u, int nu)
{
	int	 i = 0;

	if (!valid || isnan(v))
		return fmt_num(buf, n, false, "", 0);
	while (fabs(v) >= step && i + 1 < nu) {
		v /= step;
		i++;
	}
	snprintf(buf, n, (i > 0 && fabs(v) < 100) || (v != floor(v) &&
	    fabs(v) < 10) ? "%.1f%s" : "%.0f%s", v, u[i]);
	return buf;
}

/* 80.0G, 1.5M, 512B: a size (binary steps). */
const char *
dv_bytes(char *buf, size_t n, bool valid, double v)
{
	static const char *const u[] = { "B", "K", "M", "G", "T", "P" };

	return dv_scaled(buf, n, valid, v, 1024, u, 6);
}

/* 1.2M, 930, 12k: a rate (decimal steps). */
const char *
dv_si(char *buf, size_t n, bool valid, double v)
{
	static const char *const u[] = { "", "k", "M", "G", "T" };

	return dv_scaled(buf, n, valid, v, 1000, u, 5);
}

void
flow_start(struct flow *f, struct dview *d, int x0, int width, int y)
{
	*f = (struct flow){ d, x0, width, x0, y, d->spark_w };
}

void
flow_break(struct flow *f)
{
	if (f->x > f->x0) {
		f->y++;
		f->x = f->x0;
	}
}

/* "label value" in e, and a sparkline of sp when given. */
void
flow_field(struct flow *f, const char *label, const char *value, enum elem e,
    const struct hist_ref *sp)
{
	int	 lw = label != NULL && *label ? draw_width(label) + 1 : 0;
	int	 w = lw + draw_width(value) + (sp != NULL ? 1 + f->spw : 0);
	int	 gap = f->x > f->x0 ? 2 : 0;

	if (f->x > f->x0 && f->x + gap + w > f->x0 + f->width) {
		flow_break(f);
		gap = 0;
	}
	f->x += gap;
	if (lw > 0)
		dv_text(f->d, f->y, f->x, f->x0 + f->width - f->x, EL_TEXT_DIM,
		    label);
	f->x += lw;
	f->x += dv_text(f->d, f->y, f->x, f->x0 + f->width - f->x, e, value);
	if (sp != NULL) {
		struct spark_model m = hist_spark(sp, EL_SPARK_RX, true);

		if (dv_visible(f->d, f->y) && sp->k >= 0)
			widget_draw(W_SPARKLINE, f->d->w, (struct rect){
			    dv_map(f->d, f->y) - f->d->top, f->x + 1, 1, f->spw },
			    &m);
		f->x += 1 + f->spw;
	}
}

/* The next free row after a flow. */
int
flow_end(struct flow *f)
{
	return f->x > f->x0 ? f->y + 1 : f->y;
}

