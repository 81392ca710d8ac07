/*
 * bench-compress.c: `hunter bench compress`.  For 1M, 4M, 16M and 64M
 * floats of gaussian data at density 0.001 it times selection plus sparse
 * encoding, by sampled threshold and by exact top-k, and prints each as
 * GB/s of input (n*4 bytes / time) next to memcpy of the same n*4 bytes
 * timed in the same run, and their ratio to it, so the numbers read the
 * same on any machine.  The target is the threshold path at 0.3x memcpy
 * or better: then compression costs less than a third of what copying
 * the dense gradient once would.  GB is 10^9 bytes; each figure is the
 * best of at least BENCH_REPS runs (and BENCH_MIN_S seconds) after one
 * warm-up run; bytes is the size of the encoded top-k.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/rng.h"
#include "lib/xmalloc.h"
#include "kernels/cpu/compress.h"
#include "backend/worker/compressor.h"
#include "bench/bench.h"

#define BENCH_DENSITY	0.001
#define BENCH_TARGET	0.3
#define BENCH_REPS	3
#define BENCH_MIN_S	0.2	/* and at least this long per figure */
#define BENCH_SEED	42

enum bench_case { BENCH_MEMCPY, BENCH_THRESHOLD, BENCH_TOPK, BENCH_CASES };

struct bench {
	const float	*x;
	float		*dst, *scratch;
	uint32_t	*idx;
	uint8_t		*out;
	size_t		 n, k, count, bytes;
	struct rng	 rng;
};

static const size_t	bench_sizes[] = {
	(size_t)1 << 20, (size_t)4 << 20, (size_t)16 << 20, (size_t)64 << 20,
};

static void
bench_gauss(float *x, size_t n)
{
	struct rng	r;

	rng_seed(&r, BENCH_SEED, 0);
	for (size_t i = 0; i < n; i++)
		x[i] = rng_gauss(&r);
}

static void
bench_once(struct bench *b, enum bench_case what)
{
	switch (what) {
	case BENCH_MEMCPY:
		memcpy(b->dst, b->x, b->n * sizeof *b->x);
		return;
	case BENCH_THRESHOLD:
		b->count = compress_threshold(b->idx, b->x, b->n, b->k, &b->rng,
		    b->scratch);
		break;
	case BENCH_TOPK:
	default:
		b->count = compress_topk(b->idx, b->x, b->n, b->k);
		break;
	}
	b->bytes = compress_sparse_encode(b->out, b->idx, b->x, b->count,
	    1.0f);
}

/* Input GB/s of the best run of each case.  The cases take turns, so
 * that a burst of load elsewhere on the machine hits all of them. */
static void
bench_rates(struct bench *b, double *rate)
{
	double	start, t, best[BENCH_CASES];
	int	rounds = 0;

	for (int w = 0; w < BENCH_CASES; w++) {
		bench_once(b, (enum bench_case)w);
		best[w] = INFINITY;
	}
	start = clock_mono();
	while (rounds < BENCH_REPS || clock_mono() - start < BENCH_MIN_S) {
		for (int w = 0; w < BENCH_CASES; w++) {
			t = clock_mono();
			bench_once(b, (enum bench_case)w);
			t = clock_mono() - t;
			best[w] = t < best[w] ? t : best[w];
		}
		rounds++;
	}
	for (int w = 0; w < BENCH_CASES; w++)
		rate[w] = (double)(b->n * sizeof *b->x) / best[w] / 1e9;
}

static int
compress_bench(void)
{
	size_t		 nsizes = sizeof bench_sizes / sizeof *bench_sizes;
	size_t		 nmax = bench_sizes[nsizes - 1], kmax;
	struct bench	 b = { 0 };
	float		*x;
	double		 rate[BENCH_CASES];
	int		 missed = 0;

	kmax = (size_t)ceil(BENCH_DENSITY * (double)nmax);
	x = xmalloc_aligned(nmax * sizeof *x);
	b.dst = xmalloc_aligned(nmax * sizeof *b.dst);
	b.scratch = xmalloc(compress_scratch_floats(nmax) * sizeof *b.scratch);
	b.idx = xmalloc(compress_idx_cap(nmax, kmax) * sizeof *b.idx);
	b.out = xmalloc(compress_sparse_bound(nmax, kmax + kmax / 5));
	bench_gauss(x, nmax);
	b.x = x;
	rng_seed(&b.rng, BENCH_SEED, 1);

	printf("compress: selection + sparse encoding of gaussian floats, "
	    "density %g; GB/s = n*4 bytes / time\n", BENCH_DENSITY);
	printf("%9s %8s %12s %15s %7s %10s %7s %9s\n", "floats", "k",
	    "memcpy GB/s", "threshold GB/s", "ratio", "topk GB/s", "ratio",
	    "bytes");
	fflush(stdout);
	for (size_t s = 0; s < nsizes; s++) {
		b.n = bench_sizes[s];
		b.k = (size_t)ceil(BENCH_DENSITY * (double)b.n);
		bench_rates(&b, rate);
		printf("%8zuM %8zu %12.2f %15.2f %6.2fx %10.2f %6.2fx %9zu\n",
		    b.n >> 20, b.k, rate[BENCH_MEMCPY], rate[BENCH_THRESHOLD],
		    rate[BENCH_THRESHOLD] / rate[BENCH_MEMCPY],
		    rate[BENCH_TOPK], rate[BENCH_TOPK] / rate[BENCH_MEMCPY],
		    b.bytes);
		fflush(stdout);
		missed += rate[BENCH_THRESHOLD] <
		    BENCH_TARGET * rate[BENCH_MEMCPY];
	}
	printf("target: threshold >= %.1fx memcpy: %s\n", BENCH_TARGET,
	    missed ? "missed" : "met at every size");
	free(x);
	free(b.dst);
	free(b.scratch);
	free(b.idx);
	free(b.out);
	return 0;
}

const struct bench_entry bench_compress_entry = {
	.name = "compress",
	.summary = "top-k and threshold selection plus encoding of 1M-64M floats, against memcpy",
	.run = compress_bench,
};
