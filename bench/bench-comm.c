/*
 * bench-comm.c: `hunter bench comm`.  2 and then 4 ranks, forked here,
 * form a group through a file store in a temporary directory, once over
 * Gloo (TCP on loopback) and once over shared memory (shm), and time
 * dense allreduces of 1M, 4M and 16M floats.  Each size is printed as
 * algorithm bandwidth (bytes of the vector / time per allreduce) for
 * both, their ratio, and the memory-bound limit measured in the same
 * run: an allreduce can do no better than each rank reading two buffers
 * and writing one, 1.5 times a memcpy of the vector (timed here alone).
 * So the numbers can be read on any machine.  GB is 10^9 bytes.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/xmalloc.h"
#include "backend/comm/comm.h"
#include "bench/bench.h"

#define BENCH_MAX_RANKS		4
#define BENCH_TIMEOUT_MS	30000
#define BENCH_DEADLINE_MS	120000	/* then both ranks are killed */
#define BENCH_WARMUP		2
#define BENCH_BYTES_PER_SIZE	(256u << 20)	/* about 0.3 s a size here */

static const size_t	comm_bench_sizes[] = { 1 << 20, 4 << 20, 16 << 20 };
#define BENCH_NSIZES	(sizeof comm_bench_sizes / sizeof comm_bench_sizes[0])
static const char *const comm_bench_backends[] = { "gloo", "shm" };
static const int	comm_bench_worlds[] = { 2, 4 };

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

/* One rank's whole run: the seconds per allreduce of each size into
 * secs (rank 0's, in the parent's memory: shared).  The exit status. */
static int
comm_bench_rank(const char *dir, const char *backend, int rank, int world,
    double *secs)
{
	struct comm_config	 cf = {
		.backend = backend, .rank = rank, .world = world,
		.bind_addr = "127.0.0.1", .timeout_ms = BENCH_TIMEOUT_MS,
	};
	struct comm_store	 cs = comm_dir_store(dir);
	struct comm		*c;
	char			 err[1024];
	float			*buf;
	size_t			 n;
	double			 t;
	int			 iters;

	if ((c = comm_init(&cf, &cs, err, sizeof err)) == NULL) {
		fprintf(stderr, "comm bench: %s\n", err);
		return 1;
	}
	buf = xcalloc(comm_bench_sizes[BENCH_NSIZES - 1], sizeof *buf);
	for (size_t s = 0; s < BENCH_NSIZES; s++) {
		n = comm_bench_sizes[s];
		iters = comm_bench_iters(n * sizeof *buf);
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
		if (rank == 0)
			secs[s] = (clock_mono() - t) / iters;
		if (comm_barrier(c, err, sizeof err) != 0)
			goto fail;
	}
	free(buf);
	comm_destroy(c);
	return 0;

fail:
	fprintf(stderr, "comm bench: %s rank %d of %d: %s\n", backend, rank,
	    world, err);
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
 * Fork world ranks of backend and wait for them, killing them at the
 * deadline; rank 0's times land in secs.  It forks, so call it before the
 * process starts threads.
 */
static int
comm_bench_group(const char *backend, int world, double *secs)
{
	const char	*tmpdir = getenv("TMPDIR");
	char		 dir[PATH_MAX];
	pid_t		 pid[BENCH_MAX_RANKS];
	int		 status, left = world, failed = 0;
	double		 deadline;

	snprintf(dir, sizeof dir, "%s/hunter-bench-comm.XXXXXX",
	    tmpdir != NULL && *tmpdir != '\0' ? tmpdir : "/tmp");
	if (mkdtemp(dir) == NULL) {
		fprintf(stderr, "comm bench: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	fflush(stdout);
	fflush(stderr);
	for (int r = 0; r < world; r++) {
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
			_exit(comm_bench_rank(dir, backend, r, world, secs));
		}
	}

	deadline = clock_mono() + BENCH_DEADLINE_MS / 1e3;
	while (left > 0) {
		for (int r = 0; r < world; r++) {
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
			for (int r = 0; r < world; r++) {
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

#define BENCH_NB	(sizeof comm_bench_backends / sizeof *comm_bench_backends)

static int
comm_bench(void)
{
	double	*secs, mc, bound, gloo, shm;
	size_t	 bytes;

	/* Shared, so that the forked ranks 0 can write their times. */
	secs = mmap(NULL, BENCH_NB * BENCH_NSIZES * sizeof *secs,
	    PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (secs == MAP_FAILED) {
		fprintf(stderr, "comm bench: mmap: %s\n", strerror(errno));
		return 1;
	}
	printf("comm: allreduce (sum of floats), gloo over 127.0.0.1 against "
	    "shm, %d warm-up calls; bound: 1.5x a memcpy\n", BENCH_WARMUP);
	printf("%5s %7s %9s %9s %9s %9s %7s %9s\n", "ranks", "floats",
	    "MiB", "gloo GB/s", "shm GB/s", "shm/gloo", "bound", "shm/bound");
	for (size_t w = 0; w < sizeof comm_bench_worlds /
	    sizeof *comm_bench_worlds; w++) {
		int	world = comm_bench_worlds[w];

		for (size_t b = 0; b < BENCH_NB; b++) {
			if (comm_bench_group(comm_bench_backends[b], world,
			    secs + b * BENCH_NSIZES) != 0) {
				munmap(secs, BENCH_NB * BENCH_NSIZES *
				    sizeof *secs);
				return 1;
			}
		}
		for (size_t s = 0; s < BENCH_NSIZES; s++) {
			bytes = comm_bench_sizes[s] * sizeof(float);
			mc = comm_bench_memcpy(bytes, comm_bench_iters(bytes));
			bound = bytes / (1.5 * mc) / 1e9;
			gloo = bytes / secs[s] / 1e9;
			shm = bytes / secs[BENCH_NSIZES + s] / 1e9;
			printf("%5d %6zuM %9.1f %9.2f %9.2f %8.1fx %7.2f %8.0f%%\n",
			    world, comm_bench_sizes[s] >> 20, bytes / 1048576.0,
			    gloo, shm, shm / gloo, bound, 100 * shm / bound);
		}
		fflush(stdout);
	}
	munmap(secs, BENCH_NB * BENCH_NSIZES * sizeof *secs);
	return 0;
}

const struct bench_entry bench_comm_entry = {
	.name = "comm",
	.summary = "dense allreduce on 2 and 4 ranks, Gloo against shared memory (1M, 4M, 16M floats), against memcpy",
	.run = comm_bench,
};
