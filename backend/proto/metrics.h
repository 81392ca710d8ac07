/*
 * metrics.h: the metric tables (docs/architecture.md, "Frames"): what a
 * node, a GPU and a rank report, one row per metric with its JSON name,
 * type, kind, unit, a line of help and where its value lives, and the one
 * encoder and decoder that every sender and receiver loops over.
 *
 * Every value carries a validity bit: what cannot be measured is unknown,
 * drawn as "-", never 0.  On the wire an unknown node or GPU metric is
 * null (those samples list every field); an unknown rank metric is
 * absent.
 *
 * Each row also names its Prometheus series (the endpoint of
 * backend/core/metrics-http.c): the name after "hunter_node_",
 * "hunter_gpu_" or "hunter_rank_", in base units, and the factor that
 * takes the value there (ms to seconds, percent to a ratio); a row whose
 * name is NULL is not exported.
 *
 * A node's frame carries, besides its sample, its lists (CPUs,
 * interfaces, disks: struct node_lists), its GPUs and, under "ranks",
 * the process rows of each rank its agent runs (RM_PROC_MASK).
 *
 * The node and GPU sampling stays where it reads the system
 * (backend/agent/sampler.c, lib/nvml.c); their samples are the contract
 * of the metrics frame that core and the console read, so they are
 * defined here (the GPU's in lib/nvml.h, which lib fills without knowing
 * any frame).
 */
#ifndef HUNTER_METRICS_H
#define HUNTER_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "lib/nvml.h"

/* Where a metric lives: INT is a long, REAL a double. */
enum metric_type { METRIC_INT, METRIC_REAL };
enum metric_kind { METRIC_GAUGE, METRIC_COUNTER };

struct metric_field {
	const char	*name;		/* the JSON field */
	enum metric_type type;
	enum metric_kind kind;
	const char	*unit;		/* "bytes", "ms", ...; "" for none */
	const char	*help;		/* one line, for the exporters */
	size_t		 at;		/* offset of the value in its sample */
	const char	*prom;		/* Prometheus' name; NULL: not exported */
	double		 scale;		/* value * scale is in prom's unit */
	/* On the wire a REAL is rounded to a multiple of res (below 1, of
	 * the power of two under it, whose decimals end soon), and one that
	 * comes out whole goes as an integer: what a node says every second
	 * stays small.  0: as it is. */
	double		 res;
};

/*
 * Put each of the n fields of the sample at base into obj: a known one
 * (bit i of valid, and finite) as a number, an unknown one as null when
 * nulls, else not at all.  at, when not NULL, replaces the fields' own
 * offsets (a struct of another floor that holds the same values).
 */
void	metrics_put(const struct metric_field *, int n, const size_t *at,
	    const void *base, uint64_t valid, bool nulls, json_t *obj);
/*
 * Read them back from obj: a number sets the value and its bit; null or
 * absent clears the bit and leaves the value as it was.  0, or -1 with
 * err naming the field when one has the wrong type (a string, or a real
 * for an INT); *valid then holds the fields read before it.
 */
int	metrics_read(const struct metric_field *, int n, const size_t *at,
	    const json_t *obj, void *base, uint64_t *valid, char *err,
	    size_t errlen);
/* The same for the fields of mask only: the bits of the others are left
 * as they are (a frame that says part of what is known). */
int	metrics_merge(const struct metric_field *, int n, const size_t *at,
	    const json_t *obj, void *base, uint64_t *valid, uint64_t mask,
	    char *err, size_t errlen);

/* One value of row f at base + at as JSON (NULL for a real that is not
 * finite), and back: 1 set, 0 when v is absent or null, -1 with err when
 * it has the wrong type. */
json_t	*metrics_value(const struct metric_field *, const void *base,
	    size_t at);
int	 metrics_value_read(const struct metric_field *, const json_t *v,
	    void *base, size_t at, char *err, size_t errlen);

