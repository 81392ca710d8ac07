/*
 * bench-sgemm.c: `hunter bench sgemm`: cblas_sgemm on one thread at
 * square sizes of 512 to 2048, the best GFLOP/s of each over at least a
 * second, and the best of all cached in the state directory (lib/peak.h)
 * as the peak the console's MFU is measured against.
 */
#include <stdio.h>
#include <stdlib.h>

#include <cblas.h>

#include "lib/clock.h"
#include "lib/peak.h"
#include "lib/rng.h"
#include "lib/xmalloc.h"
#include "bench/bench.h"

static int
bench_sgemm(void)
{
	static const int sizes[] = { 512, 1024, 2048 };
	double	 best = 0;
	struct rng r;

	openblas_set_num_threads(1);
	rng_seed(&r, 1, 0);
	printf("bench sgemm: cblas_sgemm, one thread\n");
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
		int	 n = sizes[s];
		size_t	 nn = (size_t)n * n;
		float	*a = xmalloc_aligned(nn * sizeof *a);
		float	*b = xmalloc_aligned(nn * sizeof *b);
		float	*c = xmalloc_aligned(nn * sizeof *c);
		double	 t0 = clock_mono(), top = 0;

		for (size_t i = 0; i < nn; i++) {
			a[i] = rng_float(&r) - 0.5f;
			b[i] = rng_float(&r) - 0.5f;
		}
		for (int reps = 0; clock_mono() - t0 < 1.0 || reps < 3; reps++) {
			double t = clock_mono(), g;

			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n,
			    n, n, 1.0f, a, n, b, n, 0.0f, c, n);
			g = 2.0 * n * n * (double)n / (clock_mono() - t) * 1e-9;
			top = g > top ? g : top;
		}
		printf("  %4d x %4d  %8.1f GFLOP/s\n", n, n, top);
		best = top > best ? top : best;
		free(a);
		free(b);
		free(c);
	}
	if (peak_write(NULL, best) != 0)
		printf("  (could not cache the peak in the state directory)\n");
	else
		printf("  peak %.1f GFLOP/s cached for the console's MFU\n", best);
	return 0;
}

const struct bench_entry bench_sgemm_entry = {
	.name = "sgemm",
	.summary = "cblas_sgemm GFLOP/s on one thread; caches the peak the console's MFU uses",
	.run = bench_sgemm,
};
