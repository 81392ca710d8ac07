/*
 * sampler-internal.h: the sampler's state, shared by its files:
 * sampler.c (CPUs, load, memory, page faults from /proc), sampler-read.c
 * (reading files, rates, the readings of a list's things), sampler-net.c
 * (interfaces, TCP), sampler-disk.c (disks, file systems, checkpoints),
 * sampler-sys.c (RAPL, hwmon, clocks, throttling, pressure),
 * sampler-proc.c (the ranks' processes and the agent's fds).
 */
#ifndef HUNTER_SAMPLER_INTERNAL_H
#define HUNTER_SAMPLER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "backend/agent/sampler.h"

/* Sockets summed for RAPL power; more than any board has. */
#define SAMPLER_RAPL	16
/* Counters one rate is taken over at most. */
#define SAMPLER_CTRS	8
/* Processes whose counters are kept between samples. */
#define SAMPLER_PROCS	64
/* Interfaces whose counters are kept: the sums are of each one's growth,
 * so one that goes away takes nothing with it. */
#define SAMPLER_IFACES	1024

/* Cumulative counters and when they were read, for rates. */
struct sampler_prev {
	bool		 have;
	uint64_t	 v[SAMPLER_CTRS];
	double		 t;
};

/* The same for one thing of a list, found again by its name. */
struct sampler_named {
	char		 name[NODE_NAME_MAX];
	struct sampler_prev p;
	bool		 seen;		/* in this sample */
};

/* A rank's processes between samples. */
struct sampler_proc {
	long		 pid;		/* 0: a free slot */
	struct sampler_prev p;		/* CPU ticks, voluntary, involuntary */
	bool		 seen;
};

struct sampler {
	char		*root;
	double		(*now)(void);
	char		*state_dir, *ckpt_dir;	/* NULL: not sampled */

	bool		 have_cpu;
	uint64_t	 cpu[8];	/* user nice system idle iowait irq softirq steal */
	struct sampler_prev core[NODE_CORES_MAX];
	struct sampler_prev net, disk, tcp, faults, throttle;
	struct sampler_named ifaces[SAMPLER_IFACES], disks[NODE_DISKS_MAX];
	struct sampler_proc procs[SAMPLER_PROCS];

	int		 rapl_n;	/* packages in rapl_uj; 0: none yet */
	uint64_t	 rapl_uj[SAMPLER_RAPL];
	double		 rapl_t;
};

static inline void
sampler_set(struct node_sample *ns, enum node_metric m, double v)
{
	ns->v[m] = v;
	ns->valid |= UINT64_C(1) << m;
}

static inline void
sampler_path(const struct sampler *s, char *buf, size_t len, const char *rel)
{
	snprintf(buf, len, "%s%s", s->root, rel);
}

/* sampler-read.c: call fn on each line of ROOT/rel until it returns
 * nonzero; -1 when the file cannot be read.  Lines past 4 KiB are cut. */
int	sampler_lines(const struct sampler *, const char *rel,
	    int (*fn)(char *, void *), void *arg);
/*
 * Rates of n counters against the last reading in p, per second at
 * monotonic time now, times scale, into out: true when there are rates.
 * A counter that went back (a reset, a device gone) gives none this time
 * and the reading becomes the new base; so does the first.
 */
bool	sampler_rates(struct sampler_prev *, const uint64_t *cur, int n,
	    double now, double scale, double *out);
/* The entry of name among n (found, or a free or unseen one taken over:
 * its base is then new); NULL when the list is full of seen ones. */
struct sampler_named *sampler_named(struct sampler_named *, int n,
	    const char *name);
/* Clear the seen marks before a sample; forget those not seen after. */
void	sampler_named_begin(struct sampler_named *, int n);
void	sampler_named_end(struct sampler_named *, int n);
/* Read one integer from a file at path (not under the root). */
int	sampler_read_int(const char *path, long long *out);

/* sampler-net.c: interfaces (totals and the list) and TCP retransmits. */
void	sampler_net(struct sampler *, struct node_sample *, struct node_lists *,
	    double now);
void	sampler_tcp(struct sampler *, struct node_sample *, double now);
/* sampler-disk.c: whole disks (totals, the busiest, the list), the state
 * and checkpoint file systems and the newest checkpoint. */
void	sampler_disk(struct sampler *, struct node_sample *, struct node_lists *,
	    double now);
void	sampler_fs(struct sampler *, struct node_sample *);
/* sampler-sys.c: RAPL package power (a rate against the last sample,
 * at monotonic time now), the hottest hwmon sensor, the CPUs' clocks,
 * thermal throttling and pressure stall information. */
void	sampler_power(struct sampler *, struct node_sample *, double now);
void	sampler_temp(struct sampler *, struct node_sample *);
void	sampler_freq(struct sampler *, struct node_sample *, struct node_lists *);
void	sampler_throttle(struct sampler *, struct node_sample *, double now);
void	sampler_psi(struct sampler *, struct node_sample *);
/* sampler-proc.c: the agent's open fds. */
void	sampler_agent_fds(struct sampler *, struct node_sample *);

#endif
