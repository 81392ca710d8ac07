/*
 * detect-internal.h: what the detectors share (detect.c) and the entry
 * each detect-NAME.c exports for detect_table.
 */
#ifndef HUNTER_DETECT_INTERNAL_H
#define HUNTER_DETECT_INTERNAL_H

#include <stdbool.h>

#include "backend/sched/detect.h"

extern const struct detector detect_absent;
extern const struct detector detect_lingering;
extern const struct detector detect_failover;
extern const struct detector detect_heartbeat;
extern const struct detector detect_straggler;
extern const struct detector detect_util;
extern const struct detector detect_leak;

/* The mean of the last n values of a series (n clamped to its length). */
double	detect_mean(const struct series *, int n);
/* The median of v[0..n) without v[skip]. */
double	detect_median_others(const double *v, int n, int skip);
/* Whether the detectors that judge running ranks may look at the job
 * now: no re-formation, past the grace after a launch, not paused. */
bool	detect_watching(const struct detect_job *);
/* The window the slow-rank detectors compare over, in samples (one a
 * second): policy.low_util_for_s, at least 1. */
int	detect_window_len(const struct detect_job *);
/* Each rank's mean compute per step over the window, and its share of
 * the step less the time it waits on peers (1 when that is not
 * positive), for the first DETECT_SLOW_MAX ranks.  Returns how many, or
 * 0 while a rank has less than a full window. */
int	detect_window(const struct detect_job *, double *compute,
	    double *share);
/* Whether node n is cut off: no link to its agent, or nothing from it
 * for longer than the job's heartbeat timeout. */
bool	detect_node_silent(const struct detect_job *, int n);
/* Whether rank r runs, unpaused, with no heartbeat for longer than the
 * timeout, while the detectors watch the job. */
bool	detect_rank_silent(const struct detect_job *, int r);
/* A free spare node, heard from, to move a rank of the job to, or -1. */
int	detect_spare(const struct detect_job *);
/* Fill one decision; fmt NULL leaves the reason empty. */
void	detect_decide(struct detect_decision *, enum detect_kind, int rank,
	    int node, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#endif
