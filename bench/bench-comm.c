/*
 * bench-comm.c: `hunter bench comm`.  Two ranks, forked here, form a Gloo
 * group over loopback through a file store in a temporary directory and
 * time dense allreduces of 1M, 4M and 16M floats.  Each size is printed
 * as algorithm bandwidth (bytes of the vector / time per allreduce) next
 * to memcpy of the same size, timed by rank 0 in the same run, and their
 * ratio, so the numbers can be read on any machine.  GB is 10^9 bytes.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/xmalloc.h"
#include "backend/comm/comm.h"
#include "bench/bench.h"

#define BENCH_RANKS		2
#define BENCH_TIMEOUT_MS	30000
#define BENCH_DEADLINE_MS	120000	/* then both ranks are killed */
#define BENCH_WARMUP		2
#define BENCH_BYTES_PER_SIZE	(256u << 20)	/* about 0.3 s a size here */

static const size_t	comm_bench_sizes[] = { 1 << 20, 4 << 20, 16 << 20 };
#define BENCH_NSIZES	(sizeof comm_bench_sizes / sizeof comm_bench_sizes[0])

/* Enough calls to move about BENCH_BYTES_PER_SIZE, but 5 to 64 of them. */
static int
comm_bench_iters(size_t bytes)
{
	size_t	n = BENCH_BYTES_PER_SIZE / bytes;

	return n < 5 ? 5 : n > 64 ? 64 : (int)n;
}

static double
comm_bench_memcpy(size_t bytes, int iters)
{
	char	*src = xmalloc(bytes), *dst = xmalloc(bytes);
	double	 t;

	memset(src, 1, bytes);
	memset(dst, 0, bytes);
	memcpy(dst, src, bytes);
	t = clock_mono();
	for (int i = 0; i < iters; i++) {
		src[i] = (char)i;
		memcpy(dst, src, bytes);
	}
	t = clock_mono() - t;
	if (dst[iters - 1] != (char)(iters - 1))
		t = -1;
	free(src);
	free(dst);
	return t / iters;
}

/* One rank's whole run; rank 0 prints.  Returns the exit status. */
static int
comm_bench_rank(const char *dir, int rank)
{
	struct comm_config	 cf = {
		.backend = "gloo", .rank = rank, .world = BENCH_RANKS,
		.bind_addr = "127.0.0.1", .timeout_ms = BENCH_TIMEOUT_MS,
	};
	struct comm_store	 cs = comm_dir_store(dir);
	struct comm		*c;
	char			 err[1024];
	float			*buf;
	size_t			 n, bytes;
	double			 t, ar, mc;
	int			 iters;

	if ((c = comm_init(&cf, &cs, err, sizeof err)) == NULL) {
		fprintf(stderr, "comm bench: %s\n", err);
		return 1;
	}
	buf = xcalloc(comm_bench_sizes[BENCH_NSIZES - 1], sizeof *buf);
	for (size_t s = 0; s < BENCH_NSIZES; s++) {
		n = comm_bench_sizes[s];
		bytes = n * sizeof *buf;
		iters = comm_bench_iters(bytes);
		for (int i = 0; i < BENCH_WARMUP; i++) {
			if (comm_allreduce_f32(c, buf, n, err, sizeof err) != 0)
				goto fail;
		}
		if (comm_barrier(c, err, sizeof err) != 0)
			goto fail;
		t = clock_mono();
		for (int i = 0; i < iters; i++) {
			if (comm_allreduce_f32(c, buf, n, err, sizeof err) != 0)
				goto fail;
		}
		ar = (clock_mono() - t) / iters;
		if (rank == 0) {
			mc = comm_bench_memcpy(bytes, iters);
			printf("%9zuM %8.1f MiB %6d %15.2f %12.2f %7.3f\n",
			    n >> 20, bytes / 1048576.0, iters, bytes / ar / 1e9,
			    bytes / mc / 1e9, mc / ar);
			fflush(stdout);
		}
		if (comm_barrier(c, err, sizeof err) != 0)
			goto fail;
	}
	free(buf);
	comm_destroy(c);
	return 0;

fail:
	fprintf(stderr, "comm bench: rank %d: %s\n", rank, err);
	free(buf);
	comm_destroy(c);
	return 1;
}

static void
comm_bench_rmdir(const char *dir)
{
	DIR		*d;
	struct dirent	*de;
	char		 path[PATH_MAX + 256];

	if ((d = opendir(dir)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			if (strcmp(de->d_name, ".") == 0 ||
			    strcmp(de->d_name, "..") == 0)
				continue;
			snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
			unlink(path);
		}
		closedir(d);
	}
	rmdir(dir);
}

/*
 * Fork the ranks and wait for both, killing them at the deadline.  It
 * forks, so call it before the process starts threads.
 */
static int
comm_bench(void)
{
	const char	*tmpdir = getenv("TMPDIR");
	char		 dir[PATH_MAX];
	pid_t		 pid[BENCH_RANKS];
	int		 status, left = BENCH_RANKS, failed = 0;
	double		 deadline;

	snprintf(dir, sizeof dir, "%s/hunter-bench-comm.XXXXXX",
	    tmpdir != NULL && *tmpdir != '\0' ? tmpdir : "/tmp");
	if (mkdtemp(dir) == NULL) {
		fprintf(stderr, "comm bench: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	printf("comm: gloo allreduce (sum of floats), %d ranks over "
	    "127.0.0.1, %d warm-up calls\n", BENCH_RANKS, BENCH_WARMUP);
	printf("%10s %12s %6s %15s %12s %7s\n", "floats", "bytes", "iters",
	    "allreduce GB/s", "memcpy GB/s", "ratio");
	fflush(stdout);
	fflush(stderr);

	for (int r = 0; r < BENCH_RANKS; r++) {
		if ((pid[r] = fork()) == -1) {
			fprintf(stderr, "comm bench: fork: %s\n",
			    strerror(errno));
			while (r-- > 0) {
				kill(pid[r], SIGKILL);
				waitpid(pid[r], NULL, 0);
			}
			comm_bench_rmdir(dir);
			return 1;
		}
		if (pid[r] == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			_exit(comm_bench_rank(dir, r));
		}
	}

	deadline = clock_mono() + BENCH_DEADLINE_MS / 1e3;
	while (left > 0) {
		for (int r = 0; r < BENCH_RANKS; r++) {
			if (pid[r] <= 0 || waitpid(pid[r], &status, WNOHANG)
			    != pid[r])
				continue;
			if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
				failed = 1;
			pid[r] = 0;
			left--;
		}
		if (left > 0 && clock_mono() > deadline) {
			fprintf(stderr, "comm bench: ranks still running after "
			    "%d s, killed\n", BENCH_DEADLINE_MS / 1000);
			for (int r = 0; r < BENCH_RANKS; r++) {
				if (pid[r] > 0) {
					kill(pid[r], SIGKILL);
					waitpid(pid[r], NULL, 0);
				}
			}
			failed = 1;
			break;
		}
		usleep(10000);
	}
	comm_bench_rmdir(dir);
	return failed;
}

const struct bench_entry bench_comm_entry = {
	.name = "comm",
	.summary = "dense allreduce between 2 ranks over Gloo (1M, 4M, 16M floats), against memcpy",
	.run = comm_bench,
};
