/*
 * sampler-sys.c: the node metrics that come from /sys, and the kernel's
 * other views of the CPUs: RAPL package power (powercap energy counters,
 * a rate against the last sample), the hottest hwmon temperature, each
 * CPU's clock (cpufreq, else /proc/cpuinfo), thermal throttling events
 * (thermal_throttle) and pressure stall information (/proc/pressure).
 * Each is unknown where its files are absent or unreadable, as most of
 * them are in VMs.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/agent/sampler-internal.h"

int
sampler_read_int(const char *path, long long *out)
{
	char	 buf[64], *end;
	ssize_t	 n;
	int	 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	do
		n = read(fd, buf, sizeof buf - 1);
	while (n == -1 && errno == EINTR);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	errno = 0;
	*out = strtoll(buf, &end, 10);
	if (end == buf || errno != 0)
		return -1;
	return 0;
}

/* RAPL package energy, summed over sockets intel-rapl:0, :1, ...  Each
 * counter wraps at its max_energy_range_uj.  energy_uj is root-only on
 * recent kernels and absent in most VMs: then power is unknown. */
void
sampler_power(struct sampler *s, struct node_sample *ns, double now)
{
	uint64_t	 cur[SAMPLER_RAPL];
	long long	 v, max;
	double		 joules = 0;
	char		 path[PATH_MAX], rel[64];
	int		 i, n;

	for (n = 0; n < SAMPLER_RAPL; n++) {
		snprintf(rel, sizeof rel, "/sys/class/powercap/intel-rapl:%d", n);
		sampler_path(s, path, sizeof path, rel);
		if (n > 0 && access(path, F_OK) != 0)
			break;
		strncat(path, "/energy_uj", sizeof path - strlen(path) - 1);
		if (sampler_read_int(path, &v) == -1 || v < 0) {
			s->rapl_n = 0;
			return;
		}
		cur[n] = v;
	}
	if (s->rapl_n == n && now > s->rapl_t) {
		for (i = 0; i < n; i++) {
			if (cur[i] >= s->rapl_uj[i]) {
				joules += (cur[i] - s->rapl_uj[i]) / 1e6;
				continue;
			}
			snprintf(rel, sizeof rel, "/sys/class/powercap/"
			    "intel-rapl:%d/max_energy_range_uj", i);
			sampler_path(s, path, sizeof path, rel);
			if (sampler_read_int(path, &max) == -1 ||
			    (uint64_t)max < s->rapl_uj[i])
				break;
			joules += ((uint64_t)max - s->rapl_uj[i] + cur[i]) / 1e6;
		}
		if (i == n)
			sampler_set(ns, NM_POWER, joules / (now - s->rapl_t));
	}
	memcpy(s->rapl_uj, cur, n * sizeof cur[0]);
	s->rapl_n = n;
	s->rapl_t = now;
}

