/*
 * cuda-probe.h: what this build and this host have of CUDA, for the
 * worker (may a cuda rank start here?), the agent's hello and
 * `hunter --version`.  Plain C, no CUDA header: built with or without
 * CUDA (cuda-probe.c answers "built without CUDA" then).
 */
#ifndef HUNTER_CUDA_PROBE_H
#define HUNTER_CUDA_PROBE_H

#include <stdbool.h>
#include <stddef.h>

/* Whether this binary has the CUDA kernels and the nccl backend. */
bool		 cuda_built(void);
/*
 * The number of CUDA devices (> 0), or -1 with the reason in err:
 * "no CUDA device: cudaGetDeviceCount: <CUDA's error string>", "no CUDA
 * device: cudaGetDeviceCount found none", or "no CUDA device: hunter was
 * built without CUDA".
 */
int		 cuda_device_check(char *err, size_t errlen);
/* Make device idx the calling thread's current one: 0, or -1 with the
 * reason in err. */
int		 cuda_use_device(int idx, char *err, size_t errlen);
/* Versions for hello, "none" where not built: the CUDA runtime linked
 * ("13.0"), NCCL ("2.28.9"), and the driver (NVML's "570.86.15", else
 * the CUDA version the driver supports, "12.8"; "none" without one). */
const char	*cuda_runtime_version(void);
const char	*cuda_nccl_version(void);
const char	*cuda_driver_version(void);

#endif
