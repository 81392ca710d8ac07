/*
 * peak.c: the cached sgemm peak (peak.h).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/files.h"
#include "lib/peak.h"
#include "lib/statedir.h"

static int
peak_file(const char *dir, char *path, size_t len, int make)
{
	char	 d[PATH_MAX];

	if (dir != NULL)
		snprintf(d, sizeof d, "%s", dir);
	else if (statedir_path(d, sizeof d) != 0)
		return -1;
	if (make) {
		char	 b[PATH_MAX + 8];

		snprintf(b, sizeof b, "%s/bench", d);
		if (mkdir_p(b, 0700) != 0)
			return -1;
	}
	snprintf(path, len, "%s/bench/sgemm-peak", d);
	return 0;
}

int
peak_read(const char *dir, double *gflops)
{
	char	 path[PATH_MAX + 32];
	FILE	*f;
	int	 ok;

	if (peak_file(dir, path, sizeof path, 0) != 0 ||
	    (f = fopen(path, "r")) == NULL)
		return -1;
	ok = fscanf(f, "%lf", gflops) == 1 && *gflops > 0 && *gflops < 1e7;
	fclose(f);
	return ok ? 0 : -1;
}

int
peak_write(const char *dir, double gflops)
{
	char	 path[PATH_MAX + 32], tmp[PATH_MAX + 64], d[PATH_MAX + 32];
	FILE	*f;
	int	 fd;

	if (peak_file(dir, path, sizeof path, 1) != 0)
		return -1;
	snprintf(d, sizeof d, "%s", path);
	*strrchr(d, '/') = '\0';	/* DIR/bench */
	if ((fd = file_tmp_open(d, ".sgemm-peak", 0600, tmp, sizeof tmp)) < 0)
		return -1;
	if ((f = fdopen(fd, "w")) == NULL) {
		close(fd);
		unlink(tmp);
		return -1;
	}
	fprintf(f, "%.3f\n", gflops);
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		remove(tmp);
		return -1;
	}
	return 0;
}
