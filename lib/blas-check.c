/*
 * blas-check.c: is the kernel right, and how fast is it (blas.h).  The
 * reference is the plain triple loop in double; the shapes are odd so
 * that every edge case of a blocked kernel (the tails of m, n and k) and
 * every transpose runs.
 */
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>

#include "lib/blas.h"
#include "lib/clock.h"
#include "lib/rng.h"
#include "lib/run.h"
#include "lib/xmalloc.h"

struct blas_shape {
	int		 m, n, k;
	bool		 ta, tb;
};

static const struct blas_shape blas_shapes[] = {
	{ 67, 45, 129, false, false },
	{ 33, 130, 70, true, false },
	{ 128, 96, 200, false, true },
	{ 150, 141, 161, true, true },
	{ 1, 257, 64, false, false },
};

/* Element (i, j) of a row-major matrix stored transposed or not. */
static inline double
blas_at(const float *x, int i, int j, int rows, int cols, bool t)
{
	(void)rows;
	return t ? x[(size_t)j * rows + i] : x[(size_t)i * cols + j];
}

/* One shape: the largest |c - ref| over the sum of |a||b| (and of the
 * scaled c it started from) of the element. */
static double
blas_check_shape(const struct blas_shape *s, struct rng *r)
{
	const float	 alpha = 0.75f, beta = 0.5f;
	size_t		 na = (size_t)s->m * s->k, nb = (size_t)s->k * s->n;
	size_t		 nc = (size_t)s->m * s->n;
	float		*a = xmalloc(na * sizeof *a), *b = xmalloc(nb * sizeof *b);
	float		*c = xmalloc(nc * sizeof *c), *c0 = xmalloc(nc * sizeof *c0);
	double		 worst = 0;

	for (size_t i = 0; i < na; i++)
		a[i] = 2 * rng_float(r) - 1;
	for (size_t i = 0; i < nb; i++)
		b[i] = 2 * rng_float(r) - 1;
	for (size_t i = 0; i < nc; i++)
		c[i] = c0[i] = 2 * rng_float(r) - 1;
	cblas_sgemm(CblasRowMajor, s->ta ? CblasTrans : CblasNoTrans, s->tb ?
	    CblasTrans : CblasNoTrans, s->m, s->n, s->k, alpha, a, s->ta ?
	    s->m : s->k, b, s->tb ? s->k : s->n, beta, c, s->n);
	for (int i = 0; i < s->m; i++) {
		for (int j = 0; j < s->n; j++) {
			double	 sum = 0, mag = 0, e;

			for (int p = 0; p < s->k; p++) {
				double x = blas_at(a, i, p, s->m, s->k, s->ta);
				double y = blas_at(b, p, j, s->k, s->n, s->tb);

				sum += x * y;
				mag += fabs(x * y);
			}
			sum = alpha * sum + beta * (double)c0[(size_t)i * s->n + j];
			mag = alpha * mag + fabs(beta * (double)c0[(size_t)i *
			    s->n + j]);
			e = fabs((double)c[(size_t)i * s->n + j] - sum) /
			    (mag > 0 ? mag : 1);
			/* NaN from a broken kernel is the worst of all. */
			if (!(e <= worst))
				worst = isnan(e) ? INFINITY : e;
		}
	}
	free(a);
	free(b);
	free(c);
	free(c0);
	return worst;
}

double
blas_check(void)
{
	struct rng	 r;
	double		 worst = 0;

	rng_seed(&r, 20240520, 7);
	for (size_t i = 0; i < sizeof blas_shapes / sizeof blas_shapes[0]; i++) {
		double	 e = blas_check_shape(&blas_shapes[i], &r);

		worst = e > worst ? e : worst;
	}
	return worst;
}

/* Seconds of the clock: the calling thread's CPU time, or the wall's. */
static double
blas_clock(bool cpu)
{
	struct timespec	 ts;

	if (!cpu)
		return clock_mono();
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

double
blas_gflops(int n, double secs, bool cpu)
{
	size_t	 nn = (size_t)n * n;
	float	*a = xmalloc_aligned(nn * sizeof *a);
	float	*b = xmalloc_aligned(nn * sizeof *b);
	float	*c = xmalloc_aligned(nn * sizeof *c);
	double	 t0, top = 0;
	struct rng r;

	rng_seed(&r, 1, 0);
	for (size_t i = 0; i < nn; i++) {
		a[i] = rng_float(&r) - 0.5f;
		b[i] = rng_float(&r) - 0.5f;
	}
	t0 = clock_mono();
	for (int reps = 0; clock_mono() - t0 < secs || reps < 3; reps++) {
		double	 t = blas_clock(cpu), g;

		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n,
		    1.0f, a, n, b, n, 0.0f, c, n);
		g = 2.0 * n * n * (double)n / (blas_clock(cpu) - t) * 1e-9;
		top = g > top ? g : top;
	}
	free(a);
	free(b);
	free(c);
	return top;
}

double
blas_gflops_core(const char *core, int n, double secs, char *ran,
    size_t len)
{
	char		 exe[PATH_MAX], ct[64], child[64], err[256], got[32];
	const char	*argv[] = { "env", "-u", "HUNTER_BLAS_CORETYPE", ct, child,
	    exe, "bench", "sgemm", NULL };
	char		*out = NULL;
	ssize_t		 l;
	double		 g = 0;

	if (len > 0)
		ran[0] = '\0';
	if ((l = readlink("/proc/self/exe", exe, sizeof exe - 1)) < 0)
		return 0;
	exe[l] = '\0';
	snprintf(ct, sizeof ct, "OPENBLAS_CORETYPE=%s", core);
	snprintf(child, sizeof child, "%s=%d %g", BLAS_CHILD, n, secs);
	if (run_capture(argv, &out, BLAS_CHILD_TIMEOUT_MS, err,
	    sizeof err) != 0 || out == NULL || sscanf(out, "%lf %31s", &g,
	    got) != 2 || !(g > 0))
		g = 0;
	else if (len > 0)
		snprintf(ran, len, "%s", got);
	free(out);
	return g;
}
