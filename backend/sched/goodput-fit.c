/*
 * goodput-fit.c: the throughput model fitted to observed steps
 * (goodput_fit, goodput.h).  For an overlap g, each observation's step
 * and exchange imply the compute time of one of its micro-batches; a
 * least-squares line through those against the micro-batch gives the
 * compute parameters, and lines through the exchange times against the
 * ranks past two, within a node and across nodes, the exchange ones.
 * The g in [1, 10] whose model predicts the steps best in log (with
 * Pollux's small pull towards 1, which keeps a tie at no overlap) wins:
 * a grid, then a golden-section search beside its best point.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/xmalloc.h"
#include "backend/sched/goodput.h"

#define FIT_GAMMA_MAX	10.0
#define FIT_GOLDEN	40		/* iterations: the bracket / 1e8 */
#define FIT_BISECT	80		/* iterations: to a double's ulp */

/* The compute time of one micro-batch that o's step implies under
 * overlap g: the c >= 0 with (accum - 1) c + (c^g + x^g)^(1/g) = step,
 * which grows with c. */
static double
implied_compute(const struct goodput_obs *o, double g)
{
	double	 x = o->exchange_s, a = o->accum, lo = 0, hi = o->step_s;

	if (g <= 1 || x <= 0)
		return fmax(0, (o->step_s - x) / a);
	if (o->step_s <= x)
		return 0;
	for (int i = 0; i < FIT_BISECT; i++) {
		double	 c = (lo + hi) / 2;

		if ((a - 1) * c + pow(pow(c, g) + pow(x, g), 1 / g) > o->step_s)
			hi = c;
		else
			lo = c;
	}
	return (lo + hi) / 2;
}

/*
 * The least-squares line y = a + b t through n points, both kept >= 0
 * (a negative one is dropped and the other refitted alone).  With one
 * distinct t the slope is unknown: split says how to read the mean,
 * half fixed and half per unit of t (compute) or all fixed (exchange).
 * No points: zero.
 */
static void
fit_line(const double *t, const double *y, int n, bool split, double *a,
    double *b)
{
	double	 st = 0, sy = 0, stt = 0, sty = 0, var;

	*a = *b = 0;
	if (n == 0)
		return;
	for (int i = 0; i < n; i++) {
		st += t[i];
		sy += y[i];
		stt += t[i] * t[i];
		sty += t[i] * y[i];
	}
	var = n * stt - st * st;
	if (var <= 1e-12 * (n * stt + 1)) {
		if (split && st > 0) {
			*a = sy / n / 2;
			*b = sy / st / 2;
		} else
			*a = sy / n;
		return;
	}
	*b = (n * sty - st * sy) / var;
	*a = (sy - *b * st) / n;
	if (*b < 0) {
		*b = 0;
		*a = sy / n;
	} else if (*a < 0) {
		*a = 0;
		*b = stt > 0 ? sty / stt : 0;
	}
}

struct fit_buf {
	const struct goodput_obs *obs;
	int	 n;
	double	*t, *y;		/* n each */
};

/* The exchange line of the observations within one node (multi false)
 * or across nodes (multi true), of two or more ranks. */
static int
fit_exchange(struct fit_buf *f, bool multi, double *a, double *b)
{
	int	 k = 0;

	for (int i = 0; i < f->n; i++) {
		const struct goodput_obs *o = &f->obs[i];

		if (o->ranks < 2 || (o->nodes > 1) != multi)
			continue;
		f->t[k] = o->ranks > 2 ? o->ranks - 2 : 0;
		f->y[k++] = o->exchange_s;
	}
	fit_line(f->t, f->y, k, false, a, b);
	return k;
}

/* The model for overlap g, and how far its steps are from the observed
 * ones (root mean squared log error, plus the pull towards g = 1). */
