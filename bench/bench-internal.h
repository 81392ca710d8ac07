/*
 * bench-internal.h: what the benchmark files share besides the table.
 */
#ifndef HUNTER_BENCH_INTERNAL_H
#define HUNTER_BENCH_INTERNAL_H

#include "backend/spec/spec.h"

/* A gpt job of this shape on token data, with AdamW (bench-gpt.c). */
void	bench_gpt_spec(struct job_spec *, int L, int H, int C, int T, int V);
/* The gpt S step on the device, for `hunter bench cuda` (CUDA builds). */
int	bench_cuda_gpt(void);

#endif
