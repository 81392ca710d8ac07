/*
 * checkpoint.c: the checkpoint directory: step-N.safetensors names, the
 * write through a temporary file, pruning to `keep`, and the resume from
 * the newest file that loads (the file itself is checkpoint-file.c's).
 *
 * The directory may be shared (checkpoint.dir is the job's to choose), so
 * the temporary file has a name nobody can guess and is created with
 * O_EXCL | O_NOFOLLOW (lib/files.h): a file or link planted there is
 * never opened, truncated or renamed over a checkpoint.  A checkpoint is
 * the job's only when it is this user's regular file (not a link) and its
 * header names the job: only those count for `keep`, are pruned and are
 * resumed from, so files someone else put there decide nothing.  The
 * temporary names carry the job and the run (.step-N.JOB.RUN.<hex>.tmp):
 * what a killed run of the job left is removed when the job starts again
 * (checkpoint_clean), anything else of this user's once it is an hour old.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/files.h"
#include "lib/statedir.h"
#include "lib/xmalloc.h"
#include "backend/worker/checkpoint-internal.h"

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

/* The steps of the checkpoint names in dir, newest first.  Returns the
 * count. */
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

/* What a checkpoint name in the directory turned out to be. */
enum ckpt_own {
	CKPT_OWN,		/* this user's, and the header names the job */
	CKPT_UNREAD,		/* this user's, the header does not read */
	CKPT_FOREIGN,		/* someone else's, a link, or another job's */
	CKPT_GONE,		/* not opened */
};

/*
 * Open path and say whose checkpoint it is: the job's own is this user's
 * regular file, not a link, whose header names job.  The fd (CKPT_OWN
 * and CKPT_UNREAD), or -1 with why.
 */
static int
ckpt_open_own(const char *path, const char *job, enum ckpt_own *own,
    char *why, size_t whylen)
{
	struct stat	 st;
	char		 owner[SPEC_NAME_MAX];
	int		 fd;

	if ((fd = file_open_regular(path, O_NOFOLLOW, why, whylen)) < 0) {
		*own = errno == ELOOP || errno == EINVAL ? CKPT_FOREIGN :
		    CKPT_GONE;
		return -1;
	}
	*own = CKPT_FOREIGN;
	if (fstat(fd, &st) != 0 || st.st_uid != geteuid())
		snprintf(why, whylen, "%s: owned by uid %lu, not by you (uid "
		    "%lu): not this job's", path, (unsigned long)st.st_uid,
		    (unsigned long)geteuid());
	else if (ckpt_read_job(fd, owner, sizeof owner, why, whylen) != 0) {
		*own = CKPT_UNREAD;
		return fd;
	} else if (strcmp(owner, job) != 0)
		snprintf(why, whylen, "%s: job '%s''s, not this job's ('%s')",
		    path, owner, job);
	else {
		*own = CKPT_OWN;
		return fd;
	}
	close(fd);
	return -1;
}

/* The steps of job's own checkpoints in dir (CKPT_OWN), newest first. */
static int
ckpt_list_own(const char *dir, const char *job, long **steps)
{
	int		 n = ckpt_list(dir, steps), kept = 0, fd;
	char		 path[4096], why[512];
	enum ckpt_own	 own;

	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof path, "%s/step-%09ld.safetensors", dir,
		    (*steps)[i]);
		if ((fd = ckpt_open_own(path, job, &own, why, sizeof why)) >= 0)
			close(fd);
		if (own == CKPT_OWN)
			(*steps)[kept++] = (*steps)[i];
	}
	return kept;
}

/* The stem of step's temporary file: .step-N.JOB.RUN */
static void
ckpt_tmp_stem(char *buf, size_t len, long step, const char *job,
    long long run)
{
	snprintf(buf, len, ".step-%09ld.%s.%lld", step, job, run);
}

/* Whether name is a temporary file of job (whatever its run: *run) as
 * ckpt_tmp_stem names them. */
static bool
ckpt_tmp_of(const char *name, const char *job, long long *run)
{
	size_t	 jl = strlen(job);
	char	 stem[512], *end;
	const char *p;

	if (strncmp(name, ".step-", 6) != 0)
		return false;
	strtol(name + 6, &end, 10);
	if (end == name + 6 || *end != '.' || strncmp(end + 1, job, jl) != 0 ||
	    end[1 + jl] != '.')
		return false;
	p = end + 2 + jl;
	*run = strtoll(p, &end, 10);
	if (end == p || (size_t)(end - name) >= sizeof stem)
		return false;
	memcpy(stem, name, (size_t)(end - name));
	stem[end - name] = '\0';
	return file_tmp_name_is(name, stem) != 0;
}

