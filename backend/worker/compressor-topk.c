/*
 * compressor-topk.c: the sparse pipeline (compressor-sparse.c) sending
 * exactly the k largest |v|, by radix select (kernels/cpu/compress.h).
 */
#include "kernels/cpu/compress.h"
#include "backend/worker/compressor-internal.h"

static size_t
topk_select(struct compressor *c, size_t k)
{
	return compress_topk(c->idx, c->v, c->n, k);
}

const struct comp_method comp_topk = {
	.type = { COMPRESS_TOPK, 1 },
	.setup = comp_sparse_setup,
	.bound = comp_sparse_bound,
	.encode = comp_sparse_encode,
	.decode = comp_sparse_decode,
	.select = topk_select,
};
