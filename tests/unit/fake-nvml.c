/*
 * fake-nvml.c: A TEST DOUBLE of libnvidia-ml.so.1, not NVIDIA's library.
 * Built as a shared object by the tests and loaded by lib/nvml.c through
 * the same dlopen path as the real one, named by $HUNTER_NVML_LIBRARY
 * (hunter(1), ENVIRONMENT).  It returns scripted values and errors, so
 * that every GPU field, its unit conversion, its validity bit and its
 * display can be checked on a machine without a GPU.
 *
 * Without a script: two devices; device 0 answers everything with the
 * values of fake_defaults below, device 1 only its name, utilisation,
 * memory and clocks (NVML_ERROR_NOT_SUPPORTED for the rest), so its bits
 * must come out clear.  $FAKE_NVML_INIT_FAIL makes nvmlInit_v2 fail.
 *
 * $FAKE_NVML_SCRIPT names a file, read again whenever it changes, whose
 * lines replace the defaults (the values are NVML's raw units):
 *	devices N			how many devices there are
 *	D name TEXT			device D's name
 *	D FIELD VALUE			a field (fake_fields[]) of device D
 *	D FIELD NOT_SUPPORTED		its call fails: NVML_ERROR_NOT_SUPPORTED
 *	D FIELD ERR CODE		its call fails with CODE
 *	D proc PID BYTES		a compute process and its memory
 *	xid D CODE			an XID error, raised once, in order
 * A device's nvlink_rx and nvlink_tx are KiB/s: the double's counters
 * grow at that rate on its own monotonic clock.  A script that names a
 * device clears the defaults of that device.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define NOT_SUPPORTED	3
#define UNINITIALIZED	1
#define INVALID_ARG	2
#define INSUFFICIENT	7
#define TIMEOUT		10
#define DEVS		8
#define PROCS		16
#define XIDS		64

struct fake_util { unsigned int gpu, memory; };
struct fake_mem { unsigned long long total, free, used; };
struct fake_proc { unsigned int pid; unsigned long long mem;
	unsigned int gi, ci; };
struct fake_event { void *dev; unsigned long long type, data;
	unsigned int gi, ci; };
struct fake_field { unsigned int id, scope; long long ts, lat; int type;
	int ret; unsigned long long v; };

enum fake_f { F_UTIL, F_MEM_UTIL, F_FB_TOTAL, F_FB_USED, F_FB_FREE, F_ENC,
	F_DEC, F_TEMP, F_MEM_TEMP, F_POWER, F_SM_CLOCK, F_MEM_CLOCK, F_PCIE_RX,
	F_PCIE_TX, F_ENERGY, F_REPLAYS, F_THROTTLE, F_ECC_CORR, F_ECC_UNCORR,
	F_REMAP_CORR, F_REMAP_UNCORR, F_REMAP_PENDING, F_REMAP_FAILED,
	F_NVLINK_RX, F_NVLINK_TX, F_PROCS, F_COUNT };

static const char *const fake_fields[F_COUNT] = { "util", "mem_util",
	"fb_total", "fb_used", "fb_free", "enc", "dec", "temp", "mem_temp",
	"power", "sm_clock", "mem_clock", "pcie_rx", "pcie_tx", "energy",
	"replays", "throttle", "ecc_corr", "ecc_uncorr", "remap_corr",
	"remap_uncorr", "remap_pending", "remap_failed", "nvlink_rx",
	"nvlink_tx", "procs" };

/* Device 0's answers without a script (NVML's units: mW, KB/s, mJ). */
static const unsigned long long fake_defaults[F_COUNT] = { 93, 40,
	150ull << 30, 80ull << 30, 70ull << 30, 3, 1, 61, 70, 612345, 1980,
	2619, 2000, 1000, 123456789, 2, 0x4, 5, 0, 1, 0, 0, 0, 2048, 1024, 0 };

struct fake_val {
	int			 err;	/* 0: answers v */
	unsigned long long	 v;
};

