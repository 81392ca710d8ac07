/*
 * sampler-read.c: what the sampler's files share: a file of /proc or /sys
 * read line by line through a stack buffer, rates from counters against
 * their last reading, and the readings kept for the things of a list (an
 * interface, a disk), found again by name.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "backend/agent/sampler-internal.h"

/* Longest line handed to a parser; longer ones (the intr line of
 * /proc/stat) are cut, which no parser here minds. */
#define SAMPLER_LINE	4096

int
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

bool
sampler_rates(struct sampler_prev *p, const uint64_t *cur, int n, double now,
    double scale, double *out)
{
	double	 dt = now - p->t;
	bool	 ok = p->have && dt > 0;

	for (int i = 0; ok && i < n; i++)
		ok = cur[i] >= p->v[i];
	for (int i = 0; ok && i < n; i++)
		out[i] = (double)(cur[i] - p->v[i]) * scale / dt;
	p->have = true;
	memcpy(p->v, cur, sizeof *cur * (size_t)n);
	p->t = now;
	return ok;
}

struct sampler_named *
sampler_named(struct sampler_named *e, int n, const char *name)
{
	struct sampler_named *free = NULL;

	for (int i = 0; i < n; i++) {
		if (e[i].name[0] != '\0' && strcmp(e[i].name, name) == 0) {
			e[i].seen = true;
			return &e[i];
		}
		if (free == NULL && (e[i].name[0] == '\0' || !e[i].seen))
			free = &e[i];
	}
	if (free == NULL)
		return NULL;
	memset(free, 0, sizeof *free);
	snprintf(free->name, sizeof free->name, "%s", name);
	free->seen = true;
	return free;
}

void
sampler_named_begin(struct sampler_named *e, int n)
{
	for (int i = 0; i < n; i++)
		e[i].seen = false;
}

void
sampler_named_end(struct sampler_named *e, int n)
{
	for (int i = 0; i < n; i++) {
		if (!e[i].seen)
			memset(&e[i], 0, sizeof e[i]);
	}
}

