/*
 * sampler.c: one node sample, read from /proc under a root directory (""
 * for the real system): the CPUs (all and each), load, memory and major
 * page faults here, the rest in the other sampler-*.c files.  It runs at
 * 1 Hz in the agent, so each file is read with open/read through a fixed
 * stack buffer, line by line, and nothing is allocated per sample except
 * what opendir needs.  A file that cannot be read clears the valid bits
 * of its metrics only, and forgets the counters kept for rates, so the
 * next rate against it is also unknown rather than computed against
 * stale values.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/xmalloc.h"
#include "backend/agent/sampler-internal.h"
#include "backend/agent/sampler.h"

/* Jiffies of one "cpu" line of /proc/stat: user nice system idle iowait
 * irq softirq steal; how many fields there were. */
static int
sampler_cpu_fields(const char *p, uint64_t *cpu)
{
	char	*end;
	int	 i;

	/* Fields past steal (guest, guest_nice) are already in user and nice. */
	for (i = 0; i < 8; i++) {
		cpu[i] = strtoull(p, &end, 10);
		if (end == p)
			break;
		p = end;
	}
	for (int k = i; k < 8; k++)
		cpu[k] = 0;
	return i;
}

struct sampler_cpu_arg {
	struct sampler		*s;
	uint64_t		 all[8];
	bool			 have_all;
	int			 cpus;
	struct node_lists	*nl;
	double			 now;
};

/* The share of time busy: everything but idle and iowait, steal too. */
static double
sampler_busy(const uint64_t *d, uint64_t total)
{
	return 100.0 * (double)(total - d[3] - d[4]) / (double)total;
}

/* /proc/stat: the first "cpu " line (all CPUs), then "cpuN" for each. */
static int
sampler_cpu_line(char *line, void *arg)
{
	struct sampler_cpu_arg *a = arg;
	uint64_t	 cur[8], d[8], total = 0;
	char		*end;
	long		 n;

	if (strncmp(line, "cpu", 3) != 0)
		return a->cpus > 0;	/* past the cpu lines: done */
	if (line[3] == ' ') {
		if (!a->have_all)
			a->have_all = sampler_cpu_fields(line + 4, a->all) >= 4;
		return 0;
	}
	n = strtol(line + 3, &end, 10);
	if (end == line + 3 || *end != ' ' || n < 0)
		return 0;
	a->cpus++;
	if (n >= NODE_CORES_MAX || sampler_cpu_fields(end, cur) < 4)
		return 0;
	if (a->nl != NULL && a->nl->ncores <= n) {
		for (long k = a->nl->ncores; k <= n; k++)
			memset(&a->nl->cores[k], 0, sizeof a->nl->cores[k]);
		a->nl->ncores = (int)n + 1;
	}
	for (int i = 0; i < 8; i++) {
		struct sampler_prev *p = &a->s->core[n];

		if (p->have && cur[i] < p->v[i])
			p->have = false;
		d[i] = cur[i] - p->v[i];
		total += d[i];
	}
	if (a->s->core[n].have && total == 0)
		return 0;	/* no tick on it yet: keep the older base */
	if (a->s->core[n].have && a->nl != NULL) {
		a->nl->cores[n].v[CM_UTIL] = sampler_busy(d, total);
		a->nl->cores[n].valid |= UINT64_C(1) << CM_UTIL;
	}
	memcpy(a->s->core[n].v, cur, sizeof cur);
	a->s->core[n].have = true;
	return 0;
}

/* CPU shares since the last sample.  user counts nice too, sys counts irq
 * and softirq; util is everything but idle and iowait, steal included. */
static void
sampler_cpu(struct sampler *s, struct node_sample *ns, struct node_lists *nl)
{
	struct sampler_cpu_arg a = { .s = s, .nl = nl };
	uint64_t	 d[8], total = 0;
	int		 i;

	if (sampler_lines(s, "/proc/stat", sampler_cpu_line, &a) == -1) {
		s->have_cpu = false;
		for (i = 0; i < NODE_CORES_MAX; i++)
			s->core[i].have = false;
		return;
	}
	if (a.cpus > 0)
		sampler_set(ns, NM_CPUS, a.cpus);
	if (!a.have_all) {
		s->have_cpu = false;
		return;
	}
	for (i = 0; i < 8; i++) {
		if (s->have_cpu && a.all[i] < s->cpu[i])
			s->have_cpu = false;	/* counters went back: restart */
		d[i] = a.all[i] - s->cpu[i];
		total += d[i];
	}
	if (s->have_cpu && total == 0)
		return;		/* no tick yet: keep the older base */
	if (s->have_cpu) {
		sampler_set(ns, NM_CPU_UTIL, sampler_busy(d, total));
		sampler_set(ns, NM_CPU_USER, 100.0 * (d[0] + d[1]) / total);
		sampler_set(ns, NM_CPU_SYS,
		    100.0 * (d[2] + d[5] + d[6]) / total);
		sampler_set(ns, NM_CPU_IOWAIT, 100.0 * d[4] / total);
	}
	memcpy(s->cpu, a.all, sizeof s->cpu);
	s->have_cpu = true;
}

static int
sampler_load_line(char *line, void *arg)
{
	double	*load = arg;
	char	*end;

	*load = strtod(line, &end);
	if (end == line)
		*load = NAN;
	return 1;
}

static void
sampler_load(struct sampler *s, struct node_sample *ns)
{
	double	load = NAN;

	if (sampler_lines(s, "/proc/loadavg", sampler_load_line, &load) == 0 &&
	    !isnan(load))
		sampler_set(ns, NM_LOAD1, load);
}

/* /proc/meminfo's keys, in kB, with bit i of the last slot set when key
 * i was found. */
