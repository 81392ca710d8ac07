/*
 * test-comm.c: backend/comm over real Gloo between real processes.  Each
 * test forks 2 or 4 ranks that form a group over loopback, run
 * collectives and report to the parent through a pipe (a line of text)
 * and their exit status (0 when every check held); the parent asserts.
 *
 * The ranks meet through a file store in a temporary directory: it is the
 * test's stand-in for the backend's store, which workers reach through
 * their agent.  Gloo, its TCP mesh and the processes are real.  A child
 * that outlives its run's deadline is killed, and every child is reaped,
 * so none can hold the test runner's stdout open.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#endif

#include "lib/clock.h"
#include "backend/comm/comm.h"

/* The backend under test: comm.inc builds this file once per backend. */
#ifndef COMM_BACKEND
#define COMM_BACKEND	"gloo"
#endif
/* With n > 0, rank r claims to be on host r % n (HUNTER_COMM_HOST), so
 * that auto runs its hierarchical collectives on one machine. */
#ifndef COMM_HOSTS
#define COMM_HOSTS	0
#endif

#define MAX_RANKS	4
#define RUN_DEADLINE_MS	60000	/* generous for ASan; a hang is caught */

struct run {
	int		world;
	int		timeout_ms;
	double		t0;		/* CLOCK_MONOTONIC ms before forking */
	char		dir[PATH_MAX];
};

/* In a child: its end of the pipe to the parent. */
static int	child_fd = -1;

struct rank_result {
	int		exited;		/* exit status, or -1 */
	int		signal;		/* terminating signal, or 0 */
	char		msg[2048];
};

/* Checks one rank makes; 0 if all held, else 1 with the reason in msg. */
typedef int (*rank_fn)(const struct run *, int rank, char *msg, size_t);

static void
say(char *msg, size_t len, const char *fmt, ...)
{
	size_t	used = strlen(msg);
	va_list	ap;

	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(msg + used, len - used, fmt, ap);
	va_end(ap);
}

static struct comm *
rank_join(const struct run *run, int rank, int generation, char *msg,
    size_t len)
{
	struct comm_config	 cf = {
		.backend = COMM_BACKEND, .rank = rank, .world = run->world,
		.generation = generation, .bind_addr = "127.0.0.1",
		.timeout_ms = run->timeout_ms,
	};
	struct comm_store	 cs = comm_dir_store(run->dir);
	struct comm		*c;
	char			 err[1024] = "", host[32];

	if (COMM_HOSTS > 0) {
		snprintf(host, sizeof host, "test-host-%d", rank % (COMM_HOSTS +
		    !COMM_HOSTS));
		setenv("HUNTER_COMM_HOST", host, 1);
	}
	c = comm_init(&cf, &cs, err, sizeof err);
	if (c == NULL)
		say(msg, len, "rank %d: comm_init: %s; ", rank, err);
	else if (comm_rank(c) != rank || comm_world(c) != run->world)
		say(msg, len, "rank %d: accessors say %d of %d; ", rank,
		    comm_rank(c), comm_world(c));
	return c;
}

static void
run_init(struct run *run, int world, int timeout_ms)
{
	memset(run, 0, sizeof *run);
	run->world = world;
	run->timeout_ms = timeout_ms;
	snprintf(run->dir, sizeof run->dir, "%s/test-comm.XXXXXX",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(run->dir));
}

static void
run_cleanup(struct run *run)
{
	DIR		*d;
	struct dirent	*de;
	char		 path[PATH_MAX + 256];

	if ((d = opendir(run->dir)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			if (strcmp(de->d_name, ".") == 0 ||
			    strcmp(de->d_name, "..") == 0)
				continue;
			snprintf(path, sizeof path, "%s/%s", run->dir,
			    de->d_name);
			unlink(path);
		}
		closedir(d);
	}
	rmdir(run->dir);
}

/*
 * Fork one child per rank running fn, collect each one's message until
 * its pipe closes, kill whatever is left at the deadline, reap them all.
 */
