/*
 * fake-nvml.c: a stand-in for libnvidia-ml.so.1, built as a shared object
 * for test-nvml.c (loaded through $HUNTER_NVML_LIBRARY).  Two devices:
 * device 0 answers everything, device 1 has no temperature, power or PCIe
 * counters (NVML_ERROR_NOT_SUPPORTED), so its bits must come out clear.
 * $FAKE_NVML_INIT_FAIL makes nvmlInit_v2 fail.  The signatures are NVML's
 * with the types spelled out, as nvml.c declares them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOT_SUPPORTED	3
#define UNINITIALIZED	1

struct fake_util { unsigned int gpu, memory; };
struct fake_mem { unsigned long long total, free, used; };

static int	fake_up;

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

/* Handles are 1 + index, never dereferenced. */
static long
fake_dev(void *d)
{
	return (long)(size_t)d - 1;
}

int
nvmlInit_v2(void)
{
	if (getenv("FAKE_NVML_INIT_FAIL") != NULL)
		return 9;	/* NVML_ERROR_DRIVER_NOT_LOADED */
	fake_up = 1;
	return 0;
}

int
nvmlShutdown(void)
{
	fake_up = 0;
	return 0;
}

int
nvmlDeviceGetCount_v2(unsigned int *n)
{
	if (!fake_up)
		return UNINITIALIZED;
	*n = 2;
	return 0;
}

int
nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **d)
{
	if (i >= 2)
		return 2;
	*d = (void *)(size_t)(i + 1);
	return 0;
}

int
nvmlDeviceGetName(void *d, char *name, unsigned int len)
{
	snprintf(name, len, "Fake GPU %ld", fake_dev(d));
	return 0;
}

int
nvmlDeviceGetUtilizationRates(void *d, struct fake_util *u)
{
	u->gpu = fake_dev(d) == 0 ? 93 : 0;
	u->memory = 40;
	return 0;
}

int
nvmlDeviceGetMemoryInfo(void *d, struct fake_mem *m)
{
	m->total = 150ull << 30;
	m->used = fake_dev(d) == 0 ? 80ull << 30 : 1ull << 20;
	m->free = m->total - m->used;
	return 0;
}

int
nvmlDeviceGetTemperature(void *d, int sensor, unsigned int *t)
{
	if (fake_dev(d) != 0 || sensor != 0)
		return NOT_SUPPORTED;
	*t = 61;
	return 0;
}

int
nvmlDeviceGetPowerUsage(void *d, unsigned int *mw)
{
	if (fake_dev(d) != 0)
		return NOT_SUPPORTED;
	*mw = 612345;
	return 0;
}

int
nvmlDeviceGetClockInfo(void *d, int type, unsigned int *mhz)
{
	*mhz = type == 1 ? 1980 : 0;	/* NVML_CLOCK_SM */
	return 0;
}

int
nvmlDeviceGetPcieThroughput(void *d, int counter, unsigned int *kbs)
{
	if (fake_dev(d) != 0)
		return NOT_SUPPORTED;
	*kbs = counter == 1 ? 2000 : 1000;	/* rx, tx */
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
	return r == 9 ? "Driver Not Loaded" : "Unknown Error";
}
