/*
 * compressor-threshold.c: the sparse pipeline (compressor-sparse.c)
 * sending what passes a threshold estimated from a random sample of |v|
 * (kernels/cpu/compress.h): cheaper than an exact top k, and a count
 * that lands within 20% of k, so one encode may send up to 1.2 k.
 */
#include "lib/xmalloc.h"
#include "kernels/cpu/compress.h"
#include "backend/worker/compressor-internal.h"

static void
threshold_setup(struct compressor *c)
{
	comp_sparse_setup(c);
	c->scratch = xmalloc(compress_scratch_floats(c->n) * sizeof *c->scratch);
	c->kmax += c->kmax / 5;
	c->kmax = c->kmax < c->n ? c->kmax : c->n;
}

static size_t
threshold_select(struct compressor *c, size_t k)
{
	return compress_threshold(c->idx, c->v, c->n, k, &c->rng, c->scratch);
}

const struct comp_method comp_threshold = {
	.type = { COMPRESS_THRESHOLD, 1 },
	.setup = threshold_setup,
	.bound = comp_sparse_bound,
	.encode = comp_sparse_encode,
	.decode = comp_sparse_decode,
	.select = threshold_select,
};
