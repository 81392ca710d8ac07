/*
 * statedir.c: where the state directory is, making directories, and
 * whether a directory is fit to hold this user's sockets and files.
 */
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/errf.h"

#include "lib/statedir.h"

int
statedir_path(char *buf, size_t len)
{
	const char	*env, *home;
	struct passwd	*pw;
	int		 n;

	if ((env = getenv("HUNTER_STATE_DIR")) != NULL && *env != '\0')
		n = snprintf(buf, len, "%s", env);
	else if ((env = getenv("XDG_STATE_HOME")) != NULL && *env != '\0')
		n = snprintf(buf, len, "%s/hunter", env);
	else {
		if ((home = getenv("HOME")) == NULL || *home == '\0') {
			if ((pw = getpwuid(getuid())) == NULL)
				return -1;
			home = pw->pw_dir;
		}
		n = snprintf(buf, len, "%s/.local/state/hunter", home);
	}
	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

int
mkdir_p(const char *dir, unsigned mode)
{
	char	 path[PATH_MAX], *p;
	size_t	 len = strlen(dir);

	if (len == 0 || len >= sizeof path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(path, dir, len + 1);
	for (p = path + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(path, mode) != 0 && errno != EEXIST)
		return -1;
	return 0;
}

int
statedir_check(const char *dir, char *err, size_t errlen)
{
	struct stat	 st;
	uid_t		 me = geteuid();

	if (stat(dir, &st) != 0) {
		int saved = errno;

		errf(err, errlen, "%s: %s", dir, strerror(errno));
		errno = saved;
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		errf(err, errlen, "%s: not a directory", dir);
		errno = ENOTDIR;
		return -1;
	}
	if (st.st_uid != me) {
		errf(err, errlen, "%s: owned by uid %lu, not by you (uid %lu): "
		    "whoever owns it could plant a socket or a file there; use "
		    "a directory of your own (HUNTER_STATE_DIR, or a node's "
		    "state_dir), or chown it to uid %lu", dir,
		    (unsigned long)st.st_uid, (unsigned long)me,
		    (unsigned long)me);
		errno = EPERM;
		return -1;
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
		errf(err, errlen, "%s: writable by %s (mode %04o): anyone "
		    "there could plant a socket or a file; chmod 700 %s",
		    dir, (st.st_mode & S_IWOTH) != 0 ? "others" : "its group",
		    (unsigned)(st.st_mode & 07777), dir);
		errno = EPERM;
		return -1;
	}
	return 0;
}

int
statedir_make(const char *dir, char *err, size_t errlen)
{
	if (mkdir_p(dir, 0700) != 0) {
		errf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if (statedir_check(dir, err, errlen) != 0)
		return -1;
	if (chmod(dir, 0700) != 0) {
		errf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}
