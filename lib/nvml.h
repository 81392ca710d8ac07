/*
 * nvml.h: per-GPU metrics from NVML, loaded with dlopen("libnvidia-ml.so.1")
 * and declared by us (nvtop's way: NVIDIA's nvml.h need not be installed,
 * and a host without the driver simply has no GPUs).  Every value carries
 * a validity bit: what NVML cannot give is unknown, drawn as "-", never 0.
 * The metrics' names, units and JSON are the table in
 * backend/proto/metrics.h (lib knows no frame).
 *
 * What is sampled is DCGM-exporter's default set as far as NVML gives it,
 * plus throttle reasons, ECC counts, XID errors (NVML's event API) and
 * each GPU's compute processes with the memory they hold.
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
	GM_MEM_USED,		/* bytes of the frame buffer */
	GM_MEM_TOTAL,		/* bytes */
	GM_TEMP,		/* degrees C, the GPU die */
	GM_POWER,		/* watts */
	GM_SM_CLOCK,		/* MHz */
	GM_PCIE_RX,		/* bytes/s, as NVML samples it (20 ms) */
	GM_PCIE_TX,		/* bytes/s */
	GM_XID,			/* XID errors seen since NVML was loaded */
	GM_MEM_FREE,		/* bytes of the frame buffer */
	GM_MEM_UTIL,		/* percent of time memory was read or written */
	GM_ENC_UTIL,		/* percent, the video encoder */
	GM_DEC_UTIL,		/* percent, the video decoder */
	GM_MEM_CLOCK,		/* MHz */
	GM_MEM_TEMP,		/* degrees C, the memory (HBM) */
	GM_ENERGY,		/* joules since the driver loaded */
	GM_PCIE_REPLAYS,	/* PCIe replays since the driver loaded */
	GM_NVLINK_RX,		/* bytes/s of data, all links */
	GM_NVLINK_TX,		/* bytes/s */
	GM_REMAP_CORR,		/* rows remapped for correctable errors */
	GM_REMAP_UNCORR,	/* rows remapped for uncorrectable errors */
	GM_REMAP_PENDING,	/* 1 while a remapping waits for a reset */
	GM_REMAP_FAILED,	/* 1 once a remapping failed */
	GM_THROTTLE,		/* the clock event reasons, NVML's bit mask */
	GM_ECC_CORR,		/* corrected ECC errors since the driver loaded */
	GM_ECC_UNCORR,		/* uncorrected ECC errors */
	GM_XID_LAST,		/* the newest XID error's code */
	GM_COUNT
};

#define GPU_NAME_MAX	96
#define GPU_PROCS_MAX	8	/* a GPU's compute processes listed */

/* One process that holds memory on a GPU. */
struct gpu_proc {
	long		 pid;
	double		 mem;		/* bytes; < 0 unknown */
	long		 owner;		/* the pid of the rank it belongs to, 0
					 * if none (the caller fills it) */
};

struct gpu_sample {
	int		 index;			/* NVML device index */
	char		 name[GPU_NAME_MAX];	/* "" when unknown */
	double		 v[GM_COUNT];
	uint64_t	 valid;			/* bit i: v[i] is known */
	struct gpu_proc	 procs[GPU_PROCS_MAX];
	int		 nprocs;		/* -1: not known */
};

/* Whether metric m of a sample is known. */
static inline bool
gpu_sample_valid(const struct gpu_sample *gs, enum gpu_metric m)
{
	return (gs->valid >> m) & 1;
}

/* The throttle (clock event) reasons of NVML's mask, in order. */
#define GPU_THROTTLE_NAMES	{ "idle", "app-clock", "sw-power", \
	"hw-slowdown", "sync-boost", "sw-thermal", "hw-thermal", \
	"hw-power-brake", "display-clock" }

/*
 * Sample up to max GPUs into out; the number sampled, 0 when NVML is
 * absent (no driver: the normal case on a CPU node) or has no devices.
 * The first call loads NVML; an absence is remembered, not retried.
 * $HUNTER_NVML_LIBRARY, when set, is loaded instead (the tests' double,
 * tests/unit/fake-nvml.c).  Rates (NVLink) are against the last call,
 * so the first has them unknown.
 */
int		 nvml_sample(struct gpu_sample *out, int max);

/* An XID error NVML reported. */
struct nvml_xid {
	int		 index;			/* the device */
	unsigned long long xid;
};

/* The XID errors reported since the last call (NVML's event set, waited
 * on for 0 ms), up to max; how many.  They are counted into GM_XID.
 * 0 without NVML or without its event API (GM_XID is then unknown). */
int		 nvml_xids(struct nvml_xid *out, int max);
/* Why NVML is absent ("libnvidia-ml.so.1: cannot open shared object
 * file..."), or NULL while it is loaded or not yet tried. */
const char	*nvml_absent_reason(void);
/* The driver's version ("570.86.15") into buf, 0; or -1 without NVML. */
int		 nvml_driver_version(char *buf, size_t len);
/* nvmlShutdown and dlclose; a later nvml_sample loads it again. */
void		 nvml_close(void);

#endif
