/*
 * nvml-internal.h: NVML's ABI as we declare it (nvml.h is not installed;
 * its names are not reused, so that the real header could be included
 * beside this) and the loaded library, shared by nvml.c (loading and the
 * per-device metrics) and nvml-events.c (XID events, processes).  The
 * layouts are NVML's public ABI, as nvtop declares them.
 */
#ifndef HUNTER_NVML_INTERNAL_H
#define HUNTER_NVML_INTERNAL_H

#include "lib/nvml.h"

typedef int			 nv_ret;	/* nvmlReturn_t, 0 = success */
typedef struct nv_device	*nv_device;	/* nvmlDevice_t */
typedef struct nv_event_set	*nv_event_set;	/* nvmlEventSet_t */

#define NV_ERROR_NOT_SUPPORTED	3
#define NV_ERROR_INSUFFICIENT	7		/* INSUFFICIENT_SIZE */
#define NV_ERROR_TIMEOUT	10
#define NV_VALUE_NA		0xFFFFFFFFFFFFFFFFULL	/* NVML_VALUE_NOT_AVAILABLE */

struct nv_utilization {				/* nvmlUtilization_t */
	unsigned int	gpu, memory;
};

struct nv_memory {				/* nvmlMemory_t (v1) */
	unsigned long long total, free, used;
};

struct nv_process {				/* nvmlProcessInfo_v2_t (_v2, _v3) */
	unsigned int	pid;
	unsigned long long used;
	unsigned int	gpu_instance, compute_instance;
};

struct nv_event {				/* nvmlEventData_t */
	nv_device	device;
	unsigned long long type, data;
	unsigned int	gpu_instance, compute_instance;
};

struct nv_field {				/* nvmlFieldValue_t */
	unsigned int	id, scope;
	long long	timestamp, latency;
	int		type;			/* nvmlValueType_t */
	nv_ret		ret;
	union {
		double		d;
		unsigned int	ui;
		unsigned long	ul;
		unsigned long long ull;
		long long	sll;
	}		value;
};

#define NV_TEMPERATURE_GPU	0		/* nvmlTemperatureSensors_t */
#define NV_CLOCK_SM		1		/* nvmlClockType_t */
#define NV_CLOCK_MEM		2
#define NV_PCIE_TX_BYTES	0		/* nvmlPcieUtilCounter_t */
#define NV_PCIE_RX_BYTES	1
#define NV_ECC_CORRECTED	0		/* nvmlMemoryErrorType_t */
#define NV_ECC_UNCORRECTED	1
#define NV_ECC_VOLATILE		0		/* nvmlEccCounterType_t */
#define NV_EVENT_XID		0x8ULL		/* nvmlEventTypeXidCriticalError */
#define NV_FI_MEMORY_TEMP	82		/* NVML_FI_DEV_MEMORY_TEMP */
#define NV_FI_NVLINK_DATA_TX	138		/* ..._NVLINK_THROUGHPUT_DATA_TX, KiB */
#define NV_FI_NVLINK_DATA_RX	139
#define NV_SCOPE_ALL_LINKS	0xFFFFFFFFu	/* scopeId: summed over links */
#define NV_VALUE_UINT		1		/* nvmlValueType_t */
#define NV_VALUE_ULL		3
#define NV_NAME_LEN		96		/* NVML_DEVICE_NAME_V2_BUFFER_SIZE */
#define NV_DRIVER_LEN		80		/* NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE */
#define NV_DEVICES		16		/* devices we keep state for */

struct nvml_lib {
	void		*lib;
	int		 tried;
	char		 absent[256];
	/* Required: without one of these NVML is absent. */
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
	/* Optional (older drivers lack some): a missing one leaves its
	 * metrics unknown. */
	nv_ret		(*encoder)(nv_device, unsigned int *, unsigned int *);
	nv_ret		(*decoder)(nv_device, unsigned int *, unsigned int *);
	nv_ret		(*energy)(nv_device, unsigned long long *);
	nv_ret		(*replays)(nv_device, unsigned int *);
	nv_ret		(*throttle)(nv_device, unsigned long long *);
	nv_ret		(*throttle_old)(nv_device, unsigned long long *);
	nv_ret		(*ecc)(nv_device, int, int, unsigned long long *);
	nv_ret		(*remapped)(nv_device, unsigned int *, unsigned int *,
			    unsigned int *, unsigned int *);
	nv_ret		(*fields)(nv_device, int, struct nv_field *);
	nv_ret		(*procs)(nv_device, unsigned int *, struct nv_process *);
	nv_ret		(*procs_old)(nv_device, unsigned int *,
			    struct nv_process *);
	nv_ret		(*set_create)(nv_event_set *);
	nv_ret		(*set_free)(nv_event_set);
	nv_ret		(*register_events)(nv_device, unsigned long long,
			    nv_event_set);
	nv_ret		(*wait)(nv_event_set, struct nv_event *, unsigned int);
	/* What we keep between calls. */
	nv_event_set	 events;	/* NULL: no XID events (yet) */
	bool		 events_none;	/* the driver has no event API */
	unsigned int	 events_ndev;	/* devices registered so far */
	unsigned int	 ndev;		/* devices at the last count */
	struct {
		nv_device	 handle;
		unsigned long long xids, xid_last;
		bool		 xid_known;	/* registered for XID events */
		unsigned long long link_rx, link_tx;	/* KiB */
		double		 link_t;	/* 0: no reading yet */
	}		 dev[NV_DEVICES];
};

extern struct nvml_lib nv;

/* nvml.c: load and initialise NVML once; 1 when it is there. */
int	nvml_load(void);
/* nvml-events.c: register for XID events every device not registered
 * yet (after a count: devices may come later); each GPU's compute
 * processes into gs. */
void	nvml_events_open(void);
void	nvml_processes(nv_device, struct gpu_sample *);

#endif
