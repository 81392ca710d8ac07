/*
 * peak.h: the measured sgemm peak of one thread, which `hunter bench
 * sgemm` writes and the console reads for a job's MFU (model FLOPs per
 * second over the peak of the threads its ranks use).  It is a file in
 * the state directory, STATE/bench/sgemm-peak, holding GFLOP/s as text.
 */
#ifndef HUNTER_PEAK_H
#define HUNTER_PEAK_H

/* Under dir (NULL: the state directory): 0 with *gflops, or -1 when
 * nothing was measured yet. */
int	peak_read(const char *dir, double *gflops);
/* 0, or -1 with errno. */
int	peak_write(const char *dir, double gflops);

#endif
