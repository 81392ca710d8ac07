/*
 * journal.c: append (durable or lazy), the batched fsync, rotation and
 * replay of the journal (journal.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "lib/clock.h"

#include "lib/xmalloc.h"
#include "backend/core/journal.h"

struct journal {
	int	 fd;
	char	*path;
	long long size, limit;
	double	 dirty_since;	/* CLOCK_MONOTONIC of the oldest unsynced
				 * write; 0 = none */
	long	 syncs;
};

static int
journal_open_fd(const char *path, long long *size, char *err, size_t errlen)
{
	int	 fd;
	off_t	 end;
	char	 last = '\n';

	fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(err, errlen, "journal %s: %s", path, strerror(errno));
		return -1;
	}
	/* After a crash mid-line, start the next record on a line of its own. */
	if ((end = lseek(fd, 0, SEEK_END)) > 0 &&
	    pread(fd, &last, 1, end - 1) == 1 && last != '\n' &&
	    write(fd, "\n", 1) != 1) {
		snprintf(err, errlen, "journal %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	*size = end > 0 ? (long long)end + (last != '\n') : 0;
	return fd;
}

struct journal *
journal_open(const char *path, char *err, size_t errlen)
{
	struct journal	*j;
	long long	 size = 0;
	int		 fd;

	if ((fd = journal_open_fd(path, &size, err, errlen)) < 0)
		return NULL;
	j = xcalloc(1, sizeof *j);
	j->fd = fd;
	j->path = xstrdup(path);
	j->size = size;
	j->limit = JOURNAL_MAX_BYTES;
	return j;
}

void
journal_close(struct journal *j)
{
	if (j == NULL)
		return;
	if (j->dirty_since > 0)
		fdatasync(j->fd);
	close(j->fd);
	free(j->path);
	free(j);
}

static int
journal_sync(struct journal *j)
{
	j->dirty_since = 0;
	j->syncs++;
	return fdatasync(j->fd);
}

static int
journal_write(struct journal *j, json_t *obj)
{
	struct timeval	 tv;
	char		*line;
	size_t		 len;
	int		 rc = 0;

	if (obj == NULL) {	/* a pack that failed: its caller says why */
		errno = EINVAL;
		return -1;
	}
	gettimeofday(&tv, NULL);
	json_object_set_new(obj, "ts", json_real(tv.tv_sec + tv.tv_usec * 1e-6));
	if ((line = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER)) == NULL) {
		errno = EINVAL;
		return -1;
	}
	len = strlen(line);
	line = xrealloc(line, len + 2);
	line[len++] = '\n';
	line[len] = '\0';
	/* One write() per record: O_APPEND keeps records whole. */
	if (write(j->fd, line, len) != (ssize_t)len)
		rc = -1;
	else {
		j->size += (long long)len;
		if (j->dirty_since == 0)
			j->dirty_since = clock_mono();
	}
	free(line);
	return rc;
}

int
journal_append(struct journal *j, json_t *obj)
{
	if (journal_write(j, obj) != 0)
		return -1;
	return journal_sync(j);
}

int
journal_append_lazy(struct journal *j, json_t *obj)
{
	return journal_write(j, obj);
}

int
journal_tick(struct journal *j, double now)
{
	if (j == NULL || j->dirty_since == 0 ||
	    now - j->dirty_since < JOURNAL_SYNC_S)
		return 0;
	return journal_sync(j);
}

int
journal_rotate_due(const struct journal *j)
{
	return j != NULL && j->size >= j->limit;
}

void
journal_set_limit(struct journal *j, long long bytes)
{
	j->limit = bytes;
}

long
journal_syncs(const struct journal *j)
{
	return j->syncs;
}

int
journal_rotate(struct journal *j, char *err, size_t errlen)
{
	char		 old[PATH_MAX + 8], dir[PATH_MAX], *slash;
	long long	 size = 0;
	int		 fd, dfd;

	snprintf(old, sizeof old, "%s.1", j->path);
	if (journal_sync(j) != 0 || rename(j->path, old) != 0) {
		snprintf(err, errlen, "journal %s: rotating: %s", j->path,
		    strerror(errno));
		return -1;
	}
	if ((fd = journal_open_fd(j->path, &size, err, errlen)) < 0) {
		rename(old, j->path);	/* keep appending to the old one */
		return -1;
	}
	close(j->fd);
	j->fd = fd;
	j->size = size;
	/* The rename and the new file survive a crash. */
	snprintf(dir, sizeof dir, "%s", j->path);
	if ((slash = strrchr(dir, '/')) != NULL) {
		*slash = '\0';
		if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
			fsync(dfd);
			close(dfd);
		}
	}
	return 0;
}

int
journal_replay(const char *path, void (*fn)(void *, json_t *), void *ctx,
    int *bad, char *err, size_t errlen)
{
	FILE		*f;
	char		*line = NULL;
	size_t		 cap = 0;
	ssize_t		 n;
	int		 count = 0, lineno = 0;
	json_t		*rec;
	json_error_t	 jerr;

	*bad = 0;
	if ((f = fopen(path, "r")) == NULL) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "journal %s: %s", path, strerror(errno));
		return -1;
	}
	while ((n = getline(&line, &cap, f)) > 0) {
		lineno++;
		if (n == 1 && line[0] == '\n')
			continue;
		rec = NULL;
		if (line[n - 1] == '\n')
			rec = json_loadb(line, (size_t)n - 1, 0, &jerr);
		if (!json_is_object(rec)) {
			if (*bad == 0)
				snprintf(err, errlen, "journal %s:%d: %s; skipped",
				    path, lineno, line[n - 1] != '\n' ?
				    "last line is cut short" : "not a JSON object");
			(*bad)++;
			json_decref(rec);
			continue;
		}
		fn(ctx, rec);
		json_decref(rec);
		count++;
	}
	free(line);
	fclose(f);
	return count;
}