static void
run_ranks(struct run *run, rank_fn fn, struct rank_result *res)
{
	pid_t		pid[MAX_RANKS];
	struct pollfd	pfd[MAX_RANKS];
	size_t		got[MAX_RANKS] = { 0 };
	int		open_fds, status, p[2];
	double		deadline;

	fflush(stdout);
	fflush(stderr);
	run->t0 = 1e3 * clock_mono();
	for (int r = 0; r < run->world; r++) {
		memset(&res[r], 0, sizeof res[r]);
		assert_int_equal(pipe(p), 0);
		pid[r] = fork();
		assert_true(pid[r] >= 0);
		if (pid[r] == 0) {
			char	msg[sizeof res[r].msg] = "";
			int	rc;

			prctl(PR_SET_PDEATHSIG, SIGKILL);
			for (int i = 0; i < r; i++)
				close(pfd[i].fd);
			close(p[0]);
			child_fd = p[1];
			rc = fn(run, r, msg, sizeof msg);
#ifdef __SANITIZE_ADDRESS__
			/* _exit skips LeakSanitizer's check at exit. */
			if (__lsan_do_recoverable_leak_check() != 0) {
				say(msg, sizeof msg, "; rank %d leaked", r);
				rc = 1;
			}
#endif
			if (write(p[1], msg, strlen(msg)) < 0)
				rc = 1;
			_exit(rc);
		}
		close(p[1]);
		pfd[r].fd = p[0];
		pfd[r].events = POLLIN;
	}

	open_fds = run->world;
	deadline = 1e3 * clock_mono() + RUN_DEADLINE_MS;
	while (open_fds > 0 && 1e3 * clock_mono() < deadline) {
		if (poll(pfd, (nfds_t)run->world,
		    (int)(deadline - 1e3 * clock_mono()) + 1) < 0 && errno != EINTR)
			break;
		for (int r = 0; r < run->world; r++) {
			char	*at = res[r].msg + got[r];
			size_t	 room = sizeof res[r].msg - 1 - got[r];
			char	 sink[256];
			ssize_t	 n;

			if (pfd[r].fd < 0 || pfd[r].revents == 0)
				continue;
			n = room > 0 ? read(pfd[r].fd, at, room) :
			    read(pfd[r].fd, sink, sizeof sink);
			if (n > 0 && room > 0)
				got[r] += (size_t)n;
			else if (n == 0 || (n < 0 && errno != EINTR)) {
				close(pfd[r].fd);
				pfd[r].fd = -1;
				open_fds--;
			}
		}
	}
	for (int r = 0; r < run->world; r++) {
		if (pfd[r].fd >= 0) {
			kill(pid[r], SIGKILL);
			close(pfd[r].fd);
			snprintf(res[r].msg + got[r],
			    sizeof res[r].msg - got[r],
			    "rank %d: still running after %d ms, killed",
			    r, RUN_DEADLINE_MS);
		}
		while (waitpid(pid[r], &status, 0) < 0 && errno == EINTR)
			;
		res[r].exited = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		res[r].signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	}
}

/* Run fn on world ranks and require that every one passed. */
static void
run_all_pass(int world, int timeout_ms, rank_fn fn)
{
	struct run		run;
	struct rank_result	res[MAX_RANKS];
	int			failed = 0;

	run_init(&run, world, timeout_ms);
	run_ranks(&run, fn, res);
	run_cleanup(&run);
	for (int r = 0; r < world; r++) {
		if (res[r].exited != 0) {
			print_error("rank %d of %d: exit %d signal %d: %s\n", r,
			    world, res[r].exited, res[r].signal, res[r].msg);
			failed = 1;
		}
	}
	assert_int_equal(failed, 0);
}

static int
rank_allreduce(const struct run *run, int rank, char *msg, size_t len)
{
	static const size_t	 sizes[] = { 1, 1000, 1 << 20 };
	const float		 ranks_sum = run->world * (run->world + 1) / 2;
	struct comm		*c;
	float			*buf;
	char			 err[1024];
	int			 bad = 0;

	if ((c = rank_join(run, rank, 0, msg, len)) == NULL)
		return 1;
	buf = malloc(sizeof *buf * (1 << 20));
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0] && !bad; s++) {
		size_t	n = sizes[s];

		for (size_t i = 0; i < n; i++)
			buf[i] = (float)((i % 1024) * (size_t)(rank + 1));
		if (comm_allreduce_f32(c, buf, n, err, sizeof err) != 0) {
			say(msg, len, "rank %d: %s; ", rank, err);
			bad = 1;
			break;
		}
		for (size_t i = 0; i < n; i++) {
			if (buf[i] != (float)(i % 1024) * ranks_sum) {
				say(msg, len, "rank %d: %zu floats: [%zu] = %g, "
				    "want %g; ", rank, n, i, buf[i],
				    (float)(i % 1024) * ranks_sum);
				bad = 1;
				break;
			}
		}
	}
	free(buf);
	comm_destroy(c);
	return bad;
}

