/*
 * files.h: files written into a directory that someone else may share,
 * and files read from a path that may name anything.
 *
 * A file hunter writes whole (a checkpoint, config.json, a report, a
 * cache) goes to a temporary file first, then a rename.  The temporary
 * name has 64 random bits in it and the file is created with O_EXCL |
 * O_NOFOLLOW, so a link or a file planted under a name someone guessed
 * is never opened, truncated or renamed over the real one.
 *
 * A file hunter reads (data, a config, a tokenizer) is opened without
 * blocking and checked to be a regular file before a byte is read: a
 * FIFO or a device there is refused at once instead of hanging.
 */
#ifndef HUNTER_FILES_H
#define HUNTER_FILES_H

#include <stddef.h>

/* The temporary names' tail: ".<16 hex digits>.tmp". */
#define FILE_TMP_SUFFIX_LEN	(1 + 16 + 4)

/* Create a fresh temporary file dir/STEM.<16 hex>.tmp (stem as given,
 * usually starting with a dot) with mode (0600 for private files),
 * O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC; its name goes
 * into tmp.  The fd, or -1 with errno set. */
int	file_tmp_open(const char *dir, const char *stem, unsigned mode,
	    char *tmp, size_t tmplen);
/* Whether name (a directory entry) is one of file_tmp_open's names for
 * stem: STEM.<16 hex>.tmp. */
int	file_tmp_name_is(const char *name, const char *stem);
/* Finish a temporary file: fsync fd (when sync), close it, rename tmp
 * to path and, when sync, fsync the directory.  On failure the
 * temporary file is removed.  0, or -1 with errno set. */
int	file_tmp_commit(int fd, const char *tmp, const char *path, int sync);

/* Open path for reading (O_RDONLY | O_CLOEXEC, plus extra flags such as
 * O_NOFOLLOW) without blocking on a FIFO, and refuse what is not a
 * regular file.  The fd (blocking again), or -1 with err naming the
 * path and what it is (errno EINVAL for a file of the wrong type). */
int	file_open_regular(const char *path, int extra, char *err,
	    size_t errlen);
/* The name of a file type for messages ("a FIFO", "a directory"...). */
const char *file_type_name(unsigned mode);

#endif
