/*
 * bench-sgemm.c: `hunter bench sgemm`: the BLAS kernel this process runs
 * (lib/blas.h: the library's choice, hunter's from cpuid, or the
 * operator's OPENBLAS_CORETYPE), checked first against the reference
 * GEMM; then cblas_sgemm at square sizes of 512 to 2048, the best GFLOP/s
 * of each over at least a second, on one thread and on all the cores,
 * each best cached in the state directory (lib/peak.h) under its key:
 * CPU model, library, kernel, threads.  A worker's MFU is measured
 * against the peak of its own key, never another kernel's.  Last, each
 * kernel this CPU can run, in a process of its own (OPENBLAS_CORETYPE is
 * read at load), at 2048 on one thread, so the kernel hunter runs is
 * seen against the best one here, in the same run: three rounds of
 * them all in turn, the best of each kernel.
 *
 * HUNTER_BENCH_QUICK=1 (tests) measures 256 and 512 for a fifth of a
 * second each and compares no kernels.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cblas.h>

#include "lib/blas.h"
#include "lib/peak.h"
#include "bench/bench.h"
#include "bench/bench-internal.h"

static int
sgemm_cores(void)
{
	long	 n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (int)n : 1;
}

/* The thread counts measured: 1, 2, 4, ... and all the cores. */
static int
sgemm_next(int t, int cores)
{
	if (t >= cores)
		return cores + 1;
	return t * 2 < cores ? t * 2 : cores;
}

/* The best of the sizes on `threads`, each printed; *last, the figure
 * of the largest size. */
static double
sgemm_measure(int threads, bool quick, double *last)
{
	static const int sizes[] = { 512, 1024, 2048 }, quick_sizes[] = { 256,
	    512 };
	const int	*sz = quick ? quick_sizes : sizes;
	int		 nsz = quick ? 2 : 3;
	double		 best = 0;

	openblas_set_num_threads(threads);
	for (int s = 0; s < nsz; s++) {
		double	 g = blas_gflops(sz[s], quick ? 0.2 : 1.0, threads == 1);

		printf("  %4d x %4d  %2d thread%s %8.1f GFLOP/s%s\n", sz[s],
		    sz[s], threads, threads == 1 ? " " : "s", g, threads == 1 ?
		    " (its CPU time)" : "");
		best = g > best ? g : best;
		*last = g;
	}
	return best;
}

/* Rounds of the kernel comparison: each kernel once a round, in turn,
 * its best kept, so that a burst of another process's work on a shared
 * machine lands on one kernel's run, not on its figure. */
#define SGEMM_ROUNDS	3

/* Each kernel the CPU can run, 2048 on one thread in a child process
 * (blas_gflops_core); the best of them, and in *mine the figure of the
 * one this run has (left alone when none of them is). */
static double
sgemm_kernels(const struct cpu_info *c, const char *ours, double *mine)
{
	const char	*names[16];
	char		 got[16][32], ran[32];
	int		 n = blas_candidates(c, names, 16);
	double		 best = *mine, top[16] = { 0 }, g;

	printf("  the kernels this CPU runs, 2048 x 2048 on one thread, each in "
	    "a process of its own, the best of %d rounds:\n", SGEMM_ROUNDS);
	for (int i = 0; i < n; i++)
		got[i][0] = '\0';
	for (int round = 0; round < SGEMM_ROUNDS; round++)
		for (int i = 0; i < n; i++) {
			g = blas_gflops_core(names[i], 2048, 1.0, ran,
			    sizeof ran);
			if (ran[0] != '\0')
				snprintf(got[i], sizeof got[i], "%s", ran);
			top[i] = g > top[i] ? g : top[i];
		}
	for (int i = 0; i < n; i++) {
		printf("    %-15s runs %-15s %8.1f GFLOP/s%s\n", names[i],
		    got[i][0] != '\0' ? got[i] : "(did not run)", top[i],
		    strcmp(got[i], ours) == 0 ? "  (the kernel of this run)" :
		    "");
		if (strcmp(got[i], ours) == 0 && strcmp(names[i], ours) == 0)
			*mine = top[i];
		best = top[i] > best ? top[i] : best;
	}
	return best;
}