struct fake_dev {
	char		 name[96];
	struct fake_val	 f[F_COUNT];
	struct fake_proc procs[PROCS];
	int		 nprocs;
};

static struct {
	int		 up, ndev;
	struct fake_dev	 dev[DEVS];
	int		 xid_dev[XIDS];
	unsigned long long xid_code[XIDS];
	int		 nxid, xid_sent;	/* xid_sent survives re-reads */
	time_t		 mtime;
	off_t		 size;
	int		 loaded;
	double		 t0;
	int		 registered[DEVS];
} fk;

int nvmlInit_v2(void);
int nvmlShutdown(void);
int nvmlDeviceGetCount_v2(unsigned int *);
int nvmlDeviceGetHandleByIndex_v2(unsigned int, void **);
int nvmlDeviceGetName(void *, char *, unsigned int);
int nvmlDeviceGetUtilizationRates(void *, struct fake_util *);
int nvmlDeviceGetMemoryInfo(void *, struct fake_mem *);
int nvmlDeviceGetTemperature(void *, int, unsigned int *);
int nvmlDeviceGetPowerUsage(void *, unsigned int *);
int nvmlDeviceGetClockInfo(void *, int, unsigned int *);
int nvmlDeviceGetPcieThroughput(void *, int, unsigned int *);
int nvmlSystemGetDriverVersion(char *, unsigned int);
const char *nvmlErrorString(int);
int nvmlDeviceGetEncoderUtilization(void *, unsigned int *, unsigned int *);
int nvmlDeviceGetDecoderUtilization(void *, unsigned int *, unsigned int *);
int nvmlDeviceGetTotalEnergyConsumption(void *, unsigned long long *);
int nvmlDeviceGetPcieReplayCounter(void *, unsigned int *);
int nvmlDeviceGetCurrentClocksEventReasons(void *, unsigned long long *);
int nvmlDeviceGetTotalEccErrors(void *, int, int, unsigned long long *);
int nvmlDeviceGetRemappedRows(void *, unsigned int *, unsigned int *,
    unsigned int *, unsigned int *);
int nvmlDeviceGetFieldValues(void *, int, struct fake_field *);
int nvmlDeviceGetComputeRunningProcesses_v3(void *, unsigned int *,
    struct fake_proc *);
int nvmlEventSetCreate(void **);
int nvmlEventSetFree(void *);
int nvmlDeviceRegisterEvents(void *, unsigned long long, void *);
int nvmlEventSetWait_v2(void *, struct fake_event *, unsigned int);

