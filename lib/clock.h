/*
 * clock.h: monotonic seconds, for intervals, deadlines and rates; and
 * the wall clock's, for what outlives a process (the journal's times).
 */
#ifndef HUNTER_CLOCK_H
#define HUNTER_CLOCK_H

#include <time.h>

static inline double
clock_mono(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline double
clock_wall(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

#endif
