/*
 * comm-dirstore.c: a rendezvous store over a directory, for ranks on one
 * host with no backend between them (hunter bench comm, the tests).  Each
 * key is one file named by the key, escaped so that names stay distinct;
 * a value is written to a temporary file (lib/files.h: a name nobody
 * guesses) and renamed, so a reader never sees half of one.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/files.h"
#include "lib/xmalloc.h"
#include "backend/comm/comm.h"

#define DIRSTORE_POLL_US	1000	/* between looks for a missing key */

/* Key to file name, escaping all but [A-Za-z0-9_-]. */
static void
dirstore_path(const char *dir, const char *key, char *path, size_t len)
{
	size_t	n = (size_t)snprintf(path, len, "%s/", dir);

	for (; *key != '\0' && n + 4 < len; key++) {
		unsigned char	ch = (unsigned char)*key;

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || ch == '_' || ch == '-')
			path[n++] = (char)ch;
		else
			n += (size_t)snprintf(path + n, len - n, "%%%02x", ch);
	}
	path[n] = '\0';
}

static int
dirstore_set(void *ctx, const char *key, const void *val, size_t len)
{
	const char	*dir = ctx;
	char		 path[PATH_MAX], tmp[PATH_MAX + 32];
	const char	*p = val;
	ssize_t		 n;
	int		 fd;

	dirstore_path(dir, key, path, sizeof path);
	if ((fd = file_tmp_open(dir, ".key", 0600, tmp, sizeof tmp)) < 0)
		return -1;
	for (size_t done = 0; done < len; done += (size_t)n) {
		if ((n = write(fd, p + done, len - done)) <= 0) {
			close(fd);
			unlink(tmp);
			return -1;
		}
	}
	return file_tmp_commit(fd, tmp, path, 0);
}

static int
dirstore_get(void *ctx, const char *key, void **val, size_t *len,
    int timeout_ms)
{
	const char	*dir = ctx;
	char		 path[PATH_MAX];
	double		 deadline = clock_mono() + timeout_ms / 1e3;
	struct stat	 st;
	FILE		*f;

	dirstore_path(dir, key, path, sizeof path);
	while ((f = fopen(path, "rb")) == NULL) {
		if (errno != ENOENT || clock_mono() >= deadline)
			return -1;
		usleep(DIRSTORE_POLL_US);
	}
	if (fstat(fileno(f), &st) != 0) {
		fclose(f);
		return -1;
	}
	*len = (size_t)st.st_size;
	*val = xmalloc(*len + 1);
	if (fread(*val, 1, *len, f) != *len) {
		free(*val);
		fclose(f);
		return -1;
	}
	fclose(f);
	return 0;
}

struct comm_store
comm_dir_store(const char *dir)
{
	struct comm_store	cs = {
		.ctx = (void *)dir, .set = dirstore_set, .get = dirstore_get,
	};

	return cs;
}
