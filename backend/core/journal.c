/*
 * journal.c: append and replay of the journal.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "lib/xmalloc.h"
#include "backend/core/journal.h"

struct journal {
	int	 fd;
	char	*path;
};

struct journal *
journal_open(const char *path, char *err, size_t errlen)
{
	struct journal	*j;
	int		 fd;
	off_t		 end;
	char		 last;

	fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(err, errlen, "journal %s: %s", path, strerror(errno));
		return NULL;
	}
	/* After a crash mid-line, start the next record on a line of its own. */
	if ((end = lseek(fd, 0, SEEK_END)) > 0 &&
	    pread(fd, &last, 1, end - 1) == 1 && last != '\n' &&
	    write(fd, "\n", 1) != 1) {
		snprintf(err, errlen, "journal %s: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	j = xcalloc(1, sizeof *j);
	j->fd = fd;
	j->path = xstrdup(path);
	return j;
}

void
journal_close(struct journal *j)
{
	if (j == NULL)
		return;
	close(j->fd);
	free(j->path);
	free(j);
}

int
journal_append(struct journal *j, json_t *obj)
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
	if (write(j->fd, line, len) != (ssize_t)len || fdatasync(j->fd) != 0)
		rc = -1;
	free(line);
	return rc;
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
