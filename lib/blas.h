/*
 * blas.h: which BLAS kernel this process runs, who chose it, and how well
 * it does.
 *
 * OpenBLAS (Debian's is built DYNAMIC_ARCH) picks a "core type" from the
 * CPU when it loads, and on some new CPUs it picks an old one: 0.3.21
 * runs Prescott's SSE3 kernels on some AVX-512 Xeons, 4-5x slower.  It
 * reads OPENBLAS_CORETYPE once, at load, so a process can only correct
 * that by starting again with the variable set: blas_reexec(), called
 * first thing in main(), does so when cpuid (lib/cpuid.h) allows a
 * better class of kernel than the library chose, and marks the choice
 * as hunter's (HUNTER_BLAS_CORETYPE), so that its children (agents,
 * workers, programs) inherit it.  An OPENBLAS_CORETYPE the operator set
 * always wins and is never changed.
 */
#ifndef HUNTER_BLAS_H
#define HUNTER_BLAS_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/cpuid.h"

enum blas_by {
	BLAS_BY_LIBRARY,	/* OpenBLAS's own detection */
	BLAS_BY_HUNTER,		/* cpuid's, through blas_reexec() */
	BLAS_BY_OPERATOR,	/* an OPENBLAS_CORETYPE already set */
};

struct blas_info {
	char		 library[48];	/* "OpenBLAS 0.3.21" */
	char		 kernel[32];	/* what runs: "SkylakeX" */
	char		 best[32];	/* what cpuid allows: "SapphireRapids" */
	enum blas_by	 by;
	int		 threads;	/* the library's thread count now */
	char		 cpu[96];	/* cpu_model_name() */
};

/* The most specific OpenBLAS core type whose instructions c has, or
 * NULL when none of those hunter knows. */
const char	*blas_best(const struct cpu_info *c);
/* Every core type of hunter's table that c can run, the most specific
 * first, up to max of them in names; how many. */
int		 blas_candidates(const struct cpu_info *c, const char **names,
		    int max);
/* The class of kernel a core type name is (1 SSE3 .. 4 AVX-512), from
 * the names OpenBLAS 0.3 gives; 0 for a name not known. */
int		 blas_tier(const char *core);
/*
 * Whether a process must start again to run what c allows, and with
 * what in *want (NULL: no OPENBLAS_CORETYPE, the library's own choice).
 * set and mark are OPENBLAS_CORETYPE and HUNTER_BLAS_CORETYPE as found
 * (NULL when unset), loaded the core type the library runs now.
 */
bool		 blas_decide(const char *set, const char *mark,
		    const char *loaded, const struct cpu_info *c,
		    const char **want);
/* Decide this process's kernel (blas_decide); returns only if it keeps
 * the one loaded (exec failing included). */
void		 blas_reexec(char **argv);
/* What this process runs. */
void		 blas_info(struct blas_info *);
/* "the library's choice", "hunter's choice (cpuid)", "OPENBLAS_CORETYPE" */
const char	*blas_by_words(enum blas_by);
/* The threads a rank's environment asks for (OPENBLAS_NUM_THREADS),
 * else 1. */
int		 blas_env_threads(void);
/* The threads each rank gets on a machine of ncores whose nodes have
 * slots CPU slots in all: ncores / slots, at least 1. */
int		 blas_rank_threads(int ncores, int slots);
/*
 * The kernel against a plain triple loop in double, at a few shapes
 * (odd ones, both transposes, on the current threads): the largest error
 * relative to the sum of |a||b| of an element, so round-off, not a
 * wrong kernel, is what stays under 1e-5.
 */
double		 blas_check(void);
/* What blas_check() may give: round-off over these shapes stays below
 * 4e-6; a kernel wrong for the CPU gives 1e-3 or more, or NaN. */
#define BLAS_CHECK_TOLERANCE	1e-5
/* GFLOP/s of cblas_sgemm on n x n, the best over at least secs and 3
 * runs, on the library's current threads.  cpu: timed by the calling
 * thread's CPU time, which other processes on the machine hardly touch;
 * only for one thread, where OpenBLAS computes in the caller. */
double		 blas_gflops(int n, double secs, bool cpu);
/*
 * The same for core type `core`, which this process may not run: this
 * program again as `hunter bench sgemm` in its child mode (BLAS_CHILD,
 * "N SECS") with OPENBLAS_CORETYPE=core, since the library reads it at
 * load; one thread, CPU time, after the reference check.  The core type
 * the child ran goes to ran (it may differ: 0.3.21 runs SapphireRapids
 * as Cooperlake).  0 when it does not run, the kernel disagrees with the
 * reference, or it takes more than BLAS_CHILD_TIMEOUT_MS.
 */
double		 blas_gflops_core(const char *core, int n, double secs,
		    char *ran, size_t len);
/* The variable that makes `hunter bench sgemm` blas_gflops_core()'s
 * child; it prints one line, "GFLOPS KERNEL" (GFLOPS 0: wrong results). */
#define BLAS_CHILD		"HUNTER_BENCH_SGEMM_CHILD"
#define BLAS_CHILD_TIMEOUT_MS	30000

#endif
