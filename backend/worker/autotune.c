/*
 * autotune.c: the micro-batch search over the divisors of the per-rank
 * batch (see autotune.h).
 */
#include <stdio.h>

#include "backend/worker/autotune.h"

/* The index of the smallest divisor >= want, or n. */
static int
at_least(const int *d, int n, int want)
{
	int	 i = 0;

	while (i < n && d[i] < want)
		i++;
	return i;
}

static int
probe(autotune_probe fn, void *ctx, int size, struct autotune_trial *trace,
    int *ntrace, char *err, size_t errlen)
{
	struct autotune_trial *t;

	if (*ntrace >= AUTOTUNE_MAX_TRIALS) {
		snprintf(err, errlen, "autotune: more than %d trials",
		    AUTOTUNE_MAX_TRIALS);
		return -1;
	}
	t = &trace[(*ntrace)++];
	t->size = size;
	return fn(ctx, size, t, err, errlen) != 0 ? -1 : t->fit;
}

int
autotune_search(int per_rank, size_t budget, autotune_probe fn, void *ctx,
    struct autotune_trial *trace, int *ntrace, char *err, size_t errlen)
{
	int	 div[1024], n = 0, fit = -1, fail = -1, i, r, best;

	*ntrace = 0;
	for (int d = 1; d <= per_rank && n < 1024; d++) {
		if (per_rank % d == 0)
			div[n++] = d;
	}
	/* Double while it fits. */
	for (i = 0; i < n; i = at_least(div, n, 2 * div[i])) {
		if ((r = probe(fn, ctx, div[i], trace, ntrace, err, errlen)) < 0)
			return -1;
		if (!r) {
			fail = i;
			break;
		}
		fit = i;
	}
	if (fit < 0) {
		snprintf(err, errlen, "autotune: even a micro-batch of %d does "
		    "not fit memory_per_rank (%zu bytes; the trial needed %zu)",
		    div[0], budget, trace[0].peak_bytes);
		return -1;
	}
	/* Bisect between the last fit and the first failure. */
	while (fail >= 0 && fail - fit > 1) {
		int mid = (fit + fail) / 2;

		if ((r = probe(fn, ctx, div[mid], trace, ntrace, err, errlen)) < 0)
			return -1;
		if (r)
			fit = mid;
		else
			fail = mid;
	}
	/* The largest fit within AUTOTUNE_MARGIN of the fastest fit. */
	best = div[fit];
	{
		double	 top = 0;

		for (int k = 0; k < *ntrace; k++) {
			if (trace[k].fit && trace[k].samples_per_s > top)
				top = trace[k].samples_per_s;
		}
		best = 0;
		for (int k = 0; k < *ntrace; k++) {
			const struct autotune_trial *t = &trace[k];

			if (t->fit && t->size > best &&
			    AUTOTUNE_MARGIN * t->samples_per_s >= top)
				best = t->size;
		}
	}
	return best;
}
