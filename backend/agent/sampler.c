/*
 * sampler.c: one node sample, read from /proc under a root directory (""
 * for the real system), and RAPL and hwmon (sampler-sys.c).  It runs at 1 Hz in the agent, so
 * each file is read with open/read through a fixed stack buffer, line by
 * line, and nothing is allocated per sample except what opendir needs for
 * hwmon.  A file that cannot be read clears the valid bits of its metrics
 * only, and forgets the counters kept for rates, so the next rate against
 * it is also unknown rather than computed against stale values.
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

/* Longest line handed to a parser; longer ones (the intr line of
 * /proc/stat) are cut, which no parser here minds. */
#define SAMPLER_LINE	4096

/* Call fn on each line of ROOT/rel until it returns nonzero.  Returns -1
 * when the file cannot be opened or read. */
static int
sampler_lines(const struct sampler *s, const char *rel,
    int (*fn)(char *, void *), void *arg)
{
	char	 path[PATH_MAX], buf[SAMPLER_LINE], *start, *nl;
	size_t	 len = 0;
	ssize_t	 n;
	int	 fd, skip = 0, stop = 0;

	sampler_path(s, path, sizeof path, rel);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	while (!stop) {
		n = read(fd, buf + len, sizeof buf - 1 - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			close(fd);
			return -1;
		}
		if (n == 0)
			break;
		len += n;
		start = buf;
		while (!stop && (nl = memchr(start, '\n', buf + len - start))) {
			*nl = '\0';
			if (!skip)
				stop = fn(start, arg);
			skip = 0;
			start = nl + 1;
		}
		len -= start - buf;
		memmove(buf, start, len);
		if (!stop && len == sizeof buf - 1) {
			/* Too long: hand on its head, drop the rest. */
			buf[len] = '\0';
			if (!skip)
				stop = fn(buf, arg);
			skip = 1;
			len = 0;
		}
	}
	if (!stop && len > 0 && !skip) {
		buf[len] = '\0';
		fn(buf, arg);
	}
	close(fd);
	return 0;
}

/* /proc/stat: the first "cpu " line, in jiffies. */
static int
sampler_cpu_line(char *line, void *arg)
{
	uint64_t	*cpu = arg;
	char		*p = line + 4, *end;
	int		 i;

	if (strncmp(line, "cpu ", 4) != 0)
		return 0;
	/* Fields past steal (guest, guest_nice) are already in user and nice. */
	for (i = 0; i < 8; i++) {
		cpu[i] = strtoull(p, &end, 10);
		if (end == p)
			break;
		p = end;
	}
	cpu[8] = i >= 4;		/* user nice system idle at least */
	return 1;
}

/* CPU shares since the last sample.  user counts nice too, sys counts irq
 * and softirq; util is everything but idle and iowait, steal included. */