static void
t_allreduce_2(void **state)
{
	run_all_pass(2, 10000, rank_allreduce);
}

static void
t_allreduce_4(void **state)
{
	run_all_pass(4, 10000, rank_allreduce);
}

/* reduce-scatter over uneven parts (one of them empty at n = 1, several
 * slots' worth at the largest): a rank's part has the bits an allreduce
 * of the same floats gives. */
static int
rank_reduce_scatter(const struct run *run, int rank, char *msg, size_t len)
{
	static const size_t	 sizes[] = { 1, 1003, (3 << 20) + 5 };
	size_t			 counts[MAX_RANKS], off = 0;
	struct comm		*c;
	float			*buf, *ref;
	char			 err[1024];
	int			 bad = 0, w = run->world;

	if ((c = rank_join(run, rank, 0, msg, len)) == NULL)
		return 1;
	buf = malloc(sizeof *buf * sizes[2]);
	ref = malloc(sizeof *ref * sizes[2]);
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0] && !bad; s++) {
		size_t	n = sizes[s];

		for (size_t i = 0; i < n; i++)
			ref[i] = buf[i] = (float)((i * 2654435761u +
			    (size_t)rank * 97) % 1000) / 7.0f;
		for (int r = 0; r < w; r++)
			counts[r] = n / (size_t)w + ((size_t)r < n % (size_t)w);
		off = 0;
		for (int r = 0; r < rank; r++)
			off += counts[r];
		if (comm_reduce_scatter_f32(c, buf, n, counts, err,
		    sizeof err) != 0 || comm_allreduce_f32(c, ref, n, err,
		    sizeof err) != 0) {
			say(msg, len, "rank %d: %s; ", rank, err);
			bad = 1;
		} else if (memcmp(buf + off, ref + off, counts[rank] *
		    sizeof *buf) != 0) {
			say(msg, len, "rank %d: %zu floats: its part differs "
			    "from the allreduce; ", rank, n);
			bad = 1;
		}
	}
	free(buf);
	free(ref);
	comm_destroy(c);
	return bad;
}

static void
t_reduce_scatter_2(void **state)
{
	run_all_pass(2, 10000, rank_reduce_scatter);
}

static void
t_reduce_scatter_4(void **state)
{
	run_all_pass(4, 10000, rank_reduce_scatter);
}

static uint8_t
gather_byte(int rank, size_t i)
{
	return (uint8_t)(rank * 37 + i * 11 + 1);
}

/* Round 0: rank 1 brings nothing; round 1: rank 0 does. */
static size_t
gather_len(int round, int rank)
{
	return rank == 1 - round ? 0 : 1000 * (size_t)(rank + 1) + 7 * rank;
}

static int
rank_allgatherv(const struct run *run, int rank, char *msg, size_t len)
{
	struct comm	*c;
	size_t		 lens[MAX_RANKS], total, off;
	uint8_t		*in, *out;
	char		 err[1024];
	int		 bad = 0;

	if ((c = rank_join(run, rank, 0, msg, len)) == NULL)
		return 1;
	for (int round = 0; round < 2 && !bad; round++) {
		total = 0;
		for (int r = 0; r < run->world; r++)
			total += lens[r] = gather_len(round, r);
		in = malloc(lens[rank] + 1);
		out = malloc(total);
		for (size_t i = 0; i < lens[rank]; i++)
			in[i] = gather_byte(rank, i);
		memset(out, 0xee, total);
		if (comm_allgatherv(c, in, out, lens, err, sizeof err) != 0) {
			say(msg, len, "rank %d: %s; ", rank, err);
			bad = 1;
		}
		off = 0;
		for (int r = 0; r < run->world && !bad; r++) {
			for (size_t i = 0; i < lens[r]; i++) {
				if (out[off + i] != gather_byte(r, i)) {
					say(msg, len, "rank %d: round %d: byte %zu "
					    "of rank %d is %u; ", rank, round, i,
					    r, out[off + i]);
					bad = 1;
					break;
				}
			}
			off += lens[r];
		}
		free(in);
		free(out);
	}
	comm_destroy(c);
	return bad;
}

