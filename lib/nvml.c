/*
 * nvml.c: GPU metrics through NVML, dlopen'd, with our own declarations of
 * the calls and types used (nvml-internal.h).  Each metric is its own
 * call; one that fails leaves only its bit clear.  The calls NVML has
 * had for a decade are required; the newer ones are looked up too, and a
 * driver without one has those metrics unknown.  XID errors and the
 * processes are nvml-events.c's.
 *
 * Units: NVML gives power in mW, PCIe in KB/s, energy in mJ and NVLink
 * in KiB (a counter, turned into a rate against the last sample); the
 * sample holds watts, bytes/s, joules and bytes/s.
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

#include "lib/clock.h"
#include "lib/nvml-internal.h"

#define NVML_LIBRARY	"libnvidia-ml.so.1"

struct nvml_lib	nv;

/* Each symbol, where it goes, its name in the library, and whether NVML
 * is usable without it. */
static const struct {
	size_t		 off;
	const char	*sym;
	bool		 optional;
} nv_syms[] = {
	{ offsetof(struct nvml_lib, init), "nvmlInit_v2", false },
	{ offsetof(struct nvml_lib, shutdown), "nvmlShutdown", false },
	{ offsetof(struct nvml_lib, count), "nvmlDeviceGetCount_v2", false },
	{ offsetof(struct nvml_lib, handle), "nvmlDeviceGetHandleByIndex_v2",
	    false },
	{ offsetof(struct nvml_lib, name), "nvmlDeviceGetName", false },
	{ offsetof(struct nvml_lib, util), "nvmlDeviceGetUtilizationRates",
	    false },
	{ offsetof(struct nvml_lib, memory), "nvmlDeviceGetMemoryInfo", false },
	{ offsetof(struct nvml_lib, temperature), "nvmlDeviceGetTemperature",
	    false },
	{ offsetof(struct nvml_lib, power), "nvmlDeviceGetPowerUsage", false },
	{ offsetof(struct nvml_lib, clock), "nvmlDeviceGetClockInfo", false },
	{ offsetof(struct nvml_lib, pcie), "nvmlDeviceGetPcieThroughput",
	    false },
	{ offsetof(struct nvml_lib, driver), "nvmlSystemGetDriverVersion",
	    false },
	{ offsetof(struct nvml_lib, error), "nvmlErrorString", false },
	{ offsetof(struct nvml_lib, encoder), "nvmlDeviceGetEncoderUtilization",
	    true },
	{ offsetof(struct nvml_lib, decoder), "nvmlDeviceGetDecoderUtilization",
	    true },
	{ offsetof(struct nvml_lib, energy),
	    "nvmlDeviceGetTotalEnergyConsumption", true },
	{ offsetof(struct nvml_lib, replays), "nvmlDeviceGetPcieReplayCounter",
	    true },
	{ offsetof(struct nvml_lib, throttle),
	    "nvmlDeviceGetCurrentClocksEventReasons", true },
	{ offsetof(struct nvml_lib, throttle_old),
	    "nvmlDeviceGetCurrentClocksThrottleReasons", true },
	{ offsetof(struct nvml_lib, ecc), "nvmlDeviceGetTotalEccErrors", true },
	{ offsetof(struct nvml_lib, remapped), "nvmlDeviceGetRemappedRows",
	    true },
	{ offsetof(struct nvml_lib, fields), "nvmlDeviceGetFieldValues", true },
	{ offsetof(struct nvml_lib, procs),
	    "nvmlDeviceGetComputeRunningProcesses_v3", true },
	{ offsetof(struct nvml_lib, procs_old),
	    "nvmlDeviceGetComputeRunningProcesses_v2", true },
	{ offsetof(struct nvml_lib, set_create), "nvmlEventSetCreate", true },
	{ offsetof(struct nvml_lib, set_free), "nvmlEventSetFree", true },
	{ offsetof(struct nvml_lib, register_events),
	    "nvmlDeviceRegisterEvents", true },
	{ offsetof(struct nvml_lib, wait), "nvmlEventSetWait_v2", true },
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

int
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

		if (f == NULL && !nv_syms[i].optional)
			return nvml_give_up("%s: no %s", path, nv_syms[i].sym);
		memcpy((char *)&nv + nv_syms[i].off, &f, sizeof f);
	}
	if (nv.throttle == NULL)
		nv.throttle = nv.throttle_old;
	if (nv.procs == NULL)
		nv.procs = nv.procs_old;
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
	gs->valid |= UINT64_C(1) << m;
}

/* The counters NVML keeps since the driver loaded, and the clock event
 * reasons. */
static void
nvml_counters(nv_device d, struct gpu_sample *gs)
{
	unsigned long long ull;
	unsigned int	 x, corr, unc, pending, failed;

	if (nv.energy != NULL && nv.energy(d, &ull) == 0)	/* mJ */
		gpu_set(gs, GM_ENERGY, ull / 1000.0);
	if (nv.replays != NULL && nv.replays(d, &x) == 0)
		gpu_set(gs, GM_PCIE_REPLAYS, x);
	if (nv.throttle != NULL && nv.throttle(d, &ull) == 0)
		gpu_set(gs, GM_THROTTLE, (double)ull);
	if (nv.ecc != NULL && nv.ecc(d, NV_ECC_CORRECTED, NV_ECC_VOLATILE,
	    &ull) == 0)
		gpu_set(gs, GM_ECC_CORR, (double)ull);
	if (nv.ecc != NULL && nv.ecc(d, NV_ECC_UNCORRECTED, NV_ECC_VOLATILE,
	    &ull) == 0)
		gpu_set(gs, GM_ECC_UNCORR, (double)ull);
	if (nv.remapped != NULL && nv.remapped(d, &corr, &unc, &pending,
	    &failed) == 0) {
		gpu_set(gs, GM_REMAP_CORR, corr);
		gpu_set(gs, GM_REMAP_UNCORR, unc);
		gpu_set(gs, GM_REMAP_PENDING, pending != 0);
		gpu_set(gs, GM_REMAP_FAILED, failed != 0);
	}
}

