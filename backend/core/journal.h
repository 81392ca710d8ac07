/*
 * journal.h: the backend's journal, append-only JSON lines in the state
 * directory.  It records jobs and every decision with its reason, and a
 * new backend replays it to learn what was running.  A last line cut
 * short by a crash is reported and skipped; everything before it is kept.
 *
 * Ordering: records reach the file in the order they are appended, each
 * with one write().  journal_append is durable: it returns once its
 * record, and so every record before it, is on disk (fdatasync).
 * journal_append_lazy (events, the ranks' own) only writes; its records
 * become durable at the next durable append or journal_tick, at most
 * JOURNAL_SYNC_S later, so a burst of events costs one fsync, not one
 * each, and a crash can lose only the newest lazy records, never one
 * that came before a durable one.
 *
 * The file is rotated once it holds JOURNAL_MAX_BYTES: it becomes
 * PATH.1 (replacing the one before), and a new file starts, which the
 * backend opens with the records of its live jobs.
 */
#ifndef HUNTER_JOURNAL_H
#define HUNTER_JOURNAL_H

#include <stddef.h>

#include <jansson.h>

struct journal;

/* Open (creating 0600) path for appending.  NULL with err on failure. */
struct journal	*journal_open(const char *path, char *err, size_t errlen);
void		 journal_close(struct journal *);
#define JOURNAL_SYNC_S		1.0
#define JOURNAL_MAX_BYTES	(64LL << 20)

/* Append obj (with a "ts" added) as one line and fsync.  0 or -1 (errno;
 * EINVAL for a NULL obj, a pack that failed). */
int		 journal_append(struct journal *, json_t *obj);
/* The same without the fsync (see above). */
int		 journal_append_lazy(struct journal *, json_t *obj);
/* fsync what lazy appends left, once it is JOURNAL_SYNC_S old (now is
 * CLOCK_MONOTONIC seconds).  0 or -1. */
int		 journal_tick(struct journal *, double now);
/* Whether the file has grown to its limit (JOURNAL_MAX_BYTES, or what
 * journal_set_limit says, for tests). */
int		 journal_rotate_due(const struct journal *);
void		 journal_set_limit(struct journal *, long long bytes);
/* Sync, rename the file to PATH.1 and start an empty one.  0, or -1
 * with err (the old file is then still open). */
int		 journal_rotate(struct journal *, char *err, size_t errlen);
/* The fsyncs done so far (for tests). */
long		 journal_syncs(const struct journal *);

/* Told what went wrong, once a failure (a full disk): the first record
 * the file did not take, and the first it took again.  A write that came
 * back short is cut back to the last whole record first. */
typedef void	(*journal_trouble_fn)(void *ctx, const char *what);
void		 journal_on_trouble(struct journal *, journal_trouble_fn,
		    void *ctx);

/*
 * Call fn for each complete, valid line of path in order (a journal, or
 * any file of JSON lines: the series).  Returns the number of records,
 * or -1 if the file cannot be read.  *bad gets the number of lines
 * skipped (cut or not JSON), with the first in err as "PATH:LINE: why".
 */
int		 journal_replay(const char *path,
		    void (*fn)(void *ctx, json_t *rec), void *ctx, int *bad,
		    char *err, size_t errlen);

#endif
