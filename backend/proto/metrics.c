/*
 * metrics.c: the metric tables (node, its lists, GPU, rank) and the
 * encoder and decoder they share.  A value lives at its row's offset in
 * a sample struct; the sender puts the known ones into a frame, the
 * receiver reads them back with their validity bits, and nothing in
 * between names a field.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backend/proto/metrics.h"

_Static_assert(NM_COUNT <= 64 && GM_COUNT <= 64 && RM_COUNT <= 64 &&
    CM_COUNT <= 64 && IM_COUNT <= 64 && DM_COUNT <= 64,
    "a validity mask has 64 bits");

/* A REAL gauge of a node: its JSON name, unit, help, Prometheus name
 * and scale, and the resolution it goes on the wire at. */
#define NODE(id, name, unit, help, prom, scale, res) [NM_##id] = { name, \
	METRIC_REAL, METRIC_GAUGE, unit, help,				\
	offsetof(struct node_sample, v[NM_##id]), prom, scale, res }

const struct metric_field node_metrics[NM_COUNT] = {
	NODE(CPU_UTIL, "cpu_util", "percent", "CPU busy, all CPUs",
	    "cpu_util_ratio", 0.01, 0.01),
	NODE(CPU_USER, "cpu_user", "percent", "CPU in user code, nice too",
	    "cpu_user_ratio", 0.01, 0.01),
	NODE(CPU_SYS, "cpu_sys", "percent", "CPU in the kernel and irqs",
	    "cpu_system_ratio", 0.01, 0.01),
	NODE(CPU_IOWAIT, "cpu_iowait", "percent", "CPU idle waiting on I/O",
	    "cpu_iowait_ratio", 0.01, 0.01),
	NODE(LOAD1, "load1", "", "the 1-minute load average",
	    "load1", 1, 0.01),
	NODE(MEM_USED, "mem_used", "bytes", "memory not available",
	    "memory_used_bytes", 1, 1),
	NODE(MEM_TOTAL, "mem_total", "bytes", "memory in all",
	    "memory_total_bytes", 1, 1),
	NODE(SWAP_USED, "swap_used", "bytes", "swap in use",
	    "swap_used_bytes", 1, 1),
	NODE(SWAP_TOTAL, "swap_total", "bytes", "swap in all",
	    "swap_total_bytes", 1, 1),
	NODE(NET_RX, "net_rx", "bytes/s", "received, all interfaces but lo",
	    "network_receive_bytes_per_second", 1, 1),
	NODE(NET_TX, "net_tx", "bytes/s", "sent, all interfaces but lo",
	    "network_transmit_bytes_per_second", 1, 1),
	NODE(DISK_READ, "disk_read", "bytes/s", "read from whole disks",
	    "disk_read_bytes_per_second", 1, 1),
	NODE(DISK_WRITE, "disk_write", "bytes/s", "written to whole disks",
	    "disk_written_bytes_per_second", 1, 1),
	NODE(POWER, "power", "watts", "RAPL package power, all sockets",
	    "power_watts", 1, 0.01),
	NODE(TEMP, "temp", "celsius", "the hottest hwmon sensor",
	    "temperature_celsius", 1, 0.1),
	NODE(CPUS, "cpus", "", "CPUs online", "cpus", 1, 1),
	NODE(CPU_FREQ, "cpu_freq", "MHz", "the CPUs' mean clock (cpufreq, "
	    "else /proc/cpuinfo)", "cpu_frequency_hertz", 1e6, 1),
	NODE(CPU_THROTTLE, "cpu_throttle", "events/s", "thermal throttling "
	    "events, all CPUs (thermal_throttle)",
	    "cpu_throttle_events_per_second", 1, 0.01),
	NODE(PSI_CPU, "psi_cpu", "percent", "time some task waited for a CPU, "
	    "the last 10 s (/proc/pressure)", "pressure_cpu_some_ratio",
	    0.01, 0.01),
	NODE(PSI_CPU_FULL, "psi_cpu_full", "percent", "time every task waited "
	    "for a CPU, the last 10 s", "pressure_cpu_full_ratio", 0.01, 0.01),
	NODE(PSI_MEM, "psi_mem", "percent", "time some task waited for memory, "
	    "the last 10 s", "pressure_memory_some_ratio", 0.01, 0.01),
	NODE(PSI_MEM_FULL, "psi_mem_full", "percent", "time every task waited "
	    "for memory, the last 10 s", "pressure_memory_full_ratio", 0.01,
	    0.01),
	NODE(PSI_IO, "psi_io", "percent", "time some task waited for I/O, "
	    "the last 10 s", "pressure_io_some_ratio", 0.01, 0.01),
	NODE(PSI_IO_FULL, "psi_io_full", "percent", "time every task waited "
	    "for I/O, the last 10 s", "pressure_io_full_ratio", 0.01, 0.01),
	NODE(MEM_CACHE, "mem_cache", "bytes", "buffers, page cache and "
	    "reclaimable slab", "memory_cache_bytes", 1, 1),
	NODE(MEM_AVAIL, "mem_available", "bytes", "memory to be had without "
	    "swapping (MemAvailable)", "memory_available_bytes", 1, 1),
	NODE(MAJOR_FAULTS, "major_faults", "faults/s", "major page faults "
	    "(pgmajfault)", "major_page_faults_per_second", 1, 0.01),
	NODE(NET_ERRORS, "net_errors", "errors/s", "receive and transmit "
	    "errors, all interfaces but lo", "network_errors_per_second", 1,
	    0.01),
	NODE(NET_DROPS, "net_drops", "drops/s", "packets dropped in and out, "
	    "all interfaces but lo", "network_drops_per_second", 1, 0.01),
	NODE(TCP_RETRANS, "tcp_retrans", "segments/s", "TCP segments "
	    "retransmitted (RetransSegs)",
	    "tcp_retransmitted_segments_per_second", 1, 0.01),
	NODE(DISK_UTIL, "disk_util", "percent", "time the busiest whole disk "
	    "was doing I/O", "disk_util_ratio", 0.01, 0.1),
	NODE(STATE_FREE, "state_free", "bytes", "free to the agent in the "
	    "state directory's file system", "state_fs_free_bytes", 1, 1),
	NODE(STATE_SIZE, "state_size", "bytes", "the state directory's file "
	    "system in all", "state_fs_size_bytes", 1, 1),
	NODE(STATE_IFREE, "state_inodes_free", "", "its free inodes",
	    "state_fs_free_inodes", 1, 1),
	NODE(STATE_INODES, "state_inodes", "", "its inodes",
	    "state_fs_inodes", 1, 1),
	NODE(CKPT_FREE, "ckpt_free", "bytes", "free to the agent in the "
	    "checkpoint directory's file system", "checkpoint_fs_free_bytes",
	    1, 1),
	NODE(CKPT_SIZE, "ckpt_size", "bytes", "the checkpoint directory's "
	    "file system in all", "checkpoint_fs_size_bytes", 1, 1),
	NODE(CKPT_IFREE, "ckpt_inodes_free", "", "its free inodes",
	    "checkpoint_fs_free_inodes", 1, 1),
	NODE(CKPT_INODES, "ckpt_inodes", "", "its inodes",
	    "checkpoint_fs_inodes", 1, 1),
	NODE(CKPT_BYTES, "ckpt_bytes", "bytes", "a checkpoint there: the "
	    "largest file of the newest job's", "checkpoint_bytes", 1, 1),
	NODE(AGENT_FDS, "agent_fds", "", "file descriptors the agent holds "
	    "open", "agent_open_fds", 1, 1),
	NODE(BLAS_GFLOPS, "blas_gflops", "GFLOP/s",
	    "sgemm on one thread of the node's BLAS kernel (hunter check)",
	    "sgemm_flops_per_second", 1e9, 0.1),
};

#define ITEM(tab, stype, pfx, id, name, unit, help, prom, scale, res)	\
	[pfx##id] = { name, METRIC_REAL, METRIC_GAUGE, unit, help,	\
	offsetof(struct stype, v[pfx##id]), prom, scale, res }

const struct metric_field core_metrics[CM_COUNT] = {
	ITEM(core, core_sample, CM_, UTIL, "util", "percent", "a CPU busy",
	    "cpu_core_util_ratio", 0.01, 1),
	ITEM(core, core_sample, CM_, FREQ, "freq", "MHz", "its clock",
	    "cpu_core_frequency_hertz", 1e6, 1),
};

const struct metric_field iface_metrics[IM_COUNT] = {
	ITEM(iface, iface_sample, IM_, RX, "rx", "bytes/s", "received",
	    "interface_receive_bytes_per_second", 1, 1),
	ITEM(iface, iface_sample, IM_, TX, "tx", "bytes/s", "sent",
	    "interface_transmit_bytes_per_second", 1, 1),
	ITEM(iface, iface_sample, IM_, RX_PACKETS, "rx_packets", "packets/s",
	    "packets received", "interface_receive_packets_per_second", 1, 1),
	ITEM(iface, iface_sample, IM_, TX_PACKETS, "tx_packets", "packets/s",
	    "packets sent", "interface_transmit_packets_per_second", 1, 1),
	ITEM(iface, iface_sample, IM_, RX_ERRORS, "rx_errors", "errors/s",
	    "receive errors", "interface_receive_errors_per_second", 1, 0.01),
	ITEM(iface, iface_sample, IM_, TX_ERRORS, "tx_errors", "errors/s",
	    "transmit errors", "interface_transmit_errors_per_second", 1,
	    0.01),
	ITEM(iface, iface_sample, IM_, RX_DROPS, "rx_drops", "drops/s",
	    "packets dropped on receipt", "interface_receive_drops_per_second",
	    1, 0.01),
	ITEM(iface, iface_sample, IM_, TX_DROPS, "tx_drops", "drops/s",
	    "packets dropped on sending",
	    "interface_transmit_drops_per_second", 1, 0.01),
};

const struct metric_field disk_metrics[DM_COUNT] = {
	ITEM(disk, disk_sample, DM_, READ, "read", "bytes/s", "read",
	    "disk_device_read_bytes_per_second", 1, 1),
	ITEM(disk, disk_sample, DM_, WRITE, "write", "bytes/s", "written",
	    "disk_device_written_bytes_per_second", 1, 1),
	ITEM(disk, disk_sample, DM_, UTIL, "util", "percent", "time it was "
	    "doing I/O", "disk_device_util_ratio", 0.01, 0.1),
};

const struct metric_list core_list = { "cores", core_metrics, CM_COUNT,
	sizeof(struct core_sample), offsetof(struct core_sample, valid), 0, 0,
	true };
const struct metric_list iface_list = { "ifaces", iface_metrics, IM_COUNT,
	sizeof(struct iface_sample), offsetof(struct iface_sample, valid),
	offsetof(struct iface_sample, name), NODE_NAME_MAX, false };
const struct metric_list disk_list = { "disks", disk_metrics, DM_COUNT,
	sizeof(struct disk_sample), offsetof(struct disk_sample, valid),
	offsetof(struct disk_sample, name), NODE_NAME_MAX, false };

/* NVML's values are whole numbers but for power and energy (mW, mJ):
 * they go as integers (res 1). */
#define GPU(id, name, kind, unit, help, prom, scale) [GM_##id] = { name, \
	METRIC_REAL, METRIC_##kind, unit, help,				\
	offsetof(struct gpu_sample, v[GM_##id]), prom, scale,		\
	GM_##id == GM_POWER || GM_##id == GM_ENERGY ? 0 : 1 }

const struct metric_field gpu_metrics[GM_COUNT] = {
	GPU(UTIL, "util", GAUGE, "percent", "time a kernel ran",
	    "util_ratio", 0.01),
	GPU(MEM_USED, "mem_used", GAUGE, "bytes", "frame buffer in use",
	    "memory_used_bytes", 1),
	GPU(MEM_TOTAL, "mem_total", GAUGE, "bytes", "frame buffer in all",
	    "memory_total_bytes", 1),
	GPU(TEMP, "temp", GAUGE, "celsius", "the GPU die",
	    "temperature_celsius", 1),
	GPU(POWER, "power", GAUGE, "watts", "board power draw",
	    "power_watts", 1),
	GPU(SM_CLOCK, "sm_clock", GAUGE, "MHz", "the SM clock",
	    "sm_clock_hertz", 1e6),
	GPU(PCIE_RX, "pcie_rx", GAUGE, "bytes/s", "PCIe received, 20 ms "
	    "sampled", "pcie_receive_bytes_per_second", 1),
	GPU(PCIE_TX, "pcie_tx", GAUGE, "bytes/s", "PCIe sent, 20 ms sampled",
	    "pcie_transmit_bytes_per_second", 1),
	GPU(XID, "xid", COUNTER, "", "XID errors since the agent loaded NVML "
	    "(its event API)", "xid_errors_total", 1),
	GPU(MEM_FREE, "mem_free", GAUGE, "bytes", "frame buffer free",
	    "memory_free_bytes", 1),
	GPU(MEM_UTIL, "mem_util", GAUGE, "percent", "time memory was read or "
	    "written (memory copy)", "memory_copy_util_ratio", 0.01),
	GPU(ENC_UTIL, "enc_util", GAUGE, "percent", "the video encoder busy",
	    "encoder_util_ratio", 0.01),
	GPU(DEC_UTIL, "dec_util", GAUGE, "percent", "the video decoder busy",
	    "decoder_util_ratio", 0.01),
	GPU(MEM_CLOCK, "mem_clock", GAUGE, "MHz", "the memory clock",
	    "memory_clock_hertz", 1e6),
	GPU(MEM_TEMP, "mem_temp", GAUGE, "celsius", "the memory",
	    "memory_temperature_celsius", 1),
	GPU(ENERGY, "energy", COUNTER, "joules", "energy since the driver "
	    "loaded", "energy_joules_total", 1),
	GPU(PCIE_REPLAYS, "pcie_replays", COUNTER, "", "PCIe replays since "
	    "the driver loaded", "pcie_replays_total", 1),
	GPU(NVLINK_RX, "nvlink_rx", GAUGE, "bytes/s", "NVLink data received, "
	    "all links", "nvlink_receive_bytes_per_second", 1),
	GPU(NVLINK_TX, "nvlink_tx", GAUGE, "bytes/s", "NVLink data sent, all "
	    "links", "nvlink_transmit_bytes_per_second", 1),
	GPU(REMAP_CORR, "remapped_corr", GAUGE, "rows", "rows remapped for "
	    "correctable errors", "remapped_rows_correctable", 1),
	GPU(REMAP_UNCORR, "remapped_uncorr", GAUGE, "rows", "rows remapped "
	    "for uncorrectable errors", "remapped_rows_uncorrectable", 1),
	GPU(REMAP_PENDING, "remap_pending", GAUGE, "", "1 while a remapping "
	    "waits for a reset", "row_remap_pending", 1),
	GPU(REMAP_FAILED, "remap_failed", GAUGE, "", "1 once a row remapping "
	    "failed", "row_remap_failure", 1),
	GPU(THROTTLE, "throttle", GAUGE, "", "why the clocks are held down "
	    "(NVML's clock event reasons, a bit mask)",
	    "clock_throttle_reasons", 1),
	GPU(ECC_CORR, "ecc_corr", COUNTER, "", "corrected ECC errors since "
	    "the driver loaded", "ecc_corrected_errors_total", 1),
	GPU(ECC_UNCORR, "ecc_uncorr", COUNTER, "", "uncorrected ECC errors "
	    "since the driver loaded", "ecc_uncorrected_errors_total", 1),
	GPU(XID_LAST, "xid_last", GAUGE, "", "the code of the newest XID "
	    "error", "xid_last_code", 1),
};

#define RANK_ROW(id, field, type, kind, unit, help, prom, scale)	\
	[RM_##id] = { #field, METRIC_##type, METRIC_##kind, unit, help,	\
	offsetof(struct rank_report, field), prom, scale, 0 },

const struct metric_field rank_metrics[RM_COUNT] = {
	RANK_METRICS(RANK_ROW)
};

/*
 * A real as it goes on the wire: rounded to a multiple of res, or where
 * res is below 1, of the power of two just under it (0.01 becomes 1/128),
 * whose decimals end soon (35.203125, where 35.2 would print as
 * 35.200000000000003); whole ones as integers.
 */
static json_t *
metrics_real(double d, double res)
{
	double	 q = res;

	if (res > 0 && res < 1)
		q = ldexp(1, (int)floor(log2(res)));
	if (q > 0) {
		d = round(d / q) * q;
		if (fabs(d) < 9e15 && d == floor(d))
			return json_integer((json_int_t)d);
	}
	return json_real(d);
}

json_t *
metrics_value(const struct metric_field *f, const void *base, size_t at)
{
	double	 d;
	long	 l;

	if (f->type == METRIC_INT) {
		memcpy(&l, (const char *)base + at, sizeof l);
		return json_integer(l);
	}
	memcpy(&d, (const char *)base + at, sizeof d);
	return isfinite(d) ? metrics_real(d, f->res) : NULL;
}

int
metrics_value_read(const struct metric_field *f, const json_t *v, void *base,
    size_t at, char *err, size_t errlen)
{
	double	 d;
	long	 l;

	if (v == NULL || json_is_null(v))
		return 0;
	if (f->type == METRIC_INT && json_is_integer(v)) {
		l = (long)json_integer_value(v);
		memcpy((char *)base + at, &l, sizeof l);
	} else if (f->type == METRIC_REAL && json_is_number(v)) {
		d = json_number_value(v);
		memcpy((char *)base + at, &d, sizeof d);
	} else {
		snprintf(err, errlen, "\"%s\" is not %s", f->name,
		    f->type == METRIC_INT ? "an integer" : "a number");
		return -1;
	}
	return 1;
}

void
metrics_put(const struct metric_field *f, int n, const size_t *at,
    const void *base, uint64_t valid, bool nulls, json_t *obj)
{
	for (int i = 0; i < n; i++) {
		json_t	*v = NULL;

		if ((valid >> i) & 1)
			v = metrics_value(&f[i], base, at != NULL ? at[i] :
			    f[i].at);
		if (v == NULL && nulls)
			v = json_null();
		if (v != NULL)
			json_object_set_new(obj, f[i].name, v);
	}
}

int
metrics_merge(const struct metric_field *f, int n, const size_t *at,
    const json_t *obj, void *base, uint64_t *valid, uint64_t mask, char *err,
    size_t errlen)
{
	for (int i = 0; i < n; i++) {
		int	 rc;

		if (!((mask >> i) & 1))
			continue;
		*valid &= ~(UINT64_C(1) << i);
		rc = metrics_value_read(&f[i], json_object_get(obj, f[i].name),
		    base, at != NULL ? at[i] : f[i].at, err, errlen);
		if (rc < 0)
			return -1;
		if (rc > 0)
			*valid |= UINT64_C(1) << i;
	}
	return 0;
}

int
metrics_read(const struct metric_field *f, int n, const size_t *at,
    const json_t *obj, void *base, uint64_t *valid, char *err, size_t errlen)
{
	*valid = 0;
	return metrics_merge(f, n, at, obj, base, valid, ~UINT64_C(0), err,
	    errlen);
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

bool
node_fs_low(const struct node_sample *ns, bool ckpt)
{
	enum node_metric free = ckpt ? NM_CKPT_FREE : NM_STATE_FREE;
	enum node_metric size = ckpt ? NM_CKPT_SIZE : NM_STATE_SIZE;

	if (!node_sample_valid(ns, free) || !node_sample_valid(ns, size))
		return false;
	if (ns->v[free] < ns->v[size] * 0.10)
		return true;
	return ckpt && node_sample_valid(ns, NM_CKPT_BYTES) &&
	    ns->v[NM_CKPT_BYTES] > 0 && ns->v[free] < 2 * ns->v[NM_CKPT_BYTES];
}
