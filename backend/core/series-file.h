/*
 * series-file.h: a job's saved series, STATE/series/JOB.jsonl, written by
 * the backend and read by `hunter report`.  JSON lines: a "series" header
 * (job, run, ts: where the job's story starts), then the job's data
 * frames as they came -- each rank's metrics, epochs, evals, the autotune
 * trace, the summary -- with the wall clock ("ts") they arrived at, and
 * every few seconds the sample of each node it runs on ("t": "node":
 * backend-nodes.c), for the report's "what moved".  The events are the
 * journal's.
 *
 * Bounded: past SERIES_FILE_MAX bytes every other metrics frame of each
 * rank, and node line of each node, is dropped from the file and, from
 * then on, from what is written, so a long job keeps its whole span at
 * a coarser grain.
 */
#ifndef HUNTER_SERIES_FILE_H
#define HUNTER_SERIES_FILE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* About 8000 metrics frames of a few hundred bytes: a 4-rank job at one
 * report a second fills it in half an hour, then halves its grain. */
#define SERIES_FILE_MAX	(4L << 20)

struct job_series;

/* "DIR/series/NAME.jsonl" into buf. */
void		 series_file_path(const char *dir, const char *job, char *buf,
		    size_t len);
/* Open the job's file: fresh (truncated, a new header) or appended to
 * (a header only if it is empty).  NULL with err. */
struct job_series *series_file_open(const char *dir, const char *job,
		    long long run, bool fresh, char *err, size_t errlen);
/* Append frame (a copy, with "ts"); metrics frames by rank, thinned. */
void		 series_file_append(struct job_series *, const json_t *frame);
void		 series_file_close(struct job_series *);

#endif
