/*
 * journal.h: the backend's journal, append-only JSON lines in the state
 * directory, each fsync'd before the call returns.  It records jobs and
 * every decision with its reason, and a new backend replays it to learn
 * what was running.  A last line cut short by a crash is reported and
 * skipped; everything before it is kept.
 */
#ifndef HUNTER_JOURNAL_H
#define HUNTER_JOURNAL_H

#include <stddef.h>

#include <jansson.h>

struct journal;

/* Open (creating 0600) path for appending.  NULL with err on failure. */
struct journal	*journal_open(const char *path, char *err, size_t errlen);
void		 journal_close(struct journal *);
/* Append obj (with a "ts" added) as one line and fsync.  0 or -1. */
int		 journal_append(struct journal *, json_t *obj);

/*
 * Call fn for each complete, valid line of path in order.  Returns the
 * number of records, or -1 if the file cannot be read.  *bad gets the
 * number of lines skipped (cut or not JSON), with the first in err.
 */
int		 journal_replay(const char *path,
		    void (*fn)(void *ctx, json_t *rec), void *ctx, int *bad,
		    char *err, size_t errlen);

#endif
