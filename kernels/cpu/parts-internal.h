/*
 * parts-internal.h: how the kernels of kernels/cpu cut their work into
 * parts for the caller's pool (lib/pool.h).  The cut is a function of
 * the shape alone, never of the threads: each part computes the same
 * elements in the same order whichever thread takes it, and nothing
 * sums across parts except in part order, so a kernel gives the same
 * bits on one thread as on many.  A reduction over rows (a bias's or a
 * LayerNorm weight's gradient) is cut by columns instead, each part
 * adding its columns' rows in order, as the serial loop does.
 */
#ifndef HUNTER_PARTS_INTERNAL_H
#define HUNTER_PARTS_INTERNAL_H

#include <stddef.h>

#include "lib/pool.h"

/* At most this many parts to a piece of work: more than the threads of
 * any machine we run on, few enough that a part is not all overhead. */
#define KPARTS_MAX	64

/* Floats of element-wise work a part (64 KiB in, the same out): much
 * more than a dispatch costs, small enough to spread. */
#define KPARTS_GRAIN	16384

/* Parts of n units, each at least grain units (one part at least). */
static inline int
kparts(size_t n, size_t grain)
{
	size_t	 p = grain > 0 ? n / grain : 1;

	return p < 1 ? 1 : p > KPARTS_MAX ? KPARTS_MAX : (int)p;
}

/* Parts of C columns, each summed over N rows: at least `cols` columns
 * a part, and a part's worth of floats. */
static inline int
kparts_cols(size_t N, size_t C, size_t cols)
{
	int	 p = kparts(N * C, KPARTS_GRAIN), q = kparts(C, cols);

	return p < q ? p : q;
}

/* Where part i of n units cut in `parts` starts (part i ends where
 * i + 1 starts). */
static inline size_t
kpart_at(size_t n, int parts, int i)
{
	return n * (size_t)i / (size_t)parts;
}

/* Columns a part of columns starts at a multiple of, so that its inner
 * loops run in whole blocks of the vector code's (vmath-internal.h). */
#define KPARTS_UNIT	16

/* Columns [*c0, *c1) of part i of C columns cut in `parts`, whole units
 * of KPARTS_UNIT but the last. */
static inline void
kpart_cols(size_t C, int parts, int i, size_t *c0, size_t *c1)
{
	size_t	 units = (C + KPARTS_UNIT - 1) / KPARTS_UNIT;

	*c0 = kpart_at(units, parts, i) * KPARTS_UNIT;
	*c1 = kpart_at(units, parts, i + 1) * KPARTS_UNIT;
	*c0 = *c0 < C ? *c0 : C;
	*c1 = *c1 < C ? *c1 : C;
}

/* One of several independent pieces of work that go to the pool as one
 * run (kparts_run): its parts and what runs each. */
struct ktask {
	int	 parts;
	pool_fn	*fn;
	void	*arg;
};

struct kparts_set {
	const struct ktask *t;
	int	 n;
};

static inline void
kparts_one(void *arg, int part, int thread)
{
	const struct kparts_set *s = arg;

	for (int i = 0; i < s->n; i++) {
		if (part < s->t[i].parts) {
			s->t[i].fn(s->t[i].arg, part, thread);
			return;
		}
		part -= s->t[i].parts;
	}
}

/* Run the parts of n pieces of work that write apart from each other,
 * in one pool run; a piece with no parts is skipped. */
static inline void
kparts_run(struct pool *pool, const struct ktask *t, int n)
{
	struct kparts_set s = { t, n };
	int	 total = 0;

	for (int i = 0; i < n; i++)
		total += t[i].parts;
	pool_run(pool, total, kparts_one, &s);
}

#endif
