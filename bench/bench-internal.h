/*
 * bench-internal.h: what the benchmark files share besides the table.
 */
#ifndef HUNTER_BENCH_INTERNAL_H
#define HUNTER_BENCH_INTERNAL_H

#include "backend/spec/spec.h"

/* A gpt job of this shape on token data, with AdamW (bench-gpt.c). */
void	bench_gpt_spec(struct job_spec *, int L, int H, int C, int T, int V);
/* The cached sgemm peak of this process's kernel on `threads`, measured
 * now (all of `hunter bench sgemm`) when there is none; 0 if it cannot
 * be (bench-sgemm.c). */
double	bench_sgemm_peak(int threads);
/* The gpt S step on the device, for `hunter bench cuda` (CUDA builds). */
int	bench_cuda_gpt(void);

#endif
