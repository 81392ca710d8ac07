/*
 * peak.h: measured sgemm peaks, which `hunter bench sgemm` writes and a
 * worker reads for its MFU (model FLOPs a second over the peak of the
 * kernel and threads it runs).  A peak is only as good as its key: the
 * CPU model, the BLAS library, its kernel and the thread count, so a
 * figure of another kernel (Prescott's, before the kernel was put right)
 * is never read for this one.  A file in the state directory,
 * STATE/bench/sgemm-peak, one line a key: GFLOP/s, then the four parts of
 * the key, tab-separated.
 */
#ifndef HUNTER_PEAK_H
#define HUNTER_PEAK_H

struct peak_key {
	const char	*cpu;		/* cpu_model_name() */
	const char	*library;	/* "OpenBLAS 0.3.21" */
	const char	*kernel;	/* "SkylakeX" */
	int		 threads;
};

/* Under dir (NULL: the state directory): 0 with *gflops, or -1 when
 * nothing was measured for this key. */
int	peak_read(const char *dir, const struct peak_key *, double *gflops);
/* Keep gflops for this key, the other keys' lines as they were: 0, or
 * -1 with errno. */
int	peak_write(const char *dir, const struct peak_key *, double gflops);

#endif
