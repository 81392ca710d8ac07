/*
 * metrics.c: the three metric tables (node, GPU, rank) and the encoder
 * and decoder they share.  A value lives at its row's offset in a sample
 * struct; the sender puts the known ones into a frame, the receiver reads
 * them back with their validity bits, and nothing in between names a
 * field.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backend/proto/metrics.h"

_Static_assert(NM_COUNT <= 32 && GM_COUNT <= 32 && RM_COUNT <= 32,
    "a validity mask has 32 bits");

#define NODE(id, name, unit, help, prom, scale)	[NM_##id] = { name,	\
	METRIC_REAL, METRIC_GAUGE, unit, help,				\
	offsetof(struct node_sample, v[NM_##id]), prom, scale }

const struct metric_field node_metrics[NM_COUNT] = {
	NODE(CPU_UTIL, "cpu_util", "percent", "CPU busy, all CPUs",
	    "cpu_util_ratio", 0.01),
	NODE(CPU_USER, "cpu_user", "percent", "CPU in user code, nice too",
	    "cpu_user_ratio", 0.01),
	NODE(CPU_SYS, "cpu_sys", "percent", "CPU in the kernel and irqs",
	    "cpu_system_ratio", 0.01),
	NODE(CPU_IOWAIT, "cpu_iowait", "percent", "CPU idle waiting on I/O",
	    "cpu_iowait_ratio", 0.01),
	NODE(LOAD1, "load1", "", "the 1-minute load average",
	    "load1", 1),
	NODE(MEM_USED, "mem_used", "bytes", "memory not available",
	    "memory_used_bytes", 1),
	NODE(MEM_TOTAL, "mem_total", "bytes", "memory in all",
	    "memory_total_bytes", 1),
	NODE(SWAP_USED, "swap_used", "bytes", "swap in use",
	    "swap_used_bytes", 1),
	NODE(SWAP_TOTAL, "swap_total", "bytes", "swap in all",
	    "swap_total_bytes", 1),
	NODE(NET_RX, "net_rx", "bytes/s", "received, all interfaces but lo",
	    "network_receive_bytes_per_second", 1),
	NODE(NET_TX, "net_tx", "bytes/s", "sent, all interfaces but lo",
	    "network_transmit_bytes_per_second", 1),
	NODE(DISK_READ, "disk_read", "bytes/s", "read from whole disks",
	    "disk_read_bytes_per_second", 1),
	NODE(DISK_WRITE, "disk_write", "bytes/s", "written to whole disks",
	    "disk_written_bytes_per_second", 1),
	NODE(POWER, "power", "watts", "RAPL package power, all sockets",
	    "power_watts", 1),
	NODE(TEMP, "temp", "celsius", "the hottest hwmon sensor",
	    "temperature_celsius", 1),
	NODE(BLAS_GFLOPS, "blas_gflops", "GFLOP/s",
	    "sgemm on one thread of the node's BLAS kernel (hunter check)",
	    "sgemm_flops_per_second", 1e9),
};

#define GPU(id, name, unit, help, prom, scale)	[GM_##id] = { name,	\
	METRIC_REAL, METRIC_GAUGE, unit, help,				\
	offsetof(struct gpu_sample, v[GM_##id]), prom, scale }

const struct metric_field gpu_metrics[GM_COUNT] = {
	GPU(UTIL, "util", "percent", "time a kernel ran",
	    "util_ratio", 0.01),
	GPU(MEM_USED, "mem_used", "bytes", "device memory in use",
	    "memory_used_bytes", 1),
	GPU(MEM_TOTAL, "mem_total", "bytes", "device memory in all",
	    "memory_total_bytes", 1),
	GPU(TEMP, "temp", "celsius", "the GPU die",
	    "temperature_celsius", 1),
	GPU(POWER, "power", "watts", "board power draw",
	    "power_watts", 1),
	GPU(SM_CLOCK, "sm_clock", "MHz", "the SM clock",
	    "sm_clock_hertz", 1e6),
	GPU(PCIE_RX, "pcie_rx", "bytes/s", "PCIe received, 20 ms sampled",
	    "pcie_receive_bytes_per_second", 1),
	GPU(PCIE_TX, "pcie_tx", "bytes/s", "PCIe sent, 20 ms sampled",
	    "pcie_transmit_bytes_per_second", 1),
	GPU(XID, "xid", "", "XID errors seen; unknown for now",
	    "xid_errors", 1),
};

#define RANK_ROW(id, field, type, kind, unit, help, prom, scale)	\
	[RM_##id] = { #field, METRIC_##type, METRIC_##kind, unit, help,	\
	offsetof(struct rank_report, field), prom, scale },

const struct metric_field rank_metrics[RM_COUNT] = {
	RANK_METRICS(RANK_ROW)
};

void
metrics_put(const struct metric_field *f, int n, const size_t *at,
    const void *base, uint32_t valid, bool nulls, json_t *obj)
{
	const char	*p = base;
	json_t		*v;

	for (int i = 0; i < n; i++) {
		size_t	 off = at != NULL ? at[i] : f[i].at;
		double	 d;
		long	 l;

		v = NULL;
		if ((valid >> i) & 1) {
			if (f[i].type == METRIC_INT) {
				memcpy(&l, p + off, sizeof l);
				v = json_integer(l);
			} else {
				memcpy(&d, p + off, sizeof d);
				if (isfinite(d))
					v = json_real(d);
			}
		}
		if (v == NULL && nulls)
			v = json_null();
		if (v != NULL)
			json_object_set_new(obj, f[i].name, v);
	}
}

int
metrics_read(const struct metric_field *f, int n, const size_t *at,
    const json_t *obj, void *base, uint32_t *valid, char *err, size_t errlen)
{
	char	*p = base;
	json_t	*v;

	*valid = 0;
	for (int i = 0; i < n; i++) {
		size_t	 off = at != NULL ? at[i] : f[i].at;
		double	 d;
		long	 l;

		v = json_object_get(obj, f[i].name);
		if (v == NULL || json_is_null(v))
			continue;
		if (f[i].type == METRIC_INT && json_is_integer(v)) {
			l = (long)json_integer_value(v);
			memcpy(p + off, &l, sizeof l);
		} else if (f[i].type == METRIC_REAL && json_is_number(v)) {
			d = json_number_value(v);
			memcpy(p + off, &d, sizeof d);
		} else {
			snprintf(err, errlen, "\"%s\" is not %s", f[i].name,
			    f[i].type == METRIC_INT ? "an integer" : "a number");
			return -1;
		}
		*valid |= UINT32_C(1) << i;
	}
	return 0;
}

const char *
node_metric_name(enum node_metric m)
{
	return (unsigned)m < NM_COUNT ? node_metrics[m].name : NULL;
}

json_t *
node_sample_json(const struct node_sample *ns)
{
	json_t	*o = json_object();

	json_object_set_new(o, "time", json_real(ns->time));
	metrics_put(node_metrics, NM_COUNT, NULL, ns, ns->valid, true, o);
	return o;
}

int
node_sample_read(const json_t *m, struct node_sample *ns, char *err,
    size_t errlen)
{
	json_t	*t = json_object_get(m, "time");

	memset(ns, 0, sizeof *ns);
	if (t != NULL && !json_is_number(t)) {
		snprintf(err, errlen, "\"time\" is not a number");
		return -1;
	}
	ns->time = json_number_value(t);
	return metrics_read(node_metrics, NM_COUNT, NULL, m, ns, &ns->valid,
	    err, errlen);
}

const char *
gpu_metric_name(enum gpu_metric m)
{
	return (unsigned)m < GM_COUNT ? gpu_metrics[m].name : NULL;
}

json_t *
gpu_samples_json(const struct gpu_sample *gs, int n)
{
	json_t	*a = json_array();

	for (int i = 0; i < n; i++) {
		json_t	*o = json_object();

		json_object_set_new(o, "index", json_integer(gs[i].index));
		json_object_set_new(o, "name", gs[i].name[0] != '\0' ?
		    json_string(gs[i].name) : json_null());
		metrics_put(gpu_metrics, GM_COUNT, NULL, &gs[i], gs[i].valid,
		    true, o);
		json_array_append_new(a, o);
	}
	return a;
}

int
gpu_samples_read(const json_t *a, struct gpu_sample *gs, int max)
{
	const json_t	*o;
	const char	*name;
	char		 err[1];
	int		 n = 0;

	for (size_t i = 0; i < json_array_size(a) && n < max; i++) {
		o = json_array_get(a, i);
		if (!json_is_object(o))
			break;
		memset(&gs[n], 0, sizeof gs[n]);
		gs[n].index = json_is_integer(json_object_get(o, "index")) ?
		    (int)json_integer_value(json_object_get(o, "index")) : n;
		name = json_string_value(json_object_get(o, "name"));
		if (name != NULL)
			snprintf(gs[n].name, sizeof gs[n].name, "%s", name);
		if (metrics_read(gpu_metrics, GM_COUNT, NULL, o, &gs[n],
		    &gs[n].valid, err, sizeof err) != 0)
			break;
		n++;
	}
	return n;
}

void
rank_report_put(const struct rank_report *r, json_t *frame)
{
	metrics_put(rank_metrics, RM_COUNT, NULL, r, r->valid, false, frame);
}

int
rank_report_read(const json_t *frame, struct rank_report *r, char *err,
    size_t errlen)
{
	memset(r, 0, sizeof *r);
	return metrics_read(rank_metrics, RM_COUNT, NULL, frame, r, &r->valid,
	    err, errlen);
}