static double
fake_clock(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
fake_reset(void)
{
	memset(fk.dev, 0, sizeof fk.dev);
	fk.ndev = 2;
	fk.nxid = 0;
	for (int d = 0; d < 2; d++) {
		snprintf(fk.dev[d].name, sizeof fk.dev[d].name, "Fake GPU %d", d);
		for (int f = 0; f < F_COUNT; f++)
			fk.dev[d].f[f] = (struct fake_val){ 0, fake_defaults[f] };
	}
	fk.dev[0].nprocs = 1;
	fk.dev[0].procs[0] = (struct fake_proc){ 4242, 1ull << 30, 0, 0 };
	/* Device 1: only what every GPU has. */
	for (int f = F_ENC; f < F_COUNT; f++) {
		if (f != F_SM_CLOCK && f != F_MEM_CLOCK)
			fk.dev[1].f[f].err = NOT_SUPPORTED;
	}
	fk.dev[1].f[F_UTIL].v = 0;
	fk.dev[1].f[F_FB_USED].v = 1ull << 20;
	fk.dev[1].f[F_FB_FREE].v = (150ull << 30) - (1ull << 20);
}

/* One line of the script. */
static void
fake_line(char *line, int *named)
{
	char		*w[4], *save = NULL, *rest;
	int		 n = 0, d;

	line[strcspn(line, "\n#")] = '\0';
	while (n < 3 && (w[n] = strtok_r(n == 0 ? line : NULL, " \t",
	    &save)) != NULL)
		n++;
	rest = save != NULL ? save + strspn(save, " \t") : NULL;
	if (n >= 2 && strcmp(w[0], "devices") == 0) {
		fk.ndev = atoi(w[1]);
		fk.ndev = fk.ndev < 0 ? 0 : fk.ndev > DEVS ? DEVS : fk.ndev;
		return;
	}
	if (n == 3 && strcmp(w[0], "xid") == 0 && fk.nxid < XIDS) {
		fk.xid_dev[fk.nxid] = atoi(w[1]);
		fk.xid_code[fk.nxid++] = strtoull(w[2], NULL, 10);
		return;
	}
	if (n < 2 || (d = atoi(w[0])) < 0 || d >= DEVS)
		return;
	if (!named[d]) {	/* a scripted device starts empty */
		named[d] = 1;
		memset(&fk.dev[d], 0, sizeof fk.dev[d]);
		for (int f = 0; f < F_COUNT; f++)
			fk.dev[d].f[f].err = NOT_SUPPORTED;
		fk.dev[d].f[F_PROCS].err = 0;
	}
	if (strcmp(w[1], "name") == 0 && n == 3) {
		snprintf(fk.dev[d].name, sizeof fk.dev[d].name, "%s%s%s", w[2],
		    rest != NULL && *rest ? " " : "", rest != NULL ? rest : "");
		return;
	}
	if (strcmp(w[1], "proc") == 0 && n == 3 && fk.dev[d].nprocs < PROCS &&
	    rest != NULL) {
		fk.dev[d].procs[fk.dev[d].nprocs++] = (struct fake_proc){
		    (unsigned int)atoi(w[2]), strtoull(rest, NULL, 10), 0, 0 };
		return;
	}
	for (int f = 0; n == 3 && f < F_COUNT; f++) {
		if (strcmp(w[1], fake_fields[f]) != 0)
			continue;
		if (strcmp(w[2], "NOT_SUPPORTED") == 0)
			fk.dev[d].f[f] = (struct fake_val){ NOT_SUPPORTED, 0 };
		else if (strcmp(w[2], "ERR") == 0)
			fk.dev[d].f[f] = (struct fake_val){ rest ? atoi(rest) :
			    999, 0 };
		else
			fk.dev[d].f[f] = (struct fake_val){ 0,
			    strtoull(w[2], NULL, 0) };
	}
}

/* Read the script again if it changed (or the defaults, without one). */
static void
fake_load(void)
{
	const char	*path = getenv("FAKE_NVML_SCRIPT");
	struct stat	 st;
	char		 line[512];
	int		 named[DEVS] = { 0 };
	FILE		*f;

	if (path == NULL || stat(path, &st) != 0) {
		if (!fk.loaded)
			fake_reset();
		fk.loaded = 1;
		return;
	}
	if (fk.loaded && st.st_mtime == fk.mtime && st.st_size == fk.size)
		return;
	if ((f = fopen(path, "r")) == NULL)
		return;
	fake_reset();
	while (fgets(line, sizeof line, f) != NULL)
		fake_line(line, named);
	fclose(f);
	fk.mtime = st.st_mtime;
	fk.size = st.st_size;
	fk.loaded = 1;
}

/* Handles are 1 + index, never dereferenced. */
static struct fake_dev *
fake_dev(void *d)
{
	long	 i = (long)(size_t)d - 1;

	return i >= 0 && i < fk.ndev ? &fk.dev[i] : NULL;
}

/* Field f of device d into *out (truncated to its type by the caller);
 * NVML's answer. */
static int
fake_get(void *d, enum fake_f f, unsigned long long *out)
{
	struct fake_dev	*fd = fake_dev(d);

	if (!fk.up)
		return UNINITIALIZED;
	if (fd == NULL)
		return INVALID_ARG;
	if (fd->f[f].err != 0)
		return fd->f[f].err;
	*out = fd->f[f].v;
	return 0;
}

#define FAKE_UINT(d, f, p) do {						\
	unsigned long long v_;						\
	int r_ = fake_get(d, f, &v_);					\
	if (r_ != 0)							\
		return r_;						\
	*(p) = (unsigned int)v_;					\
} while (0)