/* A node, sampled by its agent at 1 Hz. */
enum node_metric {
	NM_CPU_UTIL,		/* percent of all CPUs busy */
	NM_CPU_USER,		/* percent */
	NM_CPU_SYS,		/* percent */
	NM_CPU_IOWAIT,		/* percent */
	NM_LOAD1,
	NM_MEM_USED,		/* bytes */
	NM_MEM_TOTAL,		/* bytes */
	NM_SWAP_USED,		/* bytes */
	NM_SWAP_TOTAL,		/* bytes */
	NM_NET_RX,		/* bytes/s, all interfaces but lo */
	NM_NET_TX,		/* bytes/s */
	NM_DISK_READ,		/* bytes/s, whole disks */
	NM_DISK_WRITE,		/* bytes/s */
	NM_POWER,		/* watts, RAPL package energy */
	NM_TEMP,		/* degrees C, hottest hwmon sensor */
	NM_CPUS,		/* online CPUs */
	NM_CPU_FREQ,		/* MHz, the mean over the CPUs */
	NM_CPU_THROTTLE,	/* thermal throttling events/s, all CPUs */
	NM_PSI_CPU,		/* percent, "some" over the last 10 s */
	NM_PSI_CPU_FULL,	/* percent, "full" */
	NM_PSI_MEM,		/* percent, "some" */
	NM_PSI_MEM_FULL,	/* percent, "full" */
	NM_PSI_IO,		/* percent, "some" */
	NM_PSI_IO_FULL,		/* percent, "full" */
	NM_MEM_CACHE,		/* bytes: buffers, page cache, reclaimable slab */
	NM_MEM_AVAIL,		/* bytes: MemAvailable */
	NM_MAJOR_FAULTS,	/* major page faults/s */
	NM_NET_ERRORS,		/* errors/s, in and out, all interfaces but lo */
	NM_NET_DROPS,		/* drops/s, in and out */
	NM_TCP_RETRANS,		/* TCP segments retransmitted/s */
	NM_DISK_UTIL,		/* percent: the busiest whole disk */
	NM_STATE_FREE,		/* bytes free (to us) in the state directory's fs */
	NM_STATE_SIZE,		/* bytes: that fs's size */
	NM_STATE_IFREE,		/* its free inodes */
	NM_STATE_INODES,	/* its inodes */
	NM_CKPT_FREE,		/* the same for the checkpoint directory's fs */
	NM_CKPT_SIZE,
	NM_CKPT_IFREE,
	NM_CKPT_INODES,
	NM_CKPT_BYTES,		/* bytes of a checkpoint there (the largest) */
	NM_AGENT_FDS,		/* file descriptors the agent holds open */
	NM_BLAS_GFLOPS,		/* sgemm, one thread, when hunter check asked */
	NM_COUNT
};

struct node_sample {
	double		 time;			/* CLOCK_REALTIME seconds */
	double		 v[NM_COUNT];
	uint64_t	 valid;			/* bit i: v[i] is known */
};

extern const struct metric_field node_metrics[NM_COUNT];

/* Whether metric m of a sample is known. */
static inline bool
node_sample_valid(const struct node_sample *ns, enum node_metric m)
{
	return (ns->valid >> m) & 1;
}

/* The JSON field name of each metric, e.g. "cpu_util", "mem_used". */
const char	*node_metric_name(enum node_metric);
/* {"time":..., "cpu_util": 12.5, ..., "power": null}.  "t" is left to
 * the frame it goes in. */
json_t		*node_sample_json(const struct node_sample *);
/* A node metrics frame (or a hello's sample) back into a sample. */
int		 node_sample_read(const json_t *, struct node_sample *,
		    char *err, size_t errlen);

/*
 * Whether the file system of the state directory (ckpt false) or of the
 * checkpoint directory is short of room: under 10% of it free, or, for
 * the checkpoints', room for fewer than two more the size of one there
 * (the next one may then be the one that fails).  The
 * console draws its free space red from then on, and the backend warns
 * once (docs/architecture.md, "Metrics").
 */
bool		 node_fs_low(const struct node_sample *, bool ckpt);

