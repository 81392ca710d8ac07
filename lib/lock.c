/*
 * lock.c: the backend lock of a state directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "lib/lock.h"

int
lock_take(const char *state_dir, pid_t *holder)
{
	char	 path[PATH_MAX], buf[32];
	int	 fd, len;
	ssize_t	 n;

	*holder = 0;
	snprintf(path, sizeof path, "%s/backend.lock", state_dir);
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
	    0600)) < 0)
		return -1;
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		if ((n = pread(fd, buf, sizeof buf - 1, 0)) > 0) {
			buf[n] = '\0';
			*holder = (pid_t)atol(buf);
		}
		close(fd);
		errno = EWOULDBLOCK;
		return -1;
	}
	len = snprintf(buf, sizeof buf, "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) != 0 || pwrite(fd, buf, (size_t)len, 0) != len) {
		close(fd);
		return -1;
	}
	return fd;
}

int
lock_wait(const char *state_dir, int timeout_ms, pid_t *holder)
{
	struct timespec	 ts = { 0, 20 * 1000000L };
	int		 fd;

	for (int waited = 0;; waited += 20) {
		if ((fd = lock_take(state_dir, holder)) >= 0 ||
		    errno != EWOULDBLOCK || waited >= timeout_ms)
			return fd;
		nanosleep(&ts, NULL);
	}
}
