/*
 * replay.c: a main() for fuzz targets built without libFuzzer.  It runs
 * LLVMFuzzerTestOneInput over every file in the directories named on the
 * command line, or in the colon-separated $FUZZ_CORPUS, so make check
 * replays the seed corpus (and any crash file kept beside it) under
 * whatever sanitizers the build has.  With $FUZZ_DEBUG set, each input's
 * name goes to stderr before it runs ("replay: NAME"), so a target's own
 * debug line after it can be matched to the file (replay-lib.sh).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Read a whole file; NULL if it cannot be read or is not a file. */
static uint8_t *
replay_slurp(const char *path, size_t *len)
{
	FILE	*f;
	uint8_t	*buf = NULL;
	size_t	 cap = 0, n;

	if ((f = fopen(path, "rb")) == NULL)
		return NULL;
	*len = 0;
	for (;;) {
		if (*len == cap) {
			cap = cap ? 2 * cap : 65536;
			if ((buf = realloc(buf, cap)) == NULL)
				abort();
		}
		if ((n = fread(buf + *len, 1, cap - *len, f)) == 0)
			break;
		*len += n;
	}
	if (ferror(f)) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* Replay every regular file in dir.  Returns the count, or -1. */
static int
replay_dir(const char *dir)
{
	DIR		*d;
	struct dirent	*de;
	char		 path[4096];
	uint8_t		*buf;
	size_t		 len;
	int		 count = 0, debug = getenv("FUZZ_DEBUG") != NULL;

	if ((d = opendir(dir)) == NULL) {
		fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		if ((buf = replay_slurp(path, &len)) == NULL)
			continue;
		if (debug) {
			fprintf(stderr, "replay: %s\n", de->d_name);
			fflush(stderr);
		}
		LLVMFuzzerTestOneInput(buf, len);
		free(buf);
		count++;
	}
	closedir(d);
	return count;
}

int
main(int argc, char **argv)
{
	char	*list = NULL, *dir, *save;
	int	 i, n, total = 0;

	if (argc < 2 && getenv("FUZZ_CORPUS") != NULL) {
		list = strdup(getenv("FUZZ_CORPUS"));
		for (dir = strtok_r(list, ":", &save); dir != NULL;
		    dir = strtok_r(NULL, ":", &save)) {
			if ((n = replay_dir(dir)) < 0)
				return 1;
			total += n;
		}
		free(list);
	} else if (argc < 2) {
		fprintf(stderr, "usage: %s corpus-dir... (or $FUZZ_CORPUS)\n",
		    argv[0]);
		return 2;
	}
	for (i = 1; i < argc; i++) {
		if ((n = replay_dir(argv[i])) < 0)
			return 1;
		total += n;
	}
	printf("replayed %d inputs\n", total);
	return 0;
}