static void
t_allgatherv_2(void **state)
{
	run_all_pass(2, 10000, rank_allgatherv);
}

static void
t_allgatherv_4(void **state)
{
	run_all_pass(4, 10000, rank_allgatherv);
}

/*
 * Transfers in the background: in each of 3 rounds every other rank
 * sends rank 0 a run of bytes of its own (sizes from 1 byte to 1 MB), and
 * an allgatherv runs while they are in flight; after the waits rank 0
 * has every byte and the collective its own.  Where the backend has none
 * (shm, auto with ranks sharing a host) a start is refused with a reason.
 */
static int
rank_xfer(const struct run *run, int rank, char *msg, size_t len)
{
	static const size_t	 sizes[3] = { 1, 4096, 1 << 20 };
	int			 expect = strcmp(COMM_BACKEND, "gloo") == 0 ||
	    (strcmp(COMM_BACKEND, "auto") == 0 && COMM_HOSTS >= run->world);
	struct comm		*c;
	struct comm_xfer	*x[MAX_RANKS];
	size_t			 lens[MAX_RANKS], n;
	uint8_t			*buf, in[MAX_RANKS], out[MAX_RANKS];
	char			 err[1024] = "";
	int			 bad = 0, nx;

	if ((c = rank_join(run, rank, 0, msg, len)) == NULL)
		return 1;
	if (comm_has_xfer(c) != expect) {
		say(msg, len, "rank %d: comm_has_xfer says %d; ", rank,
		    comm_has_xfer(c));
		comm_destroy(c);
		return 1;
	}
	if (!expect) {
		buf = malloc(8);
		if (comm_xfer_start(c, buf, 8, rank == 0, 1, 1, err,
		    sizeof err) != NULL || strstr(err, "no transfers") == NULL) {
			say(msg, len, "rank %d: a start without transfers: "
			    "'%s'; ", rank, err);
			bad = 1;
		}
		free(buf);
		comm_destroy(c);
		return bad;
	}
	if (comm_xfer_start(c, in, 1, rank, 1, 1, err, sizeof err) != NULL ||
	    strstr(err, "not another rank") == NULL) {
		say(msg, len, "rank %d: a transfer to itself: '%s'; ", rank, err);
		bad = 1;
	}
	for (int round = 0; round < 3 && !bad; round++) {
		n = sizes[round] + MAX_RANKS;	/* room for any rank's */
		buf = malloc(n * (size_t)run->world);
		memset(buf, 0xee, n * (size_t)run->world);
		nx = 0;
		for (int r = 1; r < run->world; r++) {
			uint8_t	*at = rank == 0 ? buf + (size_t)r * n : buf;
			size_t	 rl = sizes[round] + (size_t)r;

			if (rank != 0 && r != rank)
				continue;
			if (rank != 0)
				for (size_t i = 0; i < rl; i++)
					at[i] = gather_byte(rank + round, i);
			x[nx] = comm_xfer_start(c, at, rl, rank == 0 ? r : 0,
			    rank != 0, (uint32_t)round, err, sizeof err);
			if (x[nx] == NULL) {
				say(msg, len, "rank %d: start: %s; ", rank, err);
				bad = 1;
				break;
			}
			nx++;
		}
		for (int r = 0; r < run->world; r++)
			lens[r] = 1;
		in[0] = (uint8_t)(rank + 1);
		if (!bad && comm_allgatherv(c, in, out, lens, err,
		    sizeof err) != 0) {
			say(msg, len, "rank %d: allgatherv: %s; ", rank, err);
			bad = 1;
		}
		for (int r = 0; r < run->world && !bad; r++)
			if (out[r] != r + 1) {
				say(msg, len, "rank %d: allgatherv's byte %d is "
				    "%u; ", rank, r, out[r]);
				bad = 1;
			}
		for (int i = 0; i < nx; i++)
			if (comm_xfer_wait(c, x[i], err, sizeof err) != 0 &&
			    !bad) {
				say(msg, len, "rank %d: wait: %s; ", rank, err);
				bad = 1;
			}
		for (int r = 1; r < run->world && rank == 0 && !bad; r++) {
			size_t	 rl = sizes[round] + (size_t)r;

			for (size_t i = 0; i < rl; i++)
				if (buf[(size_t)r * n + i] !=
				    gather_byte(r + round, i)) {
					say(msg, len, "round %d: byte %zu from "
					    "rank %d is %u; ", round, i, r,
					    buf[(size_t)r * n + i]);
					bad = 1;
					break;
				}
		}
		free(buf);
	}
	comm_destroy(c);
	return bad;
}