int
nvmlInit_v2(void)
{
	if (getenv("FAKE_NVML_INIT_FAIL") != NULL)
		return 9;	/* NVML_ERROR_DRIVER_NOT_LOADED */
	fk.loaded = 0;
	fake_load();
	fk.up = 1;
	fk.t0 = fake_clock();
	return 0;
}

int
nvmlShutdown(void)
{
	fk.up = 0;
	return 0;
}

int
nvmlDeviceGetCount_v2(unsigned int *n)
{
	if (!fk.up)
		return UNINITIALIZED;
	fake_load();
	*n = (unsigned int)fk.ndev;
	return 0;
}

int
nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **d)
{
	if (i >= (unsigned int)fk.ndev)
		return INVALID_ARG;
	*d = (void *)(size_t)(i + 1);
	return 0;
}

int
nvmlDeviceGetName(void *d, char *name, unsigned int len)
{
	if (fake_dev(d) == NULL)
		return INVALID_ARG;
	snprintf(name, len, "%s", fake_dev(d)->name);
	return 0;
}

int
nvmlDeviceGetUtilizationRates(void *d, struct fake_util *u)
{
	FAKE_UINT(d, F_UTIL, &u->gpu);
	FAKE_UINT(d, F_MEM_UTIL, &u->memory);
	return 0;
}

int
nvmlDeviceGetMemoryInfo(void *d, struct fake_mem *m)
{
	int	 r;

	if ((r = fake_get(d, F_FB_TOTAL, &m->total)) != 0 ||
	    (r = fake_get(d, F_FB_USED, &m->used)) != 0 ||
	    (r = fake_get(d, F_FB_FREE, &m->free)) != 0)
		return r;
	return 0;
}

int
nvmlDeviceGetTemperature(void *d, int sensor, unsigned int *t)
{
	if (sensor != 0)
		return INVALID_ARG;
	FAKE_UINT(d, F_TEMP, t);
	return 0;
}

int
nvmlDeviceGetPowerUsage(void *d, unsigned int *mw)
{
	FAKE_UINT(d, F_POWER, mw);
	return 0;
}

int
nvmlDeviceGetClockInfo(void *d, int type, unsigned int *mhz)
{
	if (type == 1)			/* NVML_CLOCK_SM */
		FAKE_UINT(d, F_SM_CLOCK, mhz);
	else if (type == 2)		/* NVML_CLOCK_MEM */
		FAKE_UINT(d, F_MEM_CLOCK, mhz);
	else
		return NOT_SUPPORTED;
	return 0;
}

int
nvmlDeviceGetPcieThroughput(void *d, int counter, unsigned int *kbs)
{
	FAKE_UINT(d, counter == 1 ? F_PCIE_RX : F_PCIE_TX, kbs);
	return 0;
}

int
nvmlSystemGetDriverVersion(char *v, unsigned int len)
{
	snprintf(v, len, "555.42.06");
	return 0;
}

const char *
nvmlErrorString(int r)
{
	return r == 9 ? "Driver Not Loaded" : r == NOT_SUPPORTED ?
	    "Not Supported" : "Unknown Error";
}

int
nvmlDeviceGetEncoderUtilization(void *d, unsigned int *u, unsigned int *us)
{
	FAKE_UINT(d, F_ENC, u);
	*us = 167000;
	return 0;
}

int
nvmlDeviceGetDecoderUtilization(void *d, unsigned int *u, unsigned int *us)
{
	FAKE_UINT(d, F_DEC, u);
	*us = 167000;
	return 0;
}

int
nvmlDeviceGetTotalEnergyConsumption(void *d, unsigned long long *mj)
{
	return fake_get(d, F_ENERGY, mj);
}

int
nvmlDeviceGetPcieReplayCounter(void *d, unsigned int *n)
{
	FAKE_UINT(d, F_REPLAYS, n);
	return 0;
}

