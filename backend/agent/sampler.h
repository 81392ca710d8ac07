/*
 * sampler.h: node metrics (docs/architecture.md, "Metrics") read from /proc, and from
 * RAPL (powercap) and hwmon where they are readable.  Every value carries
 * a validity bit: a value that cannot be read is unknown, drawn as "-",
 * never as 0.  Rates (CPU shares, bytes/s) come from the difference
 * between two samples, so the first sample has them invalid.
 */
#ifndef HUNTER_SAMPLER_H
#define HUNTER_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

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
	NM_COUNT
};

struct node_sample {
	double		 t;			/* CLOCK_REALTIME seconds */
	double		 v[NM_COUNT];
	uint32_t	 valid;			/* bit i: v[i] is known */
};

/* Whether metric m of a sample is known. */
static inline bool
node_sample_valid(const struct node_sample *ns, enum node_metric m)
{
	return (ns->valid >> m) & 1;
}

/* The JSON field name of each metric, e.g. "cpu_util", "mem_used". */
const char	*node_metric_name(enum node_metric);

struct sampler;

/* root is "" for the real system, or a directory that mirrors /proc and
 * /sys (for tests: ROOT/proc/stat, ROOT/sys/class/powercap/...). */
struct sampler	*sampler_create(const char *root);
void		 sampler_free(struct sampler *);
/* For tests: the monotonic clock, in seconds, that rates are taken
 * against; NULL puts back CLOCK_MONOTONIC. */
void		 sampler_set_clock(struct sampler *, double (*now)(void));
/* Take one sample now. */
void		 sampler_sample(struct sampler *, struct node_sample *);

/* {"t":..., "cpu_util": 12.5, ..., "power": null} -- unknown is null. */
json_t		*node_sample_json(const struct node_sample *);

/* A fixed-size ring of the most recent samples. */
struct sample_ring {
	struct node_sample *v;
	size_t		 cap, head, len;
};

void	sample_ring_init(struct sample_ring *, size_t cap);
void	sample_ring_free(struct sample_ring *);
void	sample_ring_push(struct sample_ring *, const struct node_sample *);
/* i = 0 is the oldest kept sample; NULL past the end. */
const struct node_sample *sample_ring_get(const struct sample_ring *, size_t i);

#endif