/*
 * What a node has several of, each a list of like things: its CPUs, its
 * network interfaces (lo left out), its whole disks.  Each list is a
 * table of rows (as above) over a struct of its own; a new metric is an
 * enum value and one row.  On the wire the CPUs are one array a row
 * ("cores": {"util": [12, 80, ...], ...}), the others one object each
 * with its name ("ifaces": [{"name": "eth0", "rx": ...}, ...]).
 */
enum core_metric { CM_UTIL, CM_FREQ, CM_COUNT };
enum iface_metric { IM_RX, IM_TX, IM_RX_PACKETS, IM_TX_PACKETS, IM_RX_ERRORS,
	IM_TX_ERRORS, IM_RX_DROPS, IM_TX_DROPS, IM_COUNT };
enum disk_metric { DM_READ, DM_WRITE, DM_UTIL, DM_COUNT };

#define NODE_CORES_MAX	256	/* CPUs listed; past them only the totals */
#define NODE_IFACES_MAX	32
#define NODE_DISKS_MAX	16
#define NODE_NAME_MAX	32	/* an interface's or a disk's name */

struct core_sample {
	double		 v[CM_COUNT];
	uint64_t	 valid;
};

struct iface_sample {
	char		 name[NODE_NAME_MAX];
	double		 v[IM_COUNT];
	uint64_t	 valid;
};

struct disk_sample {
	char		 name[NODE_NAME_MAX];
	double		 v[DM_COUNT];
	uint64_t	 valid;
};

struct node_lists {
	int		 ncores, nifaces, ndisks;
	struct core_sample cores[NODE_CORES_MAX];
	struct iface_sample ifaces[NODE_IFACES_MAX];
	struct disk_sample disks[NODE_DISKS_MAX];
};

/* A list: its key in the frame, its rows, and where its items keep
 * their values, validity bits and name. */
struct metric_list {
	const char	*key;
	const struct metric_field *f;
	int		 n;
	size_t		 size;		/* of an item */
	size_t		 valid_at;	/* its uint64_t of bits */
	size_t		 name_at;	/* its char[name_len] */
	size_t		 name_len;	/* 0: no name */
	bool		 columns;	/* one array a row */
};

extern const struct metric_field core_metrics[CM_COUNT],
	iface_metrics[IM_COUNT], disk_metrics[DM_COUNT];
extern const struct metric_list core_list, iface_list, disk_list;

/* n items of a list as JSON; read back up to max of them (how many, or
 * -1 with err naming what has the wrong type). */
json_t		*metric_list_json(const struct metric_list *, const void *,
		    int n);
int		 metric_list_read(const struct metric_list *, const json_t *,
		    void *, int max, char *err, size_t errlen);
/* The lists into a node's frame, and back (0, or -1 with err; absent
 * lists are empty). */
void		 node_lists_put(const struct node_lists *, json_t *frame);
int		 node_lists_read(const json_t *frame, struct node_lists *,
		    char *err, size_t errlen);

/* A GPU (enum gpu_metric and struct gpu_sample: lib/nvml.h). */
extern const struct metric_field gpu_metrics[GM_COUNT];

/* The JSON field name of each metric, e.g. "util", "mem_used". */
const char	*gpu_metric_name(enum gpu_metric);
/* A column a row over the GPUs, as a node's CPUs go: {"index": [0, 1],
 * "name": ["NVIDIA H200", ...], "util": [93, 7], ..., "procs": [[{"pid":
 * 1234, "mem": 1073741824, "owner": 1230}], null]} (each name once, not
 * once a GPU: an 8-GPU node's frame stays small). */
json_t		*gpu_samples_json(const struct gpu_sample *, int n);
/* Up to max of them back from a node metrics frame's "gpus"; how many
 * (none when a column has the wrong type). */
int		 gpu_samples_read(const json_t *gpus, struct gpu_sample *,
		    int max);
/* Whether a node frame's "gpus" is well formed: 0, or -1 with err. */
int		 gpu_samples_check(const json_t *gpus, char *err,
		    size_t errlen);
/* "sw-power,hw-thermal" for a throttle mask ("none" for 0) into buf. */
const char	*gpu_throttle_text(double mask, char *buf, size_t len);