static double
fit_at(struct fit_buf *f, double g, struct goodput_model *m)
{
	double	 err = 0;

	for (int i = 0; i < f->n; i++) {
		f->t[i] = f->obs[i].micro;
		f->y[i] = implied_compute(&f->obs[i], g);
	}
	fit_line(f->t, f->y, f->n, true, &m->alpha_c, &m->beta_c);
	if (fit_exchange(f, false, &m->alpha_r, &m->beta_r) == 0)
		m->alpha_r = m->beta_r = 0;
	if (fit_exchange(f, true, &m->alpha_n, &m->beta_n) == 0) {
		m->alpha_n = m->alpha_r;
		m->beta_n = m->beta_r;
	}
	m->gamma = g;
	for (int i = 0; i < f->n; i++) {
		const struct goodput_obs *o = &f->obs[i];
		double	 p = goodput_step_s(m, o->nodes, o->ranks, o->micro,
		    o->accum);
		double	 d = log(fmax(p, 1e-12)) - log(o->step_s);

		err += d * d;
	}
	return sqrt(err / f->n) + 1e-3 * (g - 1) * (g - 1);
}

static int
fit_check(const struct goodput_obs *o, int i, char *err, size_t errlen)
{
	if (o->nodes < 1 || o->ranks < o->nodes || o->micro < 1 ||
	    o->accum < 1) {
		snprintf(err, errlen, "observation %d: nodes >= 1, ranks >= "
		    "nodes, micro >= 1 and accum >= 1 are needed (%d, %d, %d, "
		    "%d)", i, o->nodes, o->ranks, o->micro, o->accum);
		return -1;
	}
	if (!isfinite(o->step_s) || !isfinite(o->exchange_s) ||
	    !(o->step_s > 0) || o->exchange_s < 0 ||
	    o->exchange_s > o->step_s) {
		snprintf(err, errlen, "observation %d: a step of %g s with an "
		    "exchange of %g s (the step must be > 0 and hold the "
		    "exchange)", i, o->step_s, o->exchange_s);
		return -1;
	}
	return 0;
}

int
goodput_fit(const struct goodput_obs *obs, int n, struct goodput_model *m,
    char *err, size_t errlen)
{
	static const double grid[] = { 1, 1.5, 2, 3, 4, 6, FIT_GAMMA_MAX };
	const int	 ng = (int)(sizeof grid / sizeof grid[0]);
	struct fit_buf	 f = { obs, n, NULL, NULL };
	struct goodput_model best, t;
	double		 e, eb, lo, hi, x1, x2, e1, e2;
	int		 bi = 0;

	if (n < 1) {
		snprintf(err, errlen, "no observations to fit");
		return -1;
	}
	for (int i = 0; i < n; i++) {
		if (fit_check(&obs[i], i, err, errlen) != 0)
			return -1;
	}
	f.t = xcalloc((size_t)n, sizeof *f.t);
	f.y = xcalloc((size_t)n, sizeof *f.y);
	eb = fit_at(&f, grid[0], &best);
	for (int i = 1; i < ng; i++) {
		if ((e = fit_at(&f, grid[i], &t)) < eb) {
			eb = e;
			best = t;
			bi = i;
		}
	}
	lo = grid[bi > 0 ? bi - 1 : 0];
	hi = grid[bi < ng - 1 ? bi + 1 : ng - 1];
	x1 = hi - (hi - lo) * 0.6180339887498949;
	x2 = lo + (hi - lo) * 0.6180339887498949;
	e1 = fit_at(&f, x1, &t);
	e2 = fit_at(&f, x2, &t);
	for (int i = 0; i < FIT_GOLDEN; i++) {
		if (e1 < e2) {
			hi = x2;
			x2 = x1;
			e2 = e1;
			x1 = hi - (hi - lo) * 0.6180339887498949;
			e1 = fit_at(&f, x1, &t);
		} else {
			lo = x1;
			x1 = x2;
			e1 = e2;
			x2 = lo + (hi - lo) * 0.6180339887498949;
			e2 = fit_at(&f, x2, &t);
		}
	}
	if ((e = fit_at(&f, (lo + hi) / 2, &t)) < eb)
		best = t;
	best.max_ranks = 0;
	for (int i = 0; i < n; i++) {
		if (obs[i].ranks > best.max_ranks)
			best.max_ranks = obs[i].ranks;
	}
	*m = best;
	free(f.t);
	free(f.y);
	return 0;
}