static void
t_xfer_2(void **state)
{
	run_all_pass(2, 10000, rank_xfer);
}

static void
t_xfer_4(void **state)
{
	run_all_pass(4, 10000, rank_xfer);
}

static int
rank_broadcast(const struct run *run, int rank, char *msg, size_t len)
{
	enum { N = 100003 };
	struct comm	*c;
	uint8_t		*buf;
	uint32_t	 word;
	char		 err[1024];
	int		 bad = 0;

	if ((c = rank_join(run, rank, 0, msg, len)) == NULL)
		return 1;
	buf = malloc(N);
	for (size_t i = 0; i < N; i++)
		buf[i] = rank == 1 ? gather_byte(1, i) : 0xee;
	if (comm_broadcast(c, buf, N, 1, err, sizeof err) != 0) {
		say(msg, len, "rank %d: %s; ", rank, err);
		bad = 1;
	}
	for (size_t i = 0; i < N && !bad; i++) {
		if (buf[i] != gather_byte(1, i)) {
			say(msg, len, "rank %d: byte %zu is %u; ", rank, i,
			    buf[i]);
			bad = 1;
		}
	}
	word = rank == 0 ? 0xc0ffee : 0;
	if (!bad && comm_broadcast(c, &word, sizeof word, 0, err,
	    sizeof err) != 0) {
		say(msg, len, "rank %d: %s; ", rank, err);
		bad = 1;
	}
	if (!bad && word != 0xc0ffee) {
		say(msg, len, "rank %d: word from root 0 is %x; ", rank, word);
		bad = 1;
	}
	if (comm_broadcast(c, &word, sizeof word, run->world, err,
	    sizeof err) != -1 || *err == '\0') {
		say(msg, len, "rank %d: broadcast from rank %d passed; ", rank,
		    run->world);
		bad = 1;
	}
	free(buf);
	comm_destroy(c);
	return bad;
}

static void
t_broadcast_2(void **state)
{
	run_all_pass(2, 10000, rank_broadcast);
}

static void
t_broadcast_4(void **state)
{
	run_all_pass(4, 10000, rank_broadcast);
}

/*
 * Rank r arrives r * 100 ms after the start, so nobody may leave before
 * the last one arrived.
 */
static int
rank_barrier(const struct run *run, int rank, char *msg, size_t len)
{
	double		 last = run->t0 + (run->world - 1) * 100.0;
	struct comm	*c;
	char		 err[1024];
	int		 bad = 0;

	if ((c = rank_join(run, rank, 0, msg, len)) == NULL)
		return 1;
	usleep((useconds_t)rank * 100000);
	for (int i = 0; i < 2 && !bad; i++) {
		if (comm_barrier(c, err, sizeof err) != 0) {
			say(msg, len, "rank %d: %s; ", rank, err);
			bad = 1;
		}
	}
	if (!bad && 1e3 * clock_mono() < last) {
		say(msg, len, "rank %d: left the barrier %.1f ms before the "
		    "last rank arrived; ", rank, last - 1e3 * clock_mono());
		bad = 1;
	}
	comm_destroy(c);
	return bad;
}

static void
t_barrier(void **state)
{
	run_all_pass(4, 10000, rank_barrier);
}

static int
rank_sum_check(struct comm *c, int rank, int world, char *msg, size_t len)
{
	float	v = (float)(rank + 1);
	char	err[1024];

	if (comm_allreduce_f32(c, &v, 1, err, sizeof err) != 0) {
		say(msg, len, "rank %d: %s; ", rank, err);
		return 1;
	}
	if (v != (float)(world * (world + 1) / 2)) {
		say(msg, len, "rank %d: sum is %g; ", rank, v);
		return 1;
	}
	return 0;
}

