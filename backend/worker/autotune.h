/*
 * autotune.h: the micro-batch search of docs/architecture.md, "Training".  Sizes are
 * the divisors of the per-rank batch, so gradient accumulation always
 * makes up the global batch exactly.  Double until a size does not fit
 * the memory budget (or the device runs out), then bisect between the
 * last fit and the first failure.  Throughput is measured at every size
 * that fits; the largest size within 10% of the fastest wins.  Not "the
 * fastest": a trial times the forward and backward passes alone, and a
 * smaller micro-batch also pays what it does not see for each micro-step
 * (the loader's hand-off, the accumulation, a step's bookkeeping); and
 * where throughput falls slowly with the size, as it does on a CPU, a
 * narrow margin crosses the curve between two sizes a few percent apart,
 * and the choice follows the timings' noise from run to run.
 */
#ifndef HUNTER_AUTOTUNE_H
#define HUNTER_AUTOTUNE_H

#include <stdbool.h>
#include <stddef.h>

#define AUTOTUNE_MAX_TRIALS 64
/* A size within this factor of the fastest counts as fast as it. */
#define AUTOTUNE_MARGIN 1.10

struct autotune_trial {
	int	 size;
	bool	 fit;
	size_t	 peak_bytes;
	double	 samples_per_s;
	double	 steps;		/* timed steps, the ranks' mean */
};

/* Run one trial of `size` (every rank agreeing on the outcome) and fill
 * the trial.  Returns 0, or -1 with err on a failure that is not "does
 * not fit". */
typedef int (*autotune_probe)(void *ctx, int size, struct autotune_trial *,
	    char *err, size_t errlen);

/*
 * Search the divisors of per_rank.  Returns the chosen size, or -1 with
 * err (naming the budget when nothing fits).  The trials in order go to
 * trace (*ntrace of them).
 */
int	autotune_search(int per_rank, size_t budget, autotune_probe, void *ctx,
	    struct autotune_trial *trace, int *ntrace, char *err,
	    size_t errlen);

#endif