int
nvmlDeviceGetCurrentClocksEventReasons(void *d, unsigned long long *mask)
{
	return fake_get(d, F_THROTTLE, mask);
}

int
nvmlDeviceGetTotalEccErrors(void *d, int type, int counter,
    unsigned long long *n)
{
	if (counter != 0)		/* the volatile counts only */
		return NOT_SUPPORTED;
	return fake_get(d, type == 0 ? F_ECC_CORR : F_ECC_UNCORR, n);
}

int
nvmlDeviceGetRemappedRows(void *d, unsigned int *corr, unsigned int *unc,
    unsigned int *pending, unsigned int *failed)
{
	FAKE_UINT(d, F_REMAP_CORR, corr);
	FAKE_UINT(d, F_REMAP_UNCORR, unc);
	FAKE_UINT(d, F_REMAP_PENDING, pending);
	FAKE_UINT(d, F_REMAP_FAILED, failed);
	return 0;
}

/* Memory temperature (82) and the NVLink data counters (139 rx, 138 tx,
 * KiB, grown at the scripted KiB/s since nvmlInit). */
int
nvmlDeviceGetFieldValues(void *d, int n, struct fake_field *v)
{
	double	 t = fake_clock() - fk.t0;

	if (!fk.up)
		return UNINITIALIZED;
	for (int i = 0; i < n; i++) {
		enum fake_f f = v[i].id == 82 ? F_MEM_TEMP : v[i].id == 139 ?
		    F_NVLINK_RX : v[i].id == 138 ? F_NVLINK_TX : F_COUNT;
		unsigned long long x = 0;

		v[i].ret = f == F_COUNT ? NOT_SUPPORTED : fake_get(d, f, &x);
		if (v[i].ret != 0)
			continue;
		if (f == F_MEM_TEMP) {
			v[i].type = 1;		/* unsigned int */
			v[i].v = (unsigned int)x;
		} else {
			v[i].type = 3;		/* unsigned long long */
			v[i].v = (unsigned long long)(x * t);
		}
	}
	return 0;
}

int
nvmlDeviceGetComputeRunningProcesses_v3(void *d, unsigned int *n,
    struct fake_proc *out)
{
	struct fake_dev	*fd = fake_dev(d);
	unsigned long long x;
	int		 r;

	if ((r = fake_get(d, F_PROCS, &x)) != 0)
		return r;
	if (*n < (unsigned int)fd->nprocs) {
		*n = (unsigned int)fd->nprocs;
		return INSUFFICIENT;
	}
	*n = (unsigned int)fd->nprocs;
	memcpy(out, fd->procs, sizeof *out * (size_t)fd->nprocs);
	return 0;
}

int
nvmlEventSetCreate(void **set)
{
	*set = (void *)&fk;
	return fk.up ? 0 : UNINITIALIZED;
}

int
nvmlEventSetFree(void *set)
{
	(void)set;
	return 0;
}

int
nvmlDeviceRegisterEvents(void *d, unsigned long long types, void *set)
{
	long	 i = (long)(size_t)d - 1;

	(void)set;
	if (i < 0 || i >= fk.ndev || !(types & 0x8))
		return NOT_SUPPORTED;
	fk.registered[i] = 1;
	return 0;
}

/* The next scripted XID of a registered device, once each. */
int
nvmlEventSetWait_v2(void *set, struct fake_event *ev, unsigned int ms)
{
	(void)set;
	(void)ms;
	fake_load();
	while (fk.xid_sent < fk.nxid) {
		int	 dev = fk.xid_dev[fk.xid_sent];

		ev->type = 0x8;
		ev->data = fk.xid_code[fk.xid_sent++];
		ev->dev = (void *)(size_t)(dev + 1);
		ev->gi = ev->ci = 0xFFFFFFFFu;
		if (dev >= 0 && dev < DEVS && fk.registered[dev])
			return 0;
	}
	return TIMEOUT;
}
