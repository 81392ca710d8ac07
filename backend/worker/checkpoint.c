/*
 * checkpoint.c: the checkpoint directory: step-N.safetensors names, the
 * write through a temporary file, pruning to `keep`, and the resume from
 * the newest file that loads (the file itself is checkpoint-file.c's).
 *
 * The directory may be shared (checkpoint.dir is the job's to choose), so
 * the temporary file has a name nobody can guess and is created with
 * O_EXCL | O_NOFOLLOW: a file or link planted there is never opened,
 * truncated or renamed over a checkpoint.  Temporary files a crashed
 * writer left behind are removed by a later prune once they are an hour
 * old, and only when they are this user's regular files.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/statedir.h"
#include "lib/xmalloc.h"
#include "backend/worker/checkpoint-internal.h"

#define CKPT_TMP_TRIES	16	/* names tried before giving up (EEXIST) */
#define CKPT_STALE_S	3600	/* a temporary file this old is abandoned */

static int
ckpt_name_step(const char *name, long *step)
{
	char	 tail[32];

	if (sscanf(name, "step-%ld.safetenso%31s", step, tail) != 2)
		return -1;
	return strcmp(tail, "rs") == 0 ? 0 : -1;
}

static int
cmp_long_desc(const void *a, const void *b)
{
	long	 x = *(const long *)a, y = *(const long *)b;

	return (x < y) - (x > y);
}

/* The steps of dir's checkpoints, newest first.  Returns the count. */
static int
ckpt_list(const char *dir, long **steps)
{
	DIR		*d;
	struct dirent	*de;
	int		 n = 0;
	long		 step;

	*steps = NULL;
	if ((d = opendir(dir)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (ckpt_name_step(de->d_name, &step) != 0)
			continue;
		*steps = xreallocarray(*steps, (size_t)n + 1, sizeof **steps);
		(*steps)[n++] = step;
	}
	closedir(d);
	if (n > 1)
		qsort(*steps, (size_t)n, sizeof **steps, cmp_long_desc);
	return n;
}

/* Remove this user's temporary files older than CKPT_STALE_S. */
static void
ckpt_prune_tmp(const char *dir)
{
	DIR		*d;
	struct dirent	*de;
	struct stat	 st;
	size_t		 len;
	char		 path[4096];

	if ((d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (strncmp(de->d_name, ".step-", 6) != 0 || len < 4 ||
		    strcmp(de->d_name + len - 4, ".tmp") != 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
		    st.st_uid == geteuid() &&
		    time(NULL) - st.st_mtime > CKPT_STALE_S)
			unlink(path);
	}
	closedir(d);
}

static void
ckpt_prune(const char *dir, int keep)
{
	long	*steps;
	int	 n = ckpt_list(dir, &steps);
	char	 path[4096];

	for (int i = keep; i < n; i++) {
		snprintf(path, sizeof path, "%s/step-%09ld.safetensors", dir,
		    steps[i]);
		unlink(path);
	}
	free(steps);
	ckpt_prune_tmp(dir);
}

/* Create a temporary file of step's in dir under a fresh random name
 * (into tmp); the fd, or -1 with errno set. */
static int
ckpt_tmp_open(const char *dir, long step, char *tmp, size_t tmplen)
{
	uint32_t	 r[2];
	int		 fd;

	for (int i = 0; i < CKPT_TMP_TRIES; i++) {
		if (getentropy(r, sizeof r) != 0)
			return -1;
		snprintf(tmp, tmplen, "%s/.step-%09ld.%08x%08x.tmp", dir, step,
		    r[0], r[1]);
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1;
}

int
checkpoint_write(const char *dir, int keep, const struct model *m,
    const struct optimizer *o, const struct ckpt_meta *cm, char *path,
    size_t pathlen, char *err, size_t errlen)
{
	int	 fd, dfd;
	char	 tmp[4096];

	if (mkdir_p(dir, 0700) != 0) {
		snprintf(err, errlen, "checkpoint dir %s: %s", dir, strerror(errno));
		return -1;
	}
	snprintf(path, pathlen, "%s/step-%09ld.safetensors", dir, cm->step);
	if ((fd = ckpt_tmp_open(dir, cm->step, tmp, sizeof tmp)) < 0) {
		snprintf(err, errlen, "writing checkpoint %s: a temporary file "
		    "in %s: %s (the previous checkpoints are intact)", path, dir,
		    strerror(errno));
		return -1;
	}
	if (ckpt_file_write(fd, m, o, cm) != 0 || fsync(fd) != 0) {
		close(fd);
		goto fail;
	}
	if (close(fd) != 0 || rename(tmp, path) != 0)
		goto fail;
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		fsync(dfd);
		close(dfd);
	}
	ckpt_prune(dir, keep);
	return 0;

fail:
	snprintf(err, errlen, "writing checkpoint %s: %s (the previous "
	    "checkpoints are intact)", path, strerror(errno));
	unlink(tmp);
	return -1;
}

int
checkpoint_resume(const char *dir, struct model *m, struct optimizer *o,
    struct ckpt_meta *cm, char *path, size_t pathlen,
    void (*skipped)(void *, const char *, const char *), void *ctx,
    char *err, size_t errlen)
{
	long	*steps;
	int	 n = ckpt_list(dir, &steps), rc = 1;
	char	 why[512];

	for (int i = 0; i < n; i++) {
		snprintf(path, pathlen, "%s/step-%09ld.safetensors", dir, steps[i]);
		if (checkpoint_load(path, m, o, cm, why, sizeof why) == 0) {
			rc = 0;
			break;
		}
		if (skipped != NULL)
			skipped(ctx, path, why);
	}
	if (rc == 1 && n > 0) {
		snprintf(err, errlen, "no valid checkpoint among %d in %s", n, dir);
		rc = -1;
	}
	free(steps);
	return rc;
}