/*
 * A rank, reported by its worker at most once a second, and once more
 * after its last step (the rows of RM_PROC_MASK come from its agent
 * instead, once a second).  The list is expanded on every floor that holds
 * the values: here into the table and struct rank_report (what the
 * worker and the simulator send), in core into struct rank_state (what
 * the state model keeps); a new metric is one line here.
 *	X(ID, field, type, kind, unit, help, prom, scale)
 * The step is a gauge, not a counter: a re-formation resumes from a
 * checkpoint, so it can go back.  The _total rows count from the rank's
 * launch (this generation), as a process's counters do.
 */
#define RANK_METRICS(X)							\
	X(STEP, step, INT, GAUGE, "steps", "optimizer steps done",	\
	    "step", 1)							\
	X(EPOCH, epoch, INT, GAUGE, "", "the epoch in progress, from 0",	\
	    "epoch", 1)							\
	X(LOSS, loss, REAL, GAUGE, "", "mean loss over the global batch", \
	    "loss", 1)							\
	X(LR, lr, REAL, GAUGE, "", "the learning rate of the last step", \
	    "learning_rate", 1)						\
	X(GLOBAL_BATCH, global_batch, INT, GAUGE, "samples",		\
	    "the global batch it runs at (an adaptive one's choice)",	\
	    "global_batch_samples", 1)					\
	X(SAMPLES_PER_S, samples_per_s, REAL, GAUGE, "samples/s",	\
	    "the global batch over the step time", "samples_per_second", 1) \
	X(STEP_MS, step_ms, REAL, GAUGE, "ms", "the last step, wall time", \
	    "step_seconds", 1e-3)					\
	X(COMPUTE_MS, compute_ms, REAL, GAUGE, "ms",			\
	    "of it, forward and backward", "compute_seconds", 1e-3)	\
	X(COMM_MS, comm_ms, REAL, GAUGE, "ms", "of it, the exchange",	\
	    "comm_seconds", 1e-3)					\
	X(DATA_WAIT_MS, data_wait_ms, REAL, GAUGE, "ms",		\
	    "of it, waiting for the loader", "data_wait_seconds", 1e-3)	\
	X(BYTES_SENT, bytes_sent, INT, GAUGE, "bytes",			\
	    "what this rank sent in the last step", "step_sent_bytes", 1) \
	X(BYTES_DENSE, bytes_dense, INT, GAUGE, "bytes",		\
	    "the same exchange uncompressed", "step_dense_bytes", 1)	\
	X(MICRO_BATCH, micro_batch, INT, GAUGE, "samples",		\
	    "samples a forward pass", "micro_batch_samples", 1)		\
	X(ACCUM, accum, INT, GAUGE, "", "micro-batches a step",		\
	    "accumulated_micro_batches", 1)				\
	X(RSS, rss, INT, GAUGE, "bytes", "the worker's resident memory", \
	    "resident_memory_bytes", 1)					\
	X(HEARTBEAT, heartbeat, REAL, GAUGE, "seconds",			\
	    "the wall clock of the report", "report_timestamp_seconds", 1) \
	X(PID, pid, INT, GAUGE, "", "the worker's process id", NULL, 1)	\
	X(DENSITY, density, REAL, GAUGE, "",				\
	    "the share of the gradient sent; 1 is dense", "density_ratio", 1) \
	X(LR_GAIN, lr_gain, REAL, GAUGE, "",				\
	    "the AdaScale gain; 1 without adaptive", "learning_rate_gain", 1) \
	X(NOISE_SCALE, noise_scale, REAL, GAUGE, "samples",		\
	    "the gradient noise scale (adaptive)",			\
	    "gradient_noise_scale_samples", 1)				\
	X(TOKENS_PER_S, tokens_per_s, REAL, GAUGE, "tokens/s",		\
	    "a token model's samples/s times its context",		\
	    "tokens_per_second", 1)					\
	X(GRAD_NORM, grad_norm, REAL, GAUGE, "",			\
	    "the summed gradient's norm before clipping",		\
	    "gradient_norm", 1)						\
	X(BYTES_SENT_TOTAL, bytes_sent_total, INT, COUNTER, "bytes",	\
	    "what this rank sent since its launch", "sent_bytes_total", 1) \
	X(BYTES_DENSE_TOTAL, bytes_dense_total, INT, COUNTER, "bytes",	\
	    "the same exchanges uncompressed", "dense_bytes_total", 1)	\
	X(COMPRESSION, compression_ratio, REAL, GAUGE, "",		\
	    "bytes dense over bytes sent since its launch",		\
	    "compression_ratio", 1)					\
	X(OPTIMIZER_BYTES, optimizer_bytes, INT, GAUGE, "bytes",	\
	    "this rank's optimizer state (its shard with train.zero)",	\
	    "optimizer_bytes", 1)					\
	X(PEAK_GFLOPS, peak_gflops, REAL, GAUGE, "GFLOP/s",		\
	    "the cached sgemm peak of this rank's BLAS kernel and threads", \
	    "sgemm_peak_flops_per_second", 1e9)			\
	X(MFU, mfu, REAL, GAUGE, "",					\
	    "model FLOPs a second over the ranks' peaks (a token model)", \
	    "model_flops_utilization_ratio", 1)			\
	X(PROC_CPU, proc_cpu, REAL, GAUGE, "percent",			\
	    "CPU of the rank's processes, of one core (its agent's reading)", \
	    "cpu_ratio", 0.01)						\
	X(THREADS, threads, INT, GAUGE, "",				\
	    "threads of the rank's processes", "threads", 1)		\
	X(CTX_VOL, ctx_voluntary, REAL, GAUGE, "switches/s",		\
	    "voluntary context switches (it waited)",			\
	    "voluntary_context_switches_per_second", 1)		\
	X(CTX_INVOL, ctx_involuntary, REAL, GAUGE, "switches/s",	\
	    "involuntary context switches (it was preempted)",		\
	    "involuntary_context_switches_per_second", 1)		\
	X(FDS, fds, INT, GAUGE, "", "file descriptors its processes hold", \
	    "open_fds", 1)						\
	X(GPU_MEM, gpu_mem, INT, GAUGE, "bytes",			\
	    "GPU memory its processes hold (NVML)", "gpu_memory_bytes", 1)