static const char *const mem_keys[] = { "MemTotal:", "MemAvailable:",
	"SwapTotal:", "SwapFree:", "Buffers:", "Cached:", "SReclaimable:" };
#define MEM_KEYS	(sizeof mem_keys / sizeof mem_keys[0])
#define MEM_FOUND	MEM_KEYS

static int
sampler_mem_line(char *line, void *arg)
{
	uint64_t	*mem = arg;
	char		*end;
	size_t		 i, n;

	for (i = 0; i < MEM_KEYS; i++) {
		n = strlen(mem_keys[i]);
		if (strncmp(line, mem_keys[i], n) != 0)
			continue;
		mem[i] = strtoull(line + n, &end, 10);
		if (end != line + n)
			mem[MEM_FOUND] |= 1u << i;
		break;
	}
	return mem[MEM_FOUND] == (1u << MEM_KEYS) - 1;
}

/* Used is what is not available; the cache is free(1)'s buff/cache. */
static void
sampler_mem(struct sampler *s, struct node_sample *ns)
{
	uint64_t	m[MEM_KEYS + 1] = { 0 }, f;

	if (sampler_lines(s, "/proc/meminfo", sampler_mem_line, m) == -1)
		return;
	f = m[MEM_FOUND];
	if (f & 1)
		sampler_set(ns, NM_MEM_TOTAL, m[0] * 1024.0);
	if ((f & 3) == 3 && m[1] <= m[0])
		sampler_set(ns, NM_MEM_USED, (m[0] - m[1]) * 1024.0);
	if (f & 2)
		sampler_set(ns, NM_MEM_AVAIL, m[1] * 1024.0);
	if ((f & 4) != 0)
		sampler_set(ns, NM_SWAP_TOTAL, m[2] * 1024.0);
	if ((f & 12) == 12 && m[3] <= m[2])
		sampler_set(ns, NM_SWAP_USED, (m[2] - m[3]) * 1024.0);
	if ((f & 0x70) == 0x70)
		sampler_set(ns, NM_MEM_CACHE, (m[4] + m[5] + m[6]) * 1024.0);
}

static int
sampler_vmstat_line(char *line, void *arg)
{
	uint64_t	*v = arg;

	if (strncmp(line, "pgmajfault ", 11) != 0)
		return 0;
	v[0] = strtoull(line + 11, NULL, 10);
	v[1] = 1;
	return 1;
}

/* Major page faults a second (/proc/vmstat's pgmajfault). */
static void
sampler_faults(struct sampler *s, struct node_sample *ns, double now)
{
	uint64_t	v[2] = { 0, 0 };
	double		r;

	if (sampler_lines(s, "/proc/vmstat", sampler_vmstat_line, v) == -1 ||
	    !v[1]) {
		s->faults.have = false;
		return;
	}
	if (sampler_rates(&s->faults, v, 1, now, 1, &r))
		sampler_set(ns, NM_MAJOR_FAULTS, r);
}

struct sampler *
sampler_create(const char *root)
{
	struct sampler	*s = xcalloc(1, sizeof *s);

	s->root = xstrdup(root != NULL ? root : "");
	s->now = clock_mono;
	return s;
}

void
sampler_free(struct sampler *s)
{
	if (s == NULL)
		return;
	free(s->root);
	free(s->state_dir);
	free(s->ckpt_dir);
	free(s);
}

void
sampler_set_clock(struct sampler *s, double (*now)(void))
{
	s->now = now != NULL ? now : clock_mono;
}

void
sampler_set_dirs(struct sampler *s, const char *state, const char *ckpt)
{
	free(s->state_dir);
	free(s->ckpt_dir);
	s->state_dir = state != NULL ? xstrdup(state) : NULL;
	s->ckpt_dir = ckpt != NULL ? xstrdup(ckpt) : NULL;
}

void
sampler_sample(struct sampler *s, struct node_sample *ns,
    struct node_lists *nl)
{
	struct timespec	ts;
	double		now = s->now();

	memset(ns, 0, sizeof *ns);
	if (nl != NULL)
		nl->ncores = nl->nifaces = nl->ndisks = 0;
	clock_gettime(CLOCK_REALTIME, &ts);
	ns->time = ts.tv_sec + ts.tv_nsec / 1e9;
	sampler_cpu(s, ns, nl);
	sampler_load(s, ns);
	sampler_mem(s, ns);
	sampler_faults(s, ns, now);
	sampler_net(s, ns, nl, now);
	sampler_tcp(s, ns, now);
	sampler_disk(s, ns, nl, now);
	sampler_fs(s, ns);
	sampler_power(s, ns, now);
	sampler_temp(s, ns);
	sampler_freq(s, ns, nl);
	sampler_throttle(s, ns, now);
	sampler_psi(s, ns);
	sampler_agent_fds(s, ns);
}

void
sample_ring_init(struct sample_ring *r, size_t cap)
{
	r->v = cap > 0 ? xcalloc(cap, sizeof *r->v) : NULL;
	r->cap = cap;
	r->head = r->len = 0;
}

void
sample_ring_free(struct sample_ring *r)
{
	free(r->v);
	r->v = NULL;
	r->cap = r->head = r->len = 0;
}

/* head is where the next sample goes; once full it is also the oldest. */
void
sample_ring_push(struct sample_ring *r, const struct node_sample *ns)
{
	if (r->cap == 0)
		return;
	r->v[r->head] = *ns;
	r->head = (r->head + 1) % r->cap;
	if (r->len < r->cap)
		r->len++;
}

const struct node_sample *
sample_ring_get(const struct sample_ring *r, size_t i)
{
	if (i >= r->len)
		return NULL;
	return &r->v[(r->head + r->cap - r->len + i) % r->cap];
}
