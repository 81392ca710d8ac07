/*
 * cuda-probe.c: the CUDA this build and this host have (cuda-probe.h).
 * With CUDA the answers come from the runtime, NCCL and NVML; without it
 * they say so, so callers need no #ifdef.  The version strings are worked
 * out once and kept.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#ifdef HAVE_CUDA
#include <cuda_runtime_api.h>
#include <nccl.h>
#endif

#include "lib/cuda-probe.h"
#include "lib/errf.h"
#include "lib/nvml.h"

bool
cuda_built(void)
{
#ifdef HAVE_CUDA
	return true;
#else
	return false;
#endif
}

int
cuda_device_check(char *err, size_t errlen)
{
#ifdef HAVE_CUDA
	cudaError_t	e;
	int		n = 0;

	if ((e = cudaGetDeviceCount(&n)) != cudaSuccess) {
		(void)cudaGetLastError();
		errf(err, errlen, "no CUDA device: cudaGetDeviceCount: %s",
		    cudaGetErrorString(e));
		return -1;
	}
	if (n <= 0) {
		errf(err, errlen, "no CUDA device: cudaGetDeviceCount "
		    "found none");
		return -1;
	}
	return n;
#else
	errf(err, errlen, "no CUDA device: hunter was built without CUDA");
	return -1;
#endif
}

int
cuda_use_device(int idx, char *err, size_t errlen)
{
#ifdef HAVE_CUDA
	cudaError_t	e;

	if ((e = cudaSetDevice(idx)) != cudaSuccess) {
		(void)cudaGetLastError();
		errf(err, errlen, "cudaSetDevice(%d): %s", idx,
		    cudaGetErrorString(e));
		return -1;
	}
	return 0;
#else
	(void)idx;
	errf(err, errlen, "no CUDA device: hunter was built without CUDA");
	return -1;
#endif
}

#ifdef HAVE_CUDA
/* "M.m" of a CUDA version number (1000 * major + 10 * minor). */
static void
cuda_dotted(char *buf, size_t len, int v)
{
	snprintf(buf, len, "%d.%d", v / 1000, v % 1000 / 10);
}
#endif

const char *
cuda_runtime_version(void)
{
#ifdef HAVE_CUDA
	static char	v[32];
	int		n = 0;

	if (v[0] == '\0') {
		if (cudaRuntimeGetVersion(&n) == cudaSuccess && n > 0)
			cuda_dotted(v, sizeof v, n);
		else
			snprintf(v, sizeof v, "unknown");
	}
	return v;
#else
	return "none";
#endif
}

const char *
cuda_nccl_version(void)
{
#ifdef HAVE_CUDA
	static char	v[32];
	int		n = 0;

	if (v[0] == '\0') {
		/* 2.9 on: major * 10000 + minor * 100 + patch. */
		if (ncclGetVersion(&n) == ncclSuccess && n >= 20900)
			snprintf(v, sizeof v, "%d.%d.%d", n / 10000,
			    n % 10000 / 100, n % 100);
		else if (n > 0)
			snprintf(v, sizeof v, "%d.%d.%d", n / 1000,
			    n % 1000 / 100, n % 100);
		else
			snprintf(v, sizeof v, "unknown");
	}
	return v;
#else
	return "none";
#endif
}

const char *
cuda_driver_version(void)
{
	static char	v[96];

	if (v[0] != '\0')
		return v;
	if (nvml_driver_version(v, sizeof v) == 0 && v[0] != '\0')
		return v;
#ifdef HAVE_CUDA
	{
		int	n = 0;

		if (cudaDriverGetVersion(&n) == cudaSuccess && n > 0) {
			char	d[32];

			cuda_dotted(d, sizeof d, n);
			snprintf(v, sizeof v, "cuda %s", d);
			return v;
		}
	}
#endif
	snprintf(v, sizeof v, "none");
	return v;
}
