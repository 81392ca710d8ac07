/*
 * nvml.c: GPU metrics through NVML, dlopen'd, with our own declarations of
 * the few calls and types used (their layouts are NVML's public ABI, the
 * same nvtop declares).  Each metric is its own call; one that fails
 * leaves only its bit clear.  XID errors need NVML's event API (an event
 * set registered per device and polled), which is left for later: the
 * count is reported unknown.
 *
 * Costs: nvmlDeviceGetPcieThroughput samples the link for 20 ms per
 * counter, so one sample takes about 40 ms per GPU; the rest are reads of
 * values the driver keeps.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/nvml.h"

#define NVML_LIBRARY	"libnvidia-ml.so.1"

/* NVML's ABI, declared here (nvml.h is not installed; its names are not
 * reused, so that the real header could be included beside this). */
typedef int			 nv_ret;	/* nvmlReturn_t, 0 = success */
typedef struct nv_device	*nv_device;	/* nvmlDevice_t */

struct nv_utilization {				/* nvmlUtilization_t */
	unsigned int	gpu, memory;
};

struct nv_memory {				/* nvmlMemory_t (v1) */
	unsigned long long total, free, used;
};

#define NV_TEMPERATURE_GPU	0		/* nvmlTemperatureSensors_t */
#define NV_CLOCK_SM		1		/* nvmlClockType_t */
#define NV_PCIE_TX_BYTES	0		/* nvmlPcieUtilCounter_t */
#define NV_PCIE_RX_BYTES	1
#define NV_NAME_LEN		96		/* NVML_DEVICE_NAME_V2_BUFFER_SIZE */
#define NV_DRIVER_LEN		80		/* NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE */

struct nvml_lib {
	void		*lib;
	int		 tried;
	char		 absent[256];
	nv_ret		(*init)(void);
	nv_ret		(*shutdown)(void);
	nv_ret		(*count)(unsigned int *);
	nv_ret		(*handle)(unsigned int, nv_device *);
	nv_ret		(*name)(nv_device, char *, unsigned int);
	nv_ret		(*util)(nv_device, struct nv_utilization *);
	nv_ret		(*memory)(nv_device, struct nv_memory *);
	nv_ret		(*temperature)(nv_device, int, unsigned int *);
	nv_ret		(*power)(nv_device, unsigned int *);
	nv_ret		(*clock)(nv_device, int, unsigned int *);
	nv_ret		(*pcie)(nv_device, int, unsigned int *);
	nv_ret		(*driver)(char *, unsigned int);
	const char	*(*error)(nv_ret);
};

static struct nvml_lib	nv;

/* Each symbol, where it goes, and its name in the library. */
static const struct {
	size_t		 off;
	const char	*sym;
} nv_syms[] = {
	{ offsetof(struct nvml_lib, init), "nvmlInit_v2" },
	{ offsetof(struct nvml_lib, shutdown), "nvmlShutdown" },
	{ offsetof(struct nvml_lib, count), "nvmlDeviceGetCount_v2" },
	{ offsetof(struct nvml_lib, handle), "nvmlDeviceGetHandleByIndex_v2" },
	{ offsetof(struct nvml_lib, name), "nvmlDeviceGetName" },
	{ offsetof(struct nvml_lib, util), "nvmlDeviceGetUtilizationRates" },
	{ offsetof(struct nvml_lib, memory), "nvmlDeviceGetMemoryInfo" },
	{ offsetof(struct nvml_lib, temperature), "nvmlDeviceGetTemperature" },
	{ offsetof(struct nvml_lib, power), "nvmlDeviceGetPowerUsage" },
	{ offsetof(struct nvml_lib, clock), "nvmlDeviceGetClockInfo" },
	{ offsetof(struct nvml_lib, pcie), "nvmlDeviceGetPcieThroughput" },
	{ offsetof(struct nvml_lib, driver), "nvmlSystemGetDriverVersion" },
	{ offsetof(struct nvml_lib, error), "nvmlErrorString" },
};

/* Forget the library, keeping why in nv.absent; returns 0 GPUs. */
static int
nvml_give_up(const char *fmt, const char *a, const char *b)
{
	char	why[256];

	snprintf(why, sizeof why, fmt, a, b);
	if (nv.lib != NULL)
		dlclose(nv.lib);
	memset(&nv, 0, sizeof nv);
	nv.tried = 1;
	snprintf(nv.absent, sizeof nv.absent, "%s", why);
	return 0;
}

