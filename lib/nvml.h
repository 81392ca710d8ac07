/*
 * nvml.h: per-GPU metrics from NVML, loaded with dlopen("libnvidia-ml.so.1")
 * and declared by us (nvtop's way: NVIDIA's nvml.h need not be installed,
 * and a host without the driver simply has no GPUs).  Every value carries
 * a validity bit: what NVML cannot give is unknown, drawn as "-", never 0.
 * The metrics' names, units and JSON are the table in
 * backend/proto/metrics.h (lib knows no frame).
 *
 * Not thread-safe: the agent samples from its one loop.
 */
#ifndef HUNTER_NVML_H
#define HUNTER_NVML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum gpu_metric {
	GM_UTIL,		/* percent of time a kernel ran */
	GM_MEM_USED,		/* bytes */
	GM_MEM_TOTAL,		/* bytes */
	GM_TEMP,		/* degrees C, the GPU die */
	GM_POWER,		/* watts */
	GM_SM_CLOCK,		/* MHz */
	GM_PCIE_RX,		/* bytes/s, as NVML samples it (20 ms) */
	GM_PCIE_TX,		/* bytes/s */
	GM_XID,			/* XID errors seen; always unknown for now */
	GM_COUNT
};

#define GPU_NAME_MAX	96

struct gpu_sample {
	int		 index;			/* NVML device index */
	char		 name[GPU_NAME_MAX];	/* "" when unknown */
	double		 v[GM_COUNT];
	uint32_t	 valid;			/* bit i: v[i] is known */
};

/* Whether metric m of a sample is known. */
static inline bool
gpu_sample_valid(const struct gpu_sample *gs, enum gpu_metric m)
{
	return (gs->valid >> m) & 1;
}

/*
 * Sample up to max GPUs into out; the number sampled, 0 when NVML is
 * absent (no driver: the normal case on a CPU node) or has no devices.
 * The first call loads NVML; an absence is remembered, not retried.
 * $HUNTER_NVML_LIBRARY, when set, is loaded instead (tests).
 */
int		 nvml_sample(struct gpu_sample *out, int max);
/* Why NVML is absent ("libnvidia-ml.so.1: cannot open shared object
 * file..."), or NULL while it is loaded or not yet tried. */
const char	*nvml_absent_reason(void);
/* The driver's version ("570.86.15") into buf, 0; or -1 without NVML. */
int		 nvml_driver_version(char *buf, size_t len);
/* nvmlShutdown and dlclose; a later nvml_sample loads it again. */
void		 nvml_close(void);

#endif