#define RANK_METRIC_ENUM(id, ...)	RM_##id,
enum rank_metric { RANK_METRICS(RANK_METRIC_ENUM) RM_COUNT };
#undef RANK_METRIC_ENUM

/* Members named as the fields, typed by the type column. */
#define METRIC_CTYPE_INT	long
#define METRIC_CTYPE_REAL	double
#define RANK_METRIC_MEMBER(id, field, type, ...) METRIC_CTYPE_##type field;

#define RM_BIT(id)	(UINT64_C(1) << RM_##id)
#define RM_ALL		((UINT64_C(1) << RM_COUNT) - 1)
/* The rows a rank's agent measures of its processes (/proc, NVML): only
 * it says them.  It sends them in its node's frame ("ranks") with
 * RM_AGENT_MASK's others, its pid and RSS, which a worker's own frames
 * say too (a program that never speaks says nothing). */
#define RM_PROC_MASK	(RM_BIT(PROC_CPU) | RM_BIT(THREADS) |		\
	RM_BIT(CTX_VOL) | RM_BIT(CTX_INVOL) | RM_BIT(FDS) | RM_BIT(GPU_MEM))
#define RM_AGENT_MASK	(RM_PROC_MASK | RM_BIT(PID) | RM_BIT(RSS))

/* One rank's report, as it goes on the wire. */
struct rank_report {
	RANK_METRICS(RANK_METRIC_MEMBER)
	uint64_t	 valid;		/* RM_BIT(id): known */
};

extern const struct metric_field rank_metrics[RM_COUNT];

/* Put the known metrics of r into a metrics frame. */
void	rank_report_put(const struct rank_report *, json_t *frame);
/* Read a rank's metrics frame; 0, or -1 with err (a field's type). */
int	rank_report_read(const json_t *frame, struct rank_report *,
	    char *err, size_t errlen);

#endif