/* Remove this user's temporary files in dir: job's of another run than
 * run (job NULL: none), and any older than CKPT_STALE_S.  Returns how
 * many went. */
static int
ckpt_prune_tmp(const char *dir, const char *job, long long run)
{
	DIR		*d;
	struct dirent	*de;
	struct stat	 st;
	size_t		 len;
	long long	 theirs;
	char		 path[4096];
	int		 n = 0;

	if ((d = opendir(dir)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (strncmp(de->d_name, ".step-", 6) != 0 || len < 4 ||
		    strcmp(de->d_name + len - 4, ".tmp") != 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
		    st.st_uid != geteuid())
			continue;
		if ((job != NULL && ckpt_tmp_of(de->d_name, job, &theirs) &&
		    theirs != run) || time(NULL) - st.st_mtime > CKPT_STALE_S)
			n += unlink(path) == 0;
	}
	closedir(d);
	return n;
}

static void
ckpt_prune(const char *dir, const char *job, int keep)
{
	long	*steps;
	int	 n = ckpt_list_own(dir, job, &steps);
	char	 path[4096];

	for (int i = keep; i < n; i++) {
		snprintf(path, sizeof path, "%s/step-%09ld.safetensors", dir,
		    steps[i]);
		unlink(path);
	}
	free(steps);
	ckpt_prune_tmp(dir, NULL, 0);
}

int
checkpoint_clean(const char *dir, const char *job, long long run)
{
	return ckpt_prune_tmp(dir, job, run);
}

int
checkpoint_write(const char *dir, int keep, const struct model *m,
    const struct optimizer *o, const struct ckpt_meta *cm, char *path,
    size_t pathlen, char *err, size_t errlen)
{
	int	 fd;
	char	 tmp[4096], stem[512];

	if (mkdir_p(dir, 0700) != 0) {
		snprintf(err, errlen, "checkpoint dir %s: %s", dir, strerror(errno));
		return -1;
	}
	snprintf(path, pathlen, "%s/step-%09ld.safetensors", dir, cm->step);
	ckpt_tmp_stem(stem, sizeof stem, cm->step, cm->job, cm->run);
	if ((fd = file_tmp_open(dir, stem, 0600, tmp, sizeof tmp)) < 0) {
		snprintf(err, errlen, "writing checkpoint %s: a temporary file "
		    "in %s: %s (the previous checkpoints are intact)", path, dir,
		    strerror(errno));
		return -1;
	}
	if (ckpt_file_write(fd, m, o, cm) != 0) {
		close(fd);
		unlink(tmp);
		goto fail;
	}
	if (file_tmp_commit(fd, tmp, path, 1) != 0)
		goto fail;
	ckpt_prune(dir, cm->job, keep);
	return 0;

fail:
	snprintf(err, errlen, "writing checkpoint %s: %s (the previous "
	    "checkpoints are intact)", path, strerror(errno));
	return -1;
}

int
checkpoint_resume(const char *dir, const char *job, struct model *m,
    struct optimizer *o, struct ckpt_meta *cm, char *path, size_t pathlen,
    void (*skipped)(void *, const char *, const char *), void *ctx,
    char *err, size_t errlen)
{
	long		*steps;
	int		 n = ckpt_list(dir, &steps), rc = 1, fd, tried = 0;
	char		 why[512], what[600];
	enum ckpt_own	 own;

	for (int i = 0; i < n; i++) {
		snprintf(path, pathlen, "%s/step-%09ld.safetensors", dir, steps[i]);
		if ((fd = ckpt_open_own(path, job, &own, why, sizeof why)) >= 0) {
			tried++;
			rc = ckpt_load_fd(fd, path, m, o, cm, why, sizeof why);
			close(fd);
			if (rc == 0)
				break;
			rc = 1;
		}
		snprintf(what, sizeof what, "%s %s", own == CKPT_FOREIGN ?
		    "checkpoint" : "corrupt checkpoint", why);
		if (skipped != NULL)
			skipped(ctx, path, what);
	}
	if (rc == 1 && tried > 0) {
		snprintf(err, errlen, "no valid checkpoint among %d in %s",
		    tried, dir);
		rc = -1;
	}
	free(steps);
	return rc;
}