/* Generations 0 and 1 in one process, no barrier in between. */
static int
rank_generations(const struct run *run, int rank, char *msg, size_t len)
{
	struct comm	*c;

	for (int gen = 0; gen < 2; gen++) {
		if ((c = rank_join(run, rank, gen, msg, len)) == NULL)
			return 1;
		if (rank_sum_check(c, rank, run->world, msg, len) != 0) {
			comm_destroy(c);
			return 1;
		}
		comm_destroy(c);
	}
	return 0;
}

/* Generation 2 in new processes, while the keys of 0 and 1 remain. */
static int
rank_generation_2(const struct run *run, int rank, char *msg, size_t len)
{
	struct comm	*c;
	int		 bad;

	if ((c = rank_join(run, rank, 2, msg, len)) == NULL)
		return 1;
	bad = rank_sum_check(c, rank, run->world, msg, len);
	comm_destroy(c);
	return bad;
}

static int
count_prefixed(const char *dir, const char *prefix)
{
	DIR		*d;
	struct dirent	*de;
	int		 n = 0;

	assert_non_null(d = opendir(dir));
	while ((de = readdir(d)) != NULL)
		n += strncmp(de->d_name, prefix, strlen(prefix)) == 0;
	closedir(d);
	return n;
}

static void
t_generations(void **state)
{
	struct run		run;
	struct rank_result	res[2];

	run_init(&run, 2, 10000);
	run_ranks(&run, rank_generations, res);
	for (int r = 0; r < 2; r++) {
		if (res[r].exited != 0)
			print_error("rank %d: %s\n", r, res[r].msg);
		assert_int_equal(res[r].exited, 0);
	}
	run_ranks(&run, rank_generation_2, res);
	for (int r = 0; r < 2; r++) {
		if (res[r].exited != 0)
			print_error("rank %d: %s\n", r, res[r].msg);
		assert_int_equal(res[r].exited, 0);
	}
	/* "g0/0" is stored as "g0%2f0": each generation has its own keys
	 * (shm has one: the segment's name). */
	int	keys = strcmp(COMM_BACKEND, "shm") == 0 ? 1 : 2;

	assert_true(count_prefixed(run.dir, "g0%2f") >= keys);
	assert_true(count_prefixed(run.dir, "g1%2f") >= keys);
	assert_true(count_prefixed(run.dir, "g2%2f") >= keys);
	run_cleanup(&run);
}

/* Rank 1 never calls comm_init; rank 0 must give up at its timeout. */
static int
rank_lonely(const struct run *run, int rank, char *msg, size_t len)
{
	struct comm_config	 cf = {
		.backend = COMM_BACKEND, .rank = rank, .world = run->world,
		.bind_addr = "127.0.0.1", .timeout_ms = run->timeout_ms,
	};
	struct comm_store	 cs = comm_dir_store(run->dir);
	struct comm		*c;
	char			 err[1024] = "";
	double			 t;

	if (rank != 0)
		return 0;
	t = 1e3 * clock_mono();
	c = comm_init(&cf, &cs, err, sizeof err);
	t = 1e3 * clock_mono() - t;
	say(msg, len, "%.0f\n%s", t, err);
	if (c != NULL) {
		comm_destroy(c);
		return 1;
	}
	return *err == '\0';
}

static void
t_peer_never_arrives(void **state)
{
	struct run		run;
	struct rank_result	res[2];
	char			*err;
	double			 ms;

	run_init(&run, 2, 1000);
	run_ranks(&run, rank_lonely, res);
	run_cleanup(&run);
	ms = strtod(res[0].msg, &err);
	print_message("    comm_init without a peer: -1 after %.0f ms: %s\n",
	    ms, err + 1);
	assert_int_equal(res[0].exited, 0);
	assert_int_equal(res[1].exited, 0);
	assert_true(ms >= 900);
	assert_true(ms < 5000);
}

/*
 * Allreduce until one fails; the failing call must return -1 with a
 * message within 10 s of the victim's death, later calls refuse at once,
 * and destroy returns.  The victim tells the parent when it dies, then
 * SIGKILLs itself after 5 allreduces; a survivor reports when its call
 * returned.
 */
