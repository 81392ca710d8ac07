/*
 * target-util.h: helpers for the fuzz targets.
 *
 * fuzz_debug: with $FUZZ_DEBUG set, a target says what it made of each
 * input on stderr, one line: "fuzz: accepted" or "fuzz: refused: WHY".
 * replay-lib.sh matches these to the file names replay.c prints, so the
 * seed corpus checks that valid-* inputs are accepted and bad-* refused.
 *
 * struct fuzz_file: a scratch file for targets whose code under test
 * takes a path.  It is a memfd (no disk I/O, gone with the process),
 * reached through /proc/self/fd/N, which opens it afresh at offset 0
 * (without memfd_create, an unlinked file under /tmp, reached the same
 * way).  Each fuzz_file_put replaces the contents.
 */
#ifndef HUNTER_FUZZ_TARGET_UTIL_H
#define HUNTER_FUZZ_TARGET_UTIL_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static inline void
fuzz_debug(int accepted, const char *why)
{
	static int	 debug = -1;

	if (debug == -1)
		debug = getenv("FUZZ_DEBUG") != NULL;
	if (!debug)
		return;
	if (accepted)
		fprintf(stderr, "fuzz: accepted\n");
	else
		fprintf(stderr, "fuzz: refused: %s\n", why ? why : "");
}

struct fuzz_file {
	int	 fd;
	char	 path[64];
};

static inline void
fuzz_file_open(struct fuzz_file *f, const char *name)
{
	char	 tmpl[64];

	f->fd = -1;
#ifdef MFD_CLOEXEC
	f->fd = memfd_create(name, MFD_CLOEXEC);
#endif
	if (f->fd < 0) {
		snprintf(tmpl, sizeof tmpl, "/tmp/hunter-fuzz-%s.XXXXXX", name);
		if ((f->fd = mkstemp(tmpl)) < 0) {
			perror("fuzz: mkstemp");
			abort();
		}
		unlink(tmpl);
	}
	snprintf(f->path, sizeof f->path, "/proc/self/fd/%d", f->fd);
	if (access(f->path, R_OK) != 0) {
		perror(f->path);
		abort();
	}
}

/* Replace the file's contents with len bytes of data. */
static inline void
fuzz_file_put(struct fuzz_file *f, const void *data, size_t len)
{
	const char	*p = data;
	off_t		 off = 0;

	if (ftruncate(f->fd, 0) != 0)
		abort();
	while (len > 0) {
		ssize_t n = pwrite(f->fd, p, len, off);
		if (n <= 0)
			abort();
		p += n;
		off += n;
		len -= (size_t)n;
	}
}

#endif