static void
sampler_cpu(struct sampler *s, struct node_sample *ns)
{
	uint64_t	 cur[9] = { 0 }, d[8], total = 0;
	int		 i;

	if (sampler_lines(s, "/proc/stat", sampler_cpu_line, cur) == -1 ||
	    !cur[8]) {
		s->have_cpu = false;
		return;
	}
	for (i = 0; i < 8; i++) {
		if (s->have_cpu && cur[i] < s->cpu[i])
			s->have_cpu = false;	/* counters went back: restart */
		d[i] = cur[i] - s->cpu[i];
		total += d[i];
	}
	if (s->have_cpu && total == 0)
		return;		/* no tick yet: keep the older base */
	if (s->have_cpu) {
		sampler_set(ns, NM_CPU_UTIL,
		    100.0 * (total - d[3] - d[4]) / total);
		sampler_set(ns, NM_CPU_USER, 100.0 * (d[0] + d[1]) / total);
		sampler_set(ns, NM_CPU_SYS,
		    100.0 * (d[2] + d[5] + d[6]) / total);
		sampler_set(ns, NM_CPU_IOWAIT, 100.0 * d[4] / total);
	}
	memcpy(s->cpu, cur, sizeof s->cpu);
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

/* /proc/meminfo: MemTotal, MemAvailable, SwapTotal, SwapFree in kB, with
 * bit i of the last slot set when field i was found. */
static int
sampler_mem_line(char *line, void *arg)
{
	static const char *keys[] = {
		"MemTotal:", "MemAvailable:", "SwapTotal:", "SwapFree:"
	};
	uint64_t	*mem = arg;
	char		*end;
	size_t		 i, n;

	for (i = 0; i < 4; i++) {
		n = strlen(keys[i]);
		if (strncmp(line, keys[i], n) != 0)
			continue;
		mem[i] = strtoull(line + n, &end, 10);
		if (end != line + n)
			mem[4] |= 1u << i;
		break;
	}
	return mem[4] == 0xf;
}

static void
sampler_mem(struct sampler *s, struct node_sample *ns)
{
	uint64_t	m[5] = { 0 };

	if (sampler_lines(s, "/proc/meminfo", sampler_mem_line, m) == -1)
		return;
	if (m[4] & 1)
		sampler_set(ns, NM_MEM_TOTAL, m[0] * 1024.0);
	if ((m[4] & 3) == 3 && m[1] <= m[0])
		sampler_set(ns, NM_MEM_USED, (m[0] - m[1]) * 1024.0);
	if ((m[4] & 4) != 0)
		sampler_set(ns, NM_SWAP_TOTAL, m[2] * 1024.0);
	if ((m[4] & 12) == 12 && m[3] <= m[2])
		sampler_set(ns, NM_SWAP_USED, (m[2] - m[3]) * 1024.0);
}

/* Turn counters into per-second rates against the previous sample, scaled
 * by scale.  A counter that went back (a device gone, a reset) gives no
 * rate this time and becomes the new base. */
static void
sampler_rate(struct sampler_prev *p, const uint64_t cur[2], double now,
    double scale, struct node_sample *ns, enum node_metric m)
{
	double	dt = now - p->t;

	if (p->have && dt > 0 && cur[0] >= p->v[0] && cur[1] >= p->v[1]) {
		sampler_set(ns, m, (cur[0] - p->v[0]) * scale / dt);
		sampler_set(ns, m + 1, (cur[1] - p->v[1]) * scale / dt);
	}
	p->have = true;
	p->v[0] = cur[0];
	p->v[1] = cur[1];
	p->t = now;
}

/* /proc/net/dev: "  eth0: rxbytes 7 more... txbytes ...", lo left out. */
static int
sampler_net_line(char *line, void *arg)
{
	uint64_t		*sum = arg;
	unsigned long long	 rx, tx;
	char			*colon, *name = line;

	if ((colon = strchr(line, ':')) == NULL)
		return 0;
	*colon = '\0';
	name += strspn(name, " \t");
	if (strcmp(name, "lo") == 0)
		return 0;
	if (sscanf(colon + 1, "%llu %*u %*u %*u %*u %*u %*u %*u %llu",
	    &rx, &tx) == 2) {
		sum[0] += rx;
		sum[1] += tx;
	}
	return 0;
}

static void
sampler_net(struct sampler *s, struct node_sample *ns, double now)
{
	uint64_t	sum[2] = { 0, 0 };

	if (sampler_lines(s, "/proc/net/dev", sampler_net_line, sum) == -1) {
		s->net.have = false;
		return;
	}
	sampler_rate(&s->net, sum, now, 1, ns, NM_NET_RX);
}

struct sampler_disk_arg {
	const struct sampler	*s;
	uint64_t		 sum[2];	/* sectors read, written */
};

/* /proc/diskstats: "maj min name reads merged SECTORS ms writes merged
 * SECTORS ...".  Only whole disks count, so nothing is counted twice:
 * partitions have no /sys/block entry; loop, ram, zram, device-mapper and
 * md devices do, but they sit on top of disks or of memory. */
static int
sampler_disk_line(char *line, void *arg)
{
	static const char *skip[] = { "loop", "ram", "zram", "dm-", "md" };
	struct sampler_disk_arg	*a = arg;
	unsigned long long	 rd, wr;
	char			 name[128], path[PATH_MAX], *p;
	size_t			 i;

	if (sscanf(line, "%*u %*u %127s %*u %*u %llu %*u %*u %*u %llu",
	    name, &rd, &wr) != 3)
		return 0;
	for (i = 0; i < sizeof skip / sizeof skip[0]; i++) {
		if (strncmp(name, skip[i], strlen(skip[i])) == 0)
			return 0;
	}
	for (p = name; *p != '\0'; p++) {
		if (*p == '/')		/* cciss/c0d0 is sys/block/cciss!c0d0 */
			*p = '!';
	}
	snprintf(path, sizeof path, "%s/sys/block/%s", a->s->root, name);
	if (access(path, F_OK) == 0) {
		a->sum[0] += rd;
		a->sum[1] += wr;
	}
	return 0;
}

static void
sampler_disk(struct sampler *s, struct node_sample *ns, double now)
{
	struct sampler_disk_arg	a = { s, { 0, 0 } };

	if (sampler_lines(s, "/proc/diskstats", sampler_disk_line, &a) == -1) {
		s->disk.have = false;
		return;
	}
	sampler_rate(&s->disk, a.sum, now, 512, ns, NM_DISK_READ);
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
	free(s);
}

void
sampler_set_clock(struct sampler *s, double (*now)(void))
{
	s->now = now != NULL ? now : clock_mono;
}

void
sampler_sample(struct sampler *s, struct node_sample *ns)
{
	struct timespec	ts;
	double		now = s->now();

	memset(ns, 0, sizeof *ns);
	clock_gettime(CLOCK_REALTIME, &ts);
	ns->time = ts.tv_sec + ts.tv_nsec / 1e9;
	sampler_cpu(s, ns);
	sampler_load(s, ns);
	sampler_mem(s, ns);
	sampler_net(s, ns, now);
	sampler_disk(s, ns, now);
	sampler_power(s, ns, now);
	sampler_temp(s, ns);
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
