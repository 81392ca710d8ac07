/*
 * files.c: temporary files under names nobody can guess, and reading
 * only regular files (files.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/errf.h"
#include "lib/files.h"

#define TMP_TRIES	16	/* names tried before giving up (EEXIST) */

int
file_tmp_open(const char *dir, const char *stem, unsigned mode, char *tmp,
    size_t tmplen)
{
	uint64_t	 r;
	int		 fd, n;

	for (int i = 0; i < TMP_TRIES; i++) {
		if (getentropy(&r, sizeof r) != 0)
			return -1;
		n = snprintf(tmp, tmplen, "%s/%s.%016" PRIx64 ".tmp", dir, stem,
		    r);
		if (n < 0 || (size_t)n >= tmplen) {
			errno = ENAMETOOLONG;
			return -1;
		}
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_CLOEXEC, (mode_t)mode);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1;
}

int
file_tmp_name_is(const char *name, const char *stem)
{
	size_t	 len = strlen(name), sl = strlen(stem);

	if (len != sl + FILE_TMP_SUFFIX_LEN || strncmp(name, stem, sl) != 0 ||
	    name[sl] != '.' || strcmp(name + len - 4, ".tmp") != 0)
		return 0;
	for (size_t i = sl + 1; i < sl + 17; i++) {
		if (strchr("0123456789abcdef", name[i]) == NULL ||
		    name[i] == '\0')
			return 0;
	}
	return 1;
}

/* fsync the directory a path is in (a rename in it survives a crash). */
static void
file_sync_dir(const char *path)
{
	char	 dir[PATH_MAX], *slash;
	int	 dfd;

	snprintf(dir, sizeof dir, "%s", path);
	if ((slash = strrchr(dir, '/')) == NULL)
		snprintf(dir, sizeof dir, ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		fsync(dfd);
		close(dfd);
	}
}

int
file_tmp_commit(int fd, const char *tmp, const char *path, int sync)
{
	int	 saved;

	if (sync && fsync(fd) != 0) {
		saved = errno;
		close(fd);
		goto fail;
	}
	if (close(fd) != 0 || rename(tmp, path) != 0) {
		saved = errno;
		goto fail;
	}
	if (sync)
		file_sync_dir(path);
	return 0;
fail:
	unlink(tmp);
	errno = saved;
	return -1;
}

const char *
file_type_name(unsigned mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:	return "a regular file";
	case S_IFDIR:	return "a directory";
	case S_IFIFO:	return "a FIFO";
	case S_IFCHR:	return "a character device";
	case S_IFBLK:	return "a block device";
	case S_IFSOCK:	return "a socket";
	case S_IFLNK:	return "a symbolic link";
	default:	return "not a regular file";
	}
}

int
file_open_regular(const char *path, int extra, char *err, size_t errlen)
{
	struct stat	 st;
	int		 fd, fl;

	/* O_NONBLOCK: opening a FIFO for reading would wait for a writer. */
	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | extra)) < 0) {
		errf(err, errlen, "%s: %s", path, errno == ELOOP &&
		    (extra & O_NOFOLLOW) != 0 ? "a symbolic link, not "
		    "followed" : strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0) {
		errf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		errf(err, errlen, "%s: %s, not a regular file", path,
		    file_type_name(st.st_mode));
		close(fd);
		errno = EINVAL;
		return -1;
	}
	if ((fl = fcntl(fd, F_GETFL)) >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}