/* What only the field values give: the memory's temperature and the
 * NVLink data counters (KiB, summed over links), as rates against the
 * last sample of device i. */
static void
nvml_fields(nv_device d, unsigned int i, struct gpu_sample *gs)
{
	struct nv_field	 f[3];
	double		 now = clock_mono(), dt;

	if (nv.fields == NULL)
		return;
	memset(f, 0, sizeof f);
	f[0].id = NV_FI_MEMORY_TEMP;
	f[1].id = NV_FI_NVLINK_DATA_RX;
	f[1].scope = NV_SCOPE_ALL_LINKS;
	f[2].id = NV_FI_NVLINK_DATA_TX;
	f[2].scope = NV_SCOPE_ALL_LINKS;
	if (nv.fields(d, 3, f) != 0)
		return;
	if (f[0].ret == 0)
		gpu_set(gs, GM_MEM_TEMP, f[0].type == NV_VALUE_ULL ?
		    (double)f[0].value.ull : f[0].value.ui);
	if (f[1].ret != 0 || f[2].ret != 0 || i >= NV_DEVICES) {
		if (i < NV_DEVICES)
			nv.dev[i].link_t = 0;
		return;
	}
	dt = now - nv.dev[i].link_t;
	if (nv.dev[i].link_t > 0 && dt > 0 && f[1].value.ull >=
	    nv.dev[i].link_rx && f[2].value.ull >= nv.dev[i].link_tx) {
		gpu_set(gs, GM_NVLINK_RX, (f[1].value.ull - nv.dev[i].link_rx) *
		    1024.0 / dt);
		gpu_set(gs, GM_NVLINK_TX, (f[2].value.ull - nv.dev[i].link_tx) *
		    1024.0 / dt);
	}
	nv.dev[i].link_rx = f[1].value.ull;
	nv.dev[i].link_tx = f[2].value.ull;
	nv.dev[i].link_t = now;
}

/* Every metric of device i that NVML gives. */
static void
nvml_one(struct gpu_sample *gs, unsigned int i)
{
	nv_device		d;
	struct nv_utilization	u;
	struct nv_memory	m;
	unsigned int		x, period;

	memset(gs, 0, sizeof *gs);
	gs->index = (int)i;
	gs->nprocs = -1;
	if (nv.handle(i, &d) != 0)
		return;
	if (nv.name(d, gs->name, sizeof gs->name) != 0)
		gs->name[0] = '\0';
	gs->name[sizeof gs->name - 1] = '\0';
	if (nv.util(d, &u) == 0) {
		gpu_set(gs, GM_UTIL, u.gpu);
		gpu_set(gs, GM_MEM_UTIL, u.memory);
	}
	if (nv.memory(d, &m) == 0) {
		gpu_set(gs, GM_MEM_USED, (double)m.used);
		gpu_set(gs, GM_MEM_FREE, (double)m.free);
		gpu_set(gs, GM_MEM_TOTAL, (double)m.total);
	}
	if (nv.encoder != NULL && nv.encoder(d, &x, &period) == 0)
		gpu_set(gs, GM_ENC_UTIL, x);
	if (nv.decoder != NULL && nv.decoder(d, &x, &period) == 0)
		gpu_set(gs, GM_DEC_UTIL, x);
	if (nv.temperature(d, NV_TEMPERATURE_GPU, &x) == 0)
		gpu_set(gs, GM_TEMP, x);
	if (nv.power(d, &x) == 0)			/* milliwatts */
		gpu_set(gs, GM_POWER, x / 1000.0);
	if (nv.clock(d, NV_CLOCK_SM, &x) == 0)		/* MHz */
		gpu_set(gs, GM_SM_CLOCK, x);
	if (nv.clock(d, NV_CLOCK_MEM, &x) == 0)
		gpu_set(gs, GM_MEM_CLOCK, x);
	if (nv.pcie(d, NV_PCIE_RX_BYTES, &x) == 0)	/* KB/s */
		gpu_set(gs, GM_PCIE_RX, x * 1024.0);
	if (nv.pcie(d, NV_PCIE_TX_BYTES, &x) == 0)
		gpu_set(gs, GM_PCIE_TX, x * 1024.0);
	nvml_counters(d, gs);
	nvml_fields(d, i, gs);
	if (i < NV_DEVICES && nv.dev[i].xid_known) {
		gpu_set(gs, GM_XID, (double)nv.dev[i].xids);
		if (nv.dev[i].xids > 0)
			gpu_set(gs, GM_XID_LAST, (double)nv.dev[i].xid_last);
	}
	nvml_processes(d, gs);
}

int
nvml_sample(struct gpu_sample *out, int max)
{
	unsigned int	n;

	if (max <= 0 || !nvml_load())
		return 0;
	if (nv.count(&n) != 0)
		return 0;
	nv.ndev = n;
	nvml_events_open();
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
		if (nv.events != NULL && nv.set_free != NULL)
			nv.set_free(nv.events);
		nv.shutdown();
		dlclose(nv.lib);
	}
	memset(&nv, 0, sizeof nv);
}
