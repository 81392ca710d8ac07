/*
 * sampler-internal.h: the sampler's state, shared by sampler.c (/proc)
 * and sampler-sys.c (RAPL power and hwmon temperatures under /sys).
 */
#ifndef HUNTER_SAMPLER_INTERNAL_H
#define HUNTER_SAMPLER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "backend/agent/sampler.h"

/* Sockets summed for RAPL power; more than any board has. */
#define SAMPLER_RAPL	16

/* A pair of cumulative counters and when they were read, for a rate. */
struct sampler_prev {
	bool		 have;
	uint64_t	 v[2];
	double		 t;
};

struct sampler {
	char		*root;
	double		(*now)(void);

	bool		 have_cpu;
	uint64_t	 cpu[8];	/* user nice system idle iowait irq softirq steal */
	struct sampler_prev net, disk;

	int		 rapl_n;	/* packages in rapl_uj; 0: none yet */
	uint64_t	 rapl_uj[SAMPLER_RAPL];
	double		 rapl_t;
};

static inline void
sampler_set(struct node_sample *ns, enum node_metric m, double v)
{
	ns->v[m] = v;
	ns->valid |= UINT32_C(1) << m;
}

static inline void
sampler_path(const struct sampler *s, char *buf, size_t len, const char *rel)
{
	snprintf(buf, len, "%s%s", s->root, rel);
}

/* sampler-sys.c: RAPL package power (a rate against the last sample,
 * at monotonic time now) and the hottest hwmon sensor. */
void	sampler_power(struct sampler *, struct node_sample *, double now);
void	sampler_temp(struct sampler *, struct node_sample *);

#endif
