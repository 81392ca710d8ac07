/*
 * net.c: unix socket helpers.  Both ends of every path-named socket
 * check who is at the other end (SO_PEERCRED): the directory's mode is
 * not enough once someone else made the directory, or the socket.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/errf.h"
#include "lib/net.h"

static int
net_addr(struct sockaddr_un *sa, const char *path, char *err, size_t errlen)
{
	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sa->sun_path) {
		errf(err, errlen, "socket path too long (%zu bytes, limit "
		    "%zu): %s", strlen(path), sizeof sa->sun_path - 1, path);
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(sa->sun_path, path, strlen(path) + 1);
	return 0;
}

int
net_listen_unix(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa;
	mode_t		 old;
	int		 fd;

	if (net_addr(&sa, path, err, errlen) != 0)
		return -1;
	if (net_unix_alive(path)) {
		errf(err, errlen, "%s: another process is listening there", path);
		errno = EADDRINUSE;
		return -1;
	}
	unlink(path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		goto fail;
	old = umask(077);
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		umask(old);
		goto fail;
	}
	umask(old);
	if (chmod(path, 0600) != 0 || listen(fd, 64) != 0)
		goto fail;
	return fd;
fail:
	errf(err, errlen, "%s: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	return -1;
}

int
net_peer_check(int fd, const char *what, char *err, size_t errlen)
{
	struct ucred	 cr;
	socklen_t	 len = sizeof cr;
	uid_t		 me = geteuid();

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0) {
		errf(err, errlen, "%s: who is at the other end: %s", what,
		    strerror(errno));
		return -1;
	}
	if (cr.uid != me && cr.uid != 0) {
		errf(err, errlen, "%s: the process at the other end (pid %ld) "
		    "is uid %lu's, not yours (uid %lu): refusing it", what,
		    (long)cr.pid, (unsigned long)cr.uid, (unsigned long)me);
		errno = EPERM;
		return -1;
	}
	return 0;
}

int
net_accept_unix(int lfd, const char *what, char *err, size_t errlen)
{
	int	 fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0) {
		errf(err, errlen, "%s: %s", what, strerror(errno));
		return -1;
	}
	if (net_peer_check(fd, what, err, errlen) != 0) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	return fd;
}

int
net_connect_unix(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa;
	int		 fd, saved;

	if (net_addr(&sa, path, err, errlen) != 0)
		return -1;
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		goto fail;
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0)
		goto fail;
	if (net_peer_check(fd, path, err, errlen) != 0) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	return fd;
fail:
	saved = errno;
	errf(err, errlen, "%s: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	errno = saved;
	return -1;
}

int
net_set_nonblock(int fd, int on)
{
	int	 fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -1;
	return fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
}

int
net_unix_alive(const char *path)
{
	char	 err[256];
	int	 fd = net_connect_unix(path, err, sizeof err);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

long
net_raise_nofile(long want)
{
	struct rlimit	 rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return -1;
	if (rl.rlim_cur != RLIM_INFINITY && (rlim_t)want > rl.rlim_cur) {
		rlim_t cur = rl.rlim_cur;

		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ||
		    (rlim_t)want < rl.rlim_max ? (rlim_t)want : rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
			rl.rlim_cur = cur;
	}
	return rl.rlim_cur == RLIM_INFINITY ? want : (long)rl.rlim_cur;
}