static int
rank_survivor(const struct run *run, int rank, int victim, char *msg,
    size_t len)
{
	enum { N = 1 << 20 };
	struct comm	*c;
	float		*buf;
	char		 err[1024] = "";
	double		 t = 0;
	int		 i, rc = 0;

	if ((c = rank_join(run, rank, 0, msg, len)) == NULL)
		return 1;
	buf = calloc(N, sizeof *buf);
	for (i = 0; i < 1000 && rc == 0; i++) {
		if (rank == victim && i == 5) {
			dprintf(child_fd, "%.3f", 1e3 * clock_mono());
			raise(SIGKILL);
		}
		rc = comm_allreduce_f32(c, buf, N, err, sizeof err);
		t = 1e3 * clock_mono();
	}
	free(buf);
	say(msg, len, "%.3f\nrank %d, allreduce %d: %s", t, rank, i - 1, err);
	if (rc == 0 || *err == '\0') {
		comm_destroy(c);
		return 1;
	}
	if (comm_barrier(c, err, sizeof err) != -1 ||
	    strstr(err, "failed earlier") == NULL) {
		say(msg, len, "; barrier after the failure: %s", err);
		comm_destroy(c);
		return 1;
	}
	comm_destroy(c);
	return 0;
}

static int
rank_kill_1(const struct run *run, int rank, char *msg, size_t len)
{
	return rank_survivor(run, rank, 1, msg, len);
}

static int
rank_kill_2(const struct run *run, int rank, char *msg, size_t len)
{
	return rank_survivor(run, rank, 2, msg, len);
}

static void
check_killed(int world, int victim, rank_fn fn)
{
	struct run		run;
	struct rank_result	res[MAX_RANKS];
	char			*why;
	double			 died, ms;

	run_init(&run, world, 3000);
	run_ranks(&run, fn, res);
	run_cleanup(&run);
	assert_int_equal(res[victim].signal, SIGKILL);
	died = strtod(res[victim].msg, NULL);
	for (int r = 0; r < world; r++) {
		if (r == victim)
			continue;
		ms = strtod(res[r].msg, &why) - died;
		print_message("    %d ranks, rank %d killed: -1 %.0f ms later: "
		    "%s\n",
		    world, victim, ms, *why != '\0' ? why + 1 : why);
		assert_int_equal(res[r].exited, 0);
		assert_true(ms >= 0 && ms < 10000);
	}
}

static void
t_peer_killed_2(void **state)
{
	check_killed(2, 1, rank_kill_1);
}

static void
t_peer_killed_4(void **state)
{
	check_killed(4, 2, rank_kill_2);
}

/* Rank 1 stays alive but stops calling; rank 0 must time out. */
static int
rank_silent(const struct run *run, int rank, char *msg, size_t len)
{
	struct comm	*c;
	float		 v = 1;
	char		 err[1024] = "";
	double		 t;
	int		 rc;

	if ((c = rank_join(run, rank, 0, msg, len)) == NULL)
		return 1;
	if (comm_allreduce_f32(c, &v, 1, err, sizeof err) != 0) {
		say(msg, len, "0\nfirst allreduce: %s", err);
		comm_destroy(c);
		return 1;
	}
	if (rank == 1) {
		usleep(2500 * 1000);
		comm_destroy(c);
		return 0;
	}
	t = 1e3 * clock_mono();
	rc = comm_allreduce_f32(c, &v, 1, err, sizeof err);
	t = 1e3 * clock_mono() - t;
	say(msg, len, "%.0f\n%s", t, err);
	comm_destroy(c);
	return rc != -1 || *err == '\0';
}

static void
t_peer_silent(void **state)
{
	struct run		run;
	struct rank_result	res[2];
	char			*why;
	double			 ms;

	run_init(&run, 2, 1000);
	run_ranks(&run, rank_silent, res);
	run_cleanup(&run);
	ms = strtod(res[0].msg, &why);
	print_message("    silent peer: %.0f ms: %s\n", ms, why + 1);
	assert_int_equal(res[0].exited, 0);
	assert_int_equal(res[1].exited, 0);
	assert_true(ms >= 900);
	assert_true(ms < 5000);
}

