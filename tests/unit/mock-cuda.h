/*
 * mock-cuda.h: the MOCK GPU of mock-cuda.c (host memory and the CPU
 * kernels behind the CUDA calls that model-gpu.c makes), for tests on a
 * machine without a GPU.
 */
#ifndef HUNTER_MOCK_CUDA_H
#define HUNTER_MOCK_CUDA_H

#include <stddef.h>

/* Bytes of "device" memory (0: unlimited); cudaMalloc past it fails with
 * cudaErrorMemoryAllocation. */
extern size_t	mock_cuda_capacity;
/* Bytes allocated now. */
extern size_t	mock_cuda_used;
/* Kernels run so far. */
extern long	mock_cuda_calls;

#endif
