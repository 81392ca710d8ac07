/*
 * journal.c: append (durable or lazy), the batched fsync, rotation and
 * replay of the journal (journal.h).
 *
 * The file holds whole records only: a write that comes back short (a
 * full disk, RLIMIT_FSIZE) is cut back to the end of the last whole
 * record, so the next record starts a line of its own instead of gluing
 * onto half of this one.  The first failure is reported once through
 * the trouble callback, and so is the first record written after, with
 * the count of those lost between.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
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
	long long size, limit;	/* size: up to the end of the last record */
	double	 dirty_since;	/* CLOCK_MONOTONIC of the oldest unsynced
				 * write; 0 = none */
	long	 syncs;
	bool	 cut;		/* the file may end mid-record: the next
				 * record starts with a newline */
	int	 failing;	/* errno of the failure not yet over; 0 */
	long	 lost;		/* records not taken since it began */
	journal_trouble_fn trouble;
	void	*trouble_ctx;
};

/* A write or a sync failed with err: say so, the first time. */
static void
journal_fail(struct journal *j, int err)
{
	char	 what[PATH_MAX + 256];

	j->lost++;
	if (j->failing != 0)
		return;
	j->failing = err;
	snprintf(what, sizeof what, "journal %s: a record was not written "
	    "(%s); the file keeps its whole records, and the next ones are "
	    "lost until it can be written again", j->path, strerror(err));
	if (j->trouble != NULL)
		j->trouble(j->trouble_ctx, what);
	errno = err;
}

/* A record was written after a failure: say that it is over. */
static void
journal_recovered(struct journal *j)
{
	char	 what[PATH_MAX + 128];
	long	 lost = j->lost;

	j->failing = 0;
	j->lost = 0;
	snprintf(what, sizeof what, "journal %s: writing again; %ld record%s "
	    "lost", j->path, lost, lost == 1 ? " was" : "s were");
	if (j->trouble != NULL)
		j->trouble(j->trouble_ctx, what);
}

/*
 * Open path for appending.  After a crash mid-line the next record starts
 * on a line of its own: the cut line is ended here (replay reports and
 * skips it), or, on a disk too full even for that, *cut says the next
 * record begins with the newline.
 */
static int
journal_open_fd(const char *path, long long *size, bool *cut, char *err,
    size_t errlen)
{
	int	 fd;
	off_t	 end;
	char	 last = '\n';

	fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
	    0600);
	if (fd < 0) {
		snprintf(err, errlen, "journal %s: %s", path, strerror(errno));
		return -1;
	}
	*cut = false;
	if ((end = lseek(fd, 0, SEEK_END)) > 0 &&
	    pread(fd, &last, 1, end - 1) == 1 && last != '\n') {
		if (write(fd, "\n", 1) == 1)
			end++;
		else
			*cut = true;
	}
	*size = end > 0 ? (long long)end : 0;
	return fd;
}

struct journal *
journal_open(const char *path, char *err, size_t errlen)
{
	struct journal	*j;
	long long	 size = 0;
	bool		 cut;
	int		 fd;

	/* A write past RLIMIT_FSIZE fails with EFBIG, a failure like a
	 * full disk's, instead of killing the backend. */
	signal(SIGXFSZ, SIG_IGN);
	if ((fd = journal_open_fd(path, &size, &cut, err, errlen)) < 0)
		return NULL;
	j = xcalloc(1, sizeof *j);
	j->fd = fd;
	j->path = xstrdup(path);
	j->size = size;
	j->cut = cut;
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
	if (fdatasync(j->fd) == 0)
		return 0;
	journal_fail(j, errno);
	return -1;
}

/* A write of len bytes came back short (or failed): back to the end of
 * the last whole record, or, when even that fails, a newline first
 * next time. */
static void
journal_cut_back(struct journal *j, int err)
{
	struct stat	 st;

	if (ftruncate(j->fd, (off_t)j->size) != 0) {
		j->cut = true;
		if (fstat(j->fd, &st) == 0)
			j->size = (long long)st.st_size;
	}
	journal_fail(j, err);
}

static int
journal_write(struct journal *j, json_t *obj)
{
	struct timeval	 tv;
	char		*line;
	size_t		 len, done;
	ssize_t		 n = 0;
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
	line = xrealloc(line, len + 3);
	if (j->cut) {		/* the file may end mid-record */
		memmove(line + 1, line, len);
		line[0] = '\n';
		len++;
	}
	line[len++] = '\n';
	line[len] = '\0';
	/* One write() per record (O_APPEND; the backend is the only
	 * writer): the rest of a short one is written after it, which
	 * either ends the record or says why it cannot. */
	for (done = 0; done < len; done += (size_t)n) {
		if ((n = write(j->fd, line + done, len - done)) > 0)
			continue;
		if (n < 0 && errno == EINTR) {
			n = 0;
			continue;
		}
		if (n == 0)
			errno = ENOSPC;
		break;
	}
	if (done < len) {
		journal_cut_back(j, errno);
		rc = -1;
	} else {
		j->size += (long long)len;
		j->cut = false;
		if (j->dirty_since == 0)
			j->dirty_since = clock_mono();
		if (j->failing != 0)
			journal_recovered(j);
	}
	free(line);
	if (rc != 0)
		errno = j->failing != 0 ? j->failing : EIO;
	return rc;
}

int
journal_append(struct journal *j, json_t *obj)
{
	if (journal_write(j, obj) != 0)
		return -1;
	return journal_sync(j);
}

void
journal_on_trouble(struct journal *j, journal_trouble_fn fn, void *ctx)
{
	j->trouble = fn;
	j->trouble_ctx = ctx;
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
	bool		 cut;
	int		 fd, dfd;

	snprintf(old, sizeof old, "%s.1", j->path);
	if (journal_sync(j) != 0 || rename(j->path, old) != 0) {
		snprintf(err, errlen, "journal %s: rotating: %s", j->path,
		    strerror(errno));
		return -1;
	}
	if ((fd = journal_open_fd(j->path, &size, &cut, err, errlen)) < 0) {
		rename(old, j->path);	/* keep appending to the old one */
		return -1;
	}
	close(j->fd);
	j->fd = fd;
	j->size = size;
	j->cut = cut;
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
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
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
				snprintf(err, errlen, "%s:%d: %s; skipped",
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