/* A group of one and bad configurations, in this process: no Gloo. */
static void
t_world_1_and_config(void **state)
{
	struct comm_config	 cf = {
		.backend = COMM_BACKEND, .rank = 0, .world = 1,
		.bind_addr = "127.0.0.1", .timeout_ms = 1000,
	};
	struct comm		*c;
	float			 f[3] = { 1, 2, 3 };
	char			 in[5] = "abcd", out[5] = "", err[256];
	size_t			 lens[1] = { 4 };

	cf.backend = "mpi";
	assert_null(comm_init(&cf, NULL, err, sizeof err));
	assert_string_equal(err, "comm backend 'mpi' is not built");
#ifndef HAVE_CUDA
	cf.backend = "nccl";
	assert_null(comm_init(&cf, NULL, err, sizeof err));
	assert_string_equal(err, "comm backend 'nccl' is not built");
#endif
	cf.backend = COMM_BACKEND;
	cf.rank = 1;
	assert_null(comm_init(&cf, NULL, err, sizeof err));
	assert_non_null(strstr(err, "rank 1"));
	cf.rank = 0;
	cf.timeout_ms = 0;
	assert_null(comm_init(&cf, NULL, err, sizeof err));
	cf.timeout_ms = 1000;
	cf.world = 2;
	assert_null(comm_init(&cf, NULL, err, sizeof err));
	assert_non_null(strstr(err, "store"));
	cf.world = 1;

	assert_non_null(c = comm_init(&cf, NULL, err, sizeof err));
	assert_int_equal(comm_rank(c), 0);
	assert_int_equal(comm_world(c), 1);
	assert_string_equal(comm_backend_name(c), COMM_BACKEND);
	assert_string_equal(comm_memory(c), "host");
	assert_int_equal(comm_allreduce_f32(c, f, 3, err, sizeof err), 0);
	assert_true(f[0] == 1 && f[1] == 2 && f[2] == 3);
	assert_int_equal(comm_allgatherv(c, in, out, lens, err, sizeof err), 0);
	assert_string_equal(out, "abcd");
	assert_int_equal(comm_broadcast(c, in, 4, 0, err, sizeof err), 0);
	assert_int_equal(comm_broadcast(c, in, 4, 1, err, sizeof err), -1);
	assert_int_equal(comm_barrier(c, err, sizeof err), 0);
	comm_destroy(c);
	comm_destroy(NULL);
}

static int	wild_calls;

static int
wild_set(void *ctx, const char *key, const void *val, size_t len)
{
	(void)ctx; (void)key; (void)val; (void)len;
	wild_calls++;
	return -1;
}

static int
wild_get(void *ctx, const char *key, void **val, size_t *len, int timeout_ms)
{
	(void)ctx; (void)key; (void)val; (void)len; (void)timeout_ms;
	wild_calls++;
	return -1;
}

/* The mesh has no authentication: it never binds to every interface.
 * 0.0.0.0 and :: are refused before the rendezvous (the store is never
 * touched) with a message that says what to set. */
static void
t_no_wildcard_bind(void **state)
{
	static const char *const wild[] = { "0.0.0.0", "::", "0" };
	struct comm_config	 cf = {
		.backend = "gloo", .rank = 0, .world = 2, .timeout_ms = 500,
	};
	struct comm_store	 cs = { .set = wild_set, .get = wild_get };
	char			 err[512];
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof wild / sizeof wild[0]; i++) {
		cf.bind_addr = wild[i];
		wild_calls = 0;
		*err = '\0';
		assert_null(comm_init(&cf, &cs, err, sizeof err));
		print_message("    %s: %s\n", wild[i], err);
		assert_non_null(strstr(err, "will not bind the collective mesh"));
		assert_non_null(strstr(err, "node's addr"));
		assert_int_equal(wild_calls, 0);
	}
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(t_world_1_and_config),
		cmocka_unit_test(t_no_wildcard_bind),
		cmocka_unit_test(t_allreduce_2),
		cmocka_unit_test(t_allreduce_4),
		cmocka_unit_test(t_reduce_scatter_2),
		cmocka_unit_test(t_reduce_scatter_4),
		cmocka_unit_test(t_allgatherv_2),
		cmocka_unit_test(t_allgatherv_4),
		cmocka_unit_test(t_xfer_2),
		cmocka_unit_test(t_xfer_4),
		cmocka_unit_test(t_broadcast_2),
		cmocka_unit_test(t_broadcast_4),
		cmocka_unit_test(t_barrier),
		cmocka_unit_test(t_generations),
		cmocka_unit_test(t_peer_never_arrives),
		cmocka_unit_test(t_peer_killed_2),
		cmocka_unit_test(t_peer_killed_4),
		cmocka_unit_test(t_peer_silent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
