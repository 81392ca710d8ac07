/*
 * check.cu: errors as values for kernels/cuda.  cuda_fail keeps the
 * message of a failed call, with the file (from its kernels/, backend/, tests/ or
 * bench/ on, so out of tree builds read the same) and the line, for cuda_last_error; each
 * thread has its own, as each thread has its own cuBLAS handle (linear.cu).
 */
#include <stdio.h>
#include <string.h>

#include "kernels/cuda/cuda-kernels.h"

static thread_local char	cuda_errbuf[512] = "no CUDA error";

const char *
cuda_last_error(void)
{
	return cuda_errbuf;
}

int
cuda_fail(const char *file, int line, const char *what, const char *why)
{
	static const char *const	roots[] = { "kernels/", "backend/",
					    "tests/", "bench/" };
	const char			*p = NULL;

	for (size_t i = 0; p == NULL && i < sizeof roots / sizeof *roots; i++)
		p = strstr(file, roots[i]);
	if (p == NULL)
		p = file;
	snprintf(cuda_errbuf, sizeof cuda_errbuf, "%s:%d: %s: %s", p, line,
	    what, why != NULL ? why : "unknown error");
	return -1;
}
