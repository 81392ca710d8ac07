/*
 * statedir.c: where the state directory is, and making directories.
 */
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