/* Load and initialise NVML once; 1 when it is there. */
static int
nvml_load(void)
{
	const char	*path = getenv("HUNTER_NVML_LIBRARY");
	const char	*e;
	nv_ret		 r;

	if (nv.lib != NULL)
		return 1;
	if (nv.tried)
		return 0;
	if (path == NULL || *path == '\0')
		path = NVML_LIBRARY;
	if ((nv.lib = dlopen(path, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		e = dlerror();
		return nvml_give_up("%s%s", e != NULL ? e : path, "");
	}
	for (size_t i = 0; i < sizeof nv_syms / sizeof nv_syms[0]; i++) {
		void	*f = dlsym(nv.lib, nv_syms[i].sym);

		if (f == NULL)
			return nvml_give_up("%s: no %s", path, nv_syms[i].sym);
		memcpy((char *)&nv + nv_syms[i].off, &f, sizeof f);
	}
	if ((r = nv.init()) != 0) {
		char	code[32];

		snprintf(code, sizeof code, "%d", r);
		return nvml_give_up("nvmlInit_v2: %s%s", nv.error(r) != NULL ?
		    nv.error(r) : code, "");
	}
	nv.tried = 1;
	return 1;
}

const char *
nvml_absent_reason(void)
{
	return nv.lib == NULL && nv.tried ? nv.absent : NULL;
}

static void
gpu_set(struct gpu_sample *gs, enum gpu_metric m, double v)
{
	gs->v[m] = v;
	gs->valid |= 1u << m;
}

/* Every metric of device i that NVML gives. */
static void
nvml_one(struct gpu_sample *gs, unsigned int i)
{
	nv_device		d;
	struct nv_utilization	u;
	struct nv_memory	m;
	unsigned int		x;

	memset(gs, 0, sizeof *gs);
	gs->index = (int)i;
	if (nv.handle(i, &d) != 0)
		return;
	if (nv.name(d, gs->name, sizeof gs->name) != 0)
		gs->name[0] = '\0';
	gs->name[sizeof gs->name - 1] = '\0';
	if (nv.util(d, &u) == 0)
		gpu_set(gs, GM_UTIL, u.gpu);
	if (nv.memory(d, &m) == 0) {
		gpu_set(gs, GM_MEM_USED, (double)m.used);
		gpu_set(gs, GM_MEM_TOTAL, (double)m.total);
	}
	if (nv.temperature(d, NV_TEMPERATURE_GPU, &x) == 0)
		gpu_set(gs, GM_TEMP, x);
	if (nv.power(d, &x) == 0)			/* milliwatts */
		gpu_set(gs, GM_POWER, x / 1000.0);
	if (nv.clock(d, NV_CLOCK_SM, &x) == 0)		/* MHz */
		gpu_set(gs, GM_SM_CLOCK, x);
	if (nv.pcie(d, NV_PCIE_RX_BYTES, &x) == 0)	/* KB/s */
		gpu_set(gs, GM_PCIE_RX, x * 1024.0);
	if (nv.pcie(d, NV_PCIE_TX_BYTES, &x) == 0)
		gpu_set(gs, GM_PCIE_TX, x * 1024.0);
}

int
nvml_sample(struct gpu_sample *out, int max)
{
	unsigned int	n;

	if (max <= 0 || !nvml_load())
		return 0;
	if (nv.count(&n) != 0)
		return 0;
	if (n > (unsigned int)max)
		n = (unsigned int)max;
	for (unsigned int i = 0; i < n; i++)
		nvml_one(&out[i], i);
	return (int)n;
}

int
nvml_driver_version(char *buf, size_t len)
{
	char	v[NV_DRIVER_LEN];

	if (!nvml_load() || nv.driver(v, sizeof v) != 0)
		return -1;
	v[sizeof v - 1] = '\0';
	snprintf(buf, len, "%s", v);
	return 0;
}

void
nvml_close(void)
{
	if (nv.lib != NULL) {
		nv.shutdown();
		dlclose(nv.lib);
	}
	memset(&nv, 0, sizeof nv);
}
