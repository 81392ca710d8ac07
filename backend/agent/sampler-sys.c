/*
 * sampler-sys.c: the node metrics that come from /sys: RAPL package power
 * (powercap energy counters, a rate against the last sample) and the
 * hottest hwmon temperature.  Either is unknown where its files are
 * absent or unreadable, as in most VMs.
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

/* Read one integer from a sysfs file at path. */
static int
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