/* The child of blas_gflops_core(): "N SECS" in BLAS_CHILD (an older
 * "1": 2048 for a second); one line, "GFLOPS KERNEL", GFLOPS 0 when the
 * kernel disagrees with the reference. */
static int
sgemm_child(const char *arg)
{
	int	 n = 2048;
	double	 secs = 1.0, g = 0;

	if (sscanf(arg, "%d %lf", &n, &secs) != 2 || n < 16 || n > 8192 ||
	    !(secs > 0 && secs <= 10)) {
		n = 2048;
		secs = 1.0;
	}
	openblas_set_num_threads(1);
	if (blas_check() <= BLAS_CHECK_TOLERANCE)
		g = blas_gflops(n, secs, true);
	printf("%.3f %s\n", g, openblas_get_corename());
	return 0;
}

static int
bench_sgemm(void)
{
	bool		 quick = getenv("HUNTER_BENCH_QUICK") != NULL;
	struct blas_info bi;
	struct cpu_info	 c;
	double		 load[3] = { 0 }, err, one = 0, last;
	int		 cores = sgemm_cores();

	if (getenv(BLAS_CHILD) != NULL)
		return sgemm_child(getenv(BLAS_CHILD));
	blas_info(&bi);
	cpu_read(&c);
	getloadavg(load, 3);
	printf("bench sgemm: %s, kernel %s (%s; cpuid allows %s), %s, %d "
	    "core%s; load %.2f %.2f %.2f (a loaded machine measures low)\n",
	    bi.library, bi.kernel, blas_by_words(bi.by), bi.best[0] != '\0' ?
	    bi.best : "none known", bi.cpu, cores, cores == 1 ? "" : "s",
	    load[0], load[1], load[2]);
	for (int t = 1; t <= cores; t = sgemm_next(t, cores)) {
		openblas_set_num_threads(t);
		err = blas_check();
		printf("  reference GEMM (double, odd shapes, both transposes), "
		    "%d thread%s: largest error %.1e (at most %.0e)\n", t,
		    t == 1 ? "" : "s", err, BLAS_CHECK_TOLERANCE);
		if (!(err <= BLAS_CHECK_TOLERANCE)) {
			printf("  the kernel %s computes wrong results here: set "
			    "OPENBLAS_CORETYPE to another; nothing cached\n",
			    bi.kernel);
			return 1;
		}
	}
	for (int t = 1; t <= cores; t = sgemm_next(t, cores)) {
		struct peak_key	 k = { bi.cpu, bi.library, bi.kernel, t };
		double		 best = sgemm_measure(t, quick, &last);

		one = t == 1 ? last : one;
		if (peak_write(NULL, &k, best) != 0)
			printf("  (could not cache the peak in the state "
			    "directory)\n");
		else
			printf("  peak %.1f GFLOP/s on %d thread%s cached for "
			    "kernel %s\n", best, t, t == 1 ? "" : "s", bi.kernel);
	}
	if (!quick) {
		double best = sgemm_kernels(&c, bi.kernel, &one);

		printf("  this run's kernel, 2048 x 2048 on one thread: %.1f "
		    "GFLOP/s, %.0f%% of the best kernel here (target >= 90%%)\n",
		    one, best > 0 ? 100 * one / best : 0);
	}
	return 0;
}

double
bench_sgemm_peak(int threads)
{
	struct blas_info bi;
	struct peak_key	 k;
	double		 g;

	blas_info(&bi);
	k = (struct peak_key){ bi.cpu, bi.library, bi.kernel, threads };
	if (peak_read(NULL, &k, &g) == 0)
		return g;
	printf("bench: no cached sgemm peak for kernel %s on %d thread%s; "
	    "measuring it first\n", bi.kernel, threads, threads == 1 ? "" :
	    "s");
	bench_sgemm();
	openblas_set_num_threads(threads);
	return peak_read(NULL, &k, &g) == 0 ? g : 0;
}

const struct bench_entry bench_sgemm_entry = {
	.name = "sgemm",
	.summary = "the BLAS kernel, checked against a reference GEMM, its "
	    "GFLOP/s on 1 thread and all cores (cached, by kernel, for the "
	    "MFU), beside every kernel this CPU runs",
	.run = bench_sgemm,
};