/* The hottest of ROOT/sys/class/hwmon/hwmon*\/temp*_input, millidegrees. */
void
sampler_temp(struct sampler *s, struct node_sample *ns)
{
	char		 dir[PATH_MAX], path[PATH_MAX + 512];
	DIR		*top, *d;
	struct dirent	*e, *f;
	long long	 v, best = LLONG_MIN;
	size_t		 n;

	sampler_path(s, dir, sizeof dir, "/sys/class/hwmon");
	if ((top = opendir(dir)) == NULL)
		return;
	while ((e = readdir(top)) != NULL) {
		if (strncmp(e->d_name, "hwmon", 5) != 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if ((d = opendir(path)) == NULL)
			continue;
		while ((f = readdir(d)) != NULL) {
			n = strlen(f->d_name);
			if (strncmp(f->d_name, "temp", 4) != 0 || n < 10 ||
			    strcmp(f->d_name + n - 6, "_input") != 0)
				continue;
			snprintf(path, sizeof path, "%s/%s/%s", dir,
			    e->d_name, f->d_name);
			/* A sensor that is not wired up reads as an error. */
			if (sampler_read_int(path, &v) == 0 && v > best)
				best = v;
		}
		closedir(d);
	}
	closedir(top);
	if (best != LLONG_MIN)
		sampler_set(ns, NM_TEMP, best / 1000.0);
}

/* /proc/cpuinfo: "processor : N" then "cpu MHz : X" for each CPU. */
struct sampler_mhz_arg {
	struct node_lists	*nl;
	long			 cpu;
	double			 sum;
	int			 n;
};

static int
sampler_mhz_line(char *line, void *arg)
{
	struct sampler_mhz_arg *a = arg;
	char		*colon = strchr(line, ':');
	double		 mhz;

	if (colon == NULL)
		return 0;
	if (strncmp(line, "processor", 9) == 0)
		a->cpu = strtol(colon + 1, NULL, 10);
	else if (strncmp(line, "cpu MHz", 7) == 0 &&
	    (mhz = strtod(colon + 1, NULL)) > 0) {
		a->sum += mhz;
		a->n++;
		if (a->nl != NULL && a->cpu >= 0 && a->cpu < a->nl->ncores) {
			a->nl->cores[a->cpu].v[CM_FREQ] = mhz;
			a->nl->cores[a->cpu].valid |= UINT64_C(1) << CM_FREQ;
		}
	}
	return 0;
}

/* Each CPU's clock: cpufreq's scaling_cur_freq (kHz) where the kernel has
 * a driver for it, else what /proc/cpuinfo says; the node's is the mean. */
void
sampler_freq(struct sampler *s, struct node_sample *ns, struct node_lists *nl)
{
	struct sampler_mhz_arg a = { nl, -1, 0, 0 };
	char		 rel[96], path[PATH_MAX];
	long long	 khz;
	int		 cpus = node_sample_valid(ns, NM_CPUS) ?
			    (int)ns->v[NM_CPUS] : 0;

	for (int c = 0; c < cpus; c++) {
		snprintf(rel, sizeof rel, "/sys/devices/system/cpu/cpu%d/"
		    "cpufreq/scaling_cur_freq", c);
		sampler_path(s, path, sizeof path, rel);
		if (sampler_read_int(path, &khz) != 0 || khz <= 0)
			break;
		a.sum += khz / 1000.0;
		a.n++;
		if (nl != NULL && c < nl->ncores) {
			nl->cores[c].v[CM_FREQ] = khz / 1000.0;
			nl->cores[c].valid |= UINT64_C(1) << CM_FREQ;
		}
	}
	if (a.n == 0 || a.n < cpus) {
		a.sum = 0;
		a.n = 0;
		if (sampler_lines(s, "/proc/cpuinfo", sampler_mhz_line, &a) != 0)
			return;
	}
	if (a.n > 0)
		sampler_set(ns, NM_CPU_FREQ, a.sum / a.n);
}

/* Thermal throttling events a second: every CPU's core_throttle_count
 * and package_throttle_count (x86, with the therm_throt driver). */
void
sampler_throttle(struct sampler *s, struct node_sample *ns, double now)
{
	static const char *const which[] = { "core", "package" };
	char		 rel[128], path[PATH_MAX];
	long long	 v;
	uint64_t	 sum = 0;
	int		 cpus = node_sample_valid(ns, NM_CPUS) ?
			    (int)ns->v[NM_CPUS] : 0, found = 0;
	double		 r;

	for (int c = 0; c < cpus; c++) {
		for (int k = 0; k < 2; k++) {
			snprintf(rel, sizeof rel, "/sys/devices/system/cpu/cpu%d/"
			    "thermal_throttle/%s_throttle_count", c, which[k]);
			sampler_path(s, path, sizeof path, rel);
			if (sampler_read_int(path, &v) == 0 && v >= 0) {
				sum += (uint64_t)v;
				found++;
			}
		}
		if (found == 0)
			break;		/* not on this machine */
	}
	if (found == 0) {
		s->throttle.have = false;
		return;
	}
	if (sampler_rates(&s->throttle, &sum, 1, now, 1, &r))
		sampler_set(ns, NM_CPU_THROTTLE, r);
}

struct sampler_psi_arg {
	double		 v[2];		/* some, full */
	int		 got;		/* bit per line */
};

/* "some avg10=0.12 avg60=... total=..." and "full avg10=...". */
static int
sampler_psi_line(char *line, void *arg)
{
	struct sampler_psi_arg *a = arg;
	int		 k = strncmp(line, "some ", 5) == 0 ? 0 :
			    strncmp(line, "full ", 5) == 0 ? 1 : -1;
	char		*p = strstr(line, "avg10="), *end;

	if (k < 0 || p == NULL)
		return 0;
	a->v[k] = strtod(p + 6, &end);
	if (end != p + 6)
		a->got |= 1 << k;
	return 0;
}

/* Pressure stall information, the last 10 s, as a percent of the time. */
void
sampler_psi(struct sampler *s, struct node_sample *ns)
{
	static const char *const files[] = { "/proc/pressure/cpu",
		"/proc/pressure/memory", "/proc/pressure/io" };
	static const enum node_metric some[] = { NM_PSI_CPU, NM_PSI_MEM,
		NM_PSI_IO };

	for (int i = 0; i < 3; i++) {
		struct sampler_psi_arg a = { { 0, 0 }, 0 };

		if (sampler_lines(s, files[i], sampler_psi_line, &a) != 0)
			continue;
		if (a.got & 1)
			sampler_set(ns, some[i], a.v[0]);
		if (a.got & 2)		/* the _FULL row follows its "some" */
			sampler_set(ns, some[i] + 1, a.v[1]);
	}
}
