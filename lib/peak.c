/*
 * peak.c: the cached sgemm peaks, by key (peak.h).  A line that does not
 * parse (the file of a release that kept one bare number) matches no
 * key and is dropped at the next write.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/files.h"
#include "lib/peak.h"
#include "lib/statedir.h"

/* part, with tabs and newlines made spaces, so it cannot spill into
 * the next part or line. */
static void
peak_part(char *buf, size_t len, const char *part)
{
	snprintf(buf, len, "%s", part != NULL ? part : "");
	for (char *s = buf; *s != '\0'; s++) {
		if (*s == '\t' || *s == '\n' || *s == '\r')
			*s = ' ';
	}
}

/* The key as it is written: its four parts, tab-separated. */
static void
peak_key_text(const struct peak_key *k, char *buf, size_t len)
{
	char	 cpu[160], lib[96], kernel[64];

	peak_part(cpu, sizeof cpu, k->cpu);
	peak_part(lib, sizeof lib, k->library);
	peak_part(kernel, sizeof kernel, k->kernel);
	snprintf(buf, len, "%s\t%s\t%s\t%d", cpu, lib, kernel, k->threads);
}

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

/* The figure of a line "GFLOPS\tKEY\n" when its key is key. */
static int
peak_line(const char *line, const char *key, double *gflops)
{
	const char	*tab = strchr(line, '\t');
	size_t		 n = strlen(key);
	char		*end;
	double		 g;

	if (tab == NULL || strncmp(tab + 1, key, n) != 0 ||
	    (tab[1 + n] != '\n' && tab[1 + n] != '\0'))
		return -1;
	g = strtod(line, &end);
	if (end != tab || !(g > 0 && g < 1e7))
		return -1;
	*gflops = g;
	return 0;
}

int
peak_read(const char *dir, const struct peak_key *k, double *gflops)
{
	char	 path[PATH_MAX + 32], key[512], line[640];
	FILE	*f;
	int	 rc = -1;

	if (peak_file(dir, path, sizeof path, 0) != 0 ||
	    (f = fopen(path, "r")) == NULL)
		return -1;
	peak_key_text(k, key, sizeof key);
	while (fgets(line, sizeof line, f) != NULL) {
		if (peak_line(line, key, gflops) == 0)
			rc = 0;
	}
	fclose(f);
	return rc;
}

int
peak_write(const char *dir, const struct peak_key *k, double gflops)
{
	char	 path[PATH_MAX + 32], tmp[PATH_MAX + 64], d[PATH_MAX + 32];
	char	 key[512], line[640];
	FILE	*in, *out;
	double	 g;
	char	*end;
	int	 fd;

	if (peak_file(dir, path, sizeof path, 1) != 0)
		return -1;
	peak_key_text(k, key, sizeof key);
	snprintf(d, sizeof d, "%s", path);
	*strrchr(d, '/') = '\0';	/* DIR/bench */
	if ((fd = file_tmp_open(d, ".sgemm-peak", 0600, tmp, sizeof tmp)) < 0)
		return -1;
	if ((out = fdopen(fd, "w")) == NULL) {
		close(fd);
		unlink(tmp);
		return -1;
	}
	if ((in = fopen(path, "r")) != NULL) {
		while (fgets(line, sizeof line, in) != NULL) {
			char	*tab = strchr(line, '\t');

			/* Keep the other keys' lines that parse. */
			g = strtod(line, &end);
			if (tab != NULL && end == tab && g > 0 &&
			    peak_line(line, key, &g) != 0)
				fputs(line, out);
		}
		fclose(in);
	}
	fprintf(out, "%.3f\t%s\n", gflops, key);
	if (fclose(out) != 0 || rename(tmp, path) != 0) {
		remove(tmp);
		return -1;
	}
	return 0;
}
