/*
 * bench-agent.c: `hunter bench agent`.  What a node's agent costs: its
 * CPU (utime + stime of its process per wall second, in percent of one
 * core) and the bytes a second it sends the backend, at the default 1 Hz,
 * with two program ranks to sample (`sleep`), and the GPUs NVML gives
 * (none on a CPU node; $HUNTER_NVML_LIBRARY, e.g. the tests' double,
 * gives some).  This binary's agent and, when $HUNTER_BENCH_BASELINE
 * names another hunter (one built from an older tree), that one's, run
 * side by side in the same seconds, each in a state directory of its
 * own, so the machine's load weighs on both alike; the ratio is printed.
 * Targets: 0.5% of a core and 2 KB/s a node.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "lib/clock.h"
#include "bench/bench.h"

#define BENCH_AGENT_S		30	/* the measured window */
#define BENCH_AGENT_WARMUP_S	5	/* first samples, the ranks' start */
#define BENCH_AGENT_RANKS	2

struct bench_agent {
	const char	*what, *exe;
	char		 dir[PATH_MAX];
	pid_t		 pid;
	int		 fd;
	uint32_t	 hdr;		/* a frame's length, as it comes */
	int		 nhdr;
	size_t		 left;		/* of the frame being read */
	long		 bytes, frames;
	double		 cpu0, cpu1;
};

/* utime + stime of pid in seconds, or -1. */
static double
agent_cpu(pid_t pid)
{
	char		 path[64], buf[1024], *p;
	unsigned long	 ut, st;
	FILE		*f;
	size_t		 n;

	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
	    &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* One frame, length first. */
static int
agent_send(int fd, json_t *o)
{
	char		*s = json_dumps(o, JSON_COMPACT);
	uint32_t	 n = s != NULL ? (uint32_t)strlen(s) : 0;
	unsigned char	 h[4] = { n >> 24, n >> 16, n >> 8, n };
	int		 rc = s != NULL && write(fd, h, 4) == 4 &&
			    write(fd, s, n) == (ssize_t)n ? 0 : -1;

	free(s);
	json_decref(o);
	return rc;
}

/* A rank of a program job that does nothing: sleep. */
static json_t *
agent_launch(int r)
{
	return json_pack("{s:s, s:s, s:s, s:i, s:i, s:i, s:i, s:s, s:s, s:i, "
	    "s:s, s:s, s:s, s:b, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, "
	    "s:{s:[s, s], s:{}, s:s, s:i}}", "t", "cmd", "cmd", "launch",
	    "job", "bench", "rank", r, "world", BENCH_AGENT_RANKS,
	    "generation", 0, "run", 1, "node", "bench", "addr", "127.0.0.1",
	    "local_rank", r, "spec_file", "bench.yaml", "spec_yaml", "",
	    "checkpoint_dir", "", "resume", 0, "timeout_ms", 10000,
	    "stop_after_epochs", 0, "trace_steps", 0, "slow_data_ms", 0,
	    "slow_ms", 0, "log_flood", 0, "leak_bytes", 0, "crash_at", 0,
	    "program", "argv", "/bin/sleep", "600", "env", "dir", "/tmp",
	    "stop_grace_s", 1);
}

/* Start the agent of a, link to it as its backend, launch the ranks. */
static int
agent_start(struct bench_agent *a)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char		 cmd[PATH_MAX * 2 + 128], path[PATH_MAX + 32];
	FILE		*f;
	long		 pid = 0;

	snprintf(a->dir, sizeof a->dir, "/tmp/hunter-bench-agent.XXXXXX");
	if (mkdtemp(a->dir) == NULL)
		return -1;
	snprintf(cmd, sizeof cmd, "'%s' agent --node bench --dir '%s/node' "
	    "--idle-exit 60", a->exe, a->dir);
	if (system(cmd) != 0)
		return -1;
	snprintf(path, sizeof path, "%s/node/agent.pid", a->dir);
	for (int i = 0; i < 100 && pid <= 0; i++) {
		if ((f = fopen(path, "r")) != NULL) {
			if (fscanf(f, "%ld", &pid) != 1)
				pid = 0;
			fclose(f);
		}
		if (pid <= 0)
			usleep(50000);
	}
	if ((a->pid = (pid_t)pid) <= 0)
		return -1;
	snprintf(sun.sun_path, sizeof sun.sun_path, "%s/node/agent.sock",
	    a->dir);
	if ((a->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	for (int i = 0; connect(a->fd, (struct sockaddr *)&sun, sizeof sun) != 0;
	    i++) {
		if (i == 100)
			return -1;
		usleep(50000);
	}
	if (agent_send(a->fd, json_pack("{s:s, s:s, s:i}", "t", "hello",
	    "role", "backend", "proto", 1)) != 0)
		return -1;
	for (int r = 0; r < BENCH_AGENT_RANKS; r++) {
		if (agent_send(a->fd, agent_launch(r)) != 0)
			return -1;
	}
	return 0;
}

/* Count what came from a's agent: bytes, and frames by their lengths. */
static void
agent_read(struct bench_agent *a, bool count)
{
	unsigned char	 buf[1 << 16];
	ssize_t		 n = read(a->fd, buf, sizeof buf);

	for (ssize_t i = 0; i < n; ) {
		size_t	 take;

		if (a->left == 0) {		/* the length, big-endian */
			a->hdr = a->hdr << 8 | buf[i++];
			if (++a->nhdr == 4) {
				a->left = a->hdr;
				a->hdr = a->nhdr = 0;
				a->frames += count;
			}
			continue;
		}
		take = (size_t)(n - i) < a->left ? (size_t)(n - i) : a->left;
		i += (ssize_t)take;
		a->left -= take;
	}
	if (count && n > 0)
		a->bytes += n;
}

static void
agent_stop(struct bench_agent *a)
{
	char	 cmd[PATH_MAX + 32];

	if (a->fd >= 0)
		close(a->fd);
	if (a->pid > 0) {
		kill(a->pid, SIGTERM);
		for (int i = 0; i < 100 && kill(a->pid, 0) == 0; i++)
			usleep(50000);
	}
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", a->dir);
	if (a->dir[0] != '\0' && system(cmd) != 0) {
		/* left for the next reboot */
	}
}

static int
bench_agent(void)
{
	struct bench_agent a[2] = {
		{ .what = "this", .exe = "/proc/self/exe", .fd = -1 },
		{ .what = "baseline", .exe = getenv("HUNTER_BENCH_BASELINE"),
		  .fd = -1 },
	};
	char		 self[PATH_MAX];
	int		 n = a[1].exe != NULL && *a[1].exe != '\0' ? 2 : 1;
	double		 t0 = 0, t1, end;
	ssize_t		 len;

	if ((len = readlink("/proc/self/exe", self, sizeof self - 1)) > 0) {
		self[len] = '\0';
		a[0].exe = self;
	}
	signal(SIGPIPE, SIG_IGN);
	printf("the agent's own cost, %d program ranks (sleep), 1 Hz, %d s "
	    "after %d s; GPUs: %s\n", BENCH_AGENT_RANKS, BENCH_AGENT_S,
	    BENCH_AGENT_WARMUP_S, getenv("HUNTER_NVML_LIBRARY") ?
	    getenv("HUNTER_NVML_LIBRARY") : "what NVML here gives");
	for (int i = 0; i < n; i++) {
		if (agent_start(&a[i]) != 0) {
			fprintf(stderr, "hunter bench agent: could not start the "
			    "agent of %s (%s): %s\n", a[i].what, a[i].exe,
			    strerror(errno));
			for (int k = 0; k <= i; k++)
				agent_stop(&a[k]);
			return 1;
		}
	}
	end = clock_mono() + BENCH_AGENT_WARMUP_S + BENCH_AGENT_S;
	while ((t1 = clock_mono()) < end) {
		struct pollfd pfd[2];
		bool	 counting = t1 >= end - BENCH_AGENT_S;

		if (counting && t0 == 0) {
			t0 = t1;
			for (int i = 0; i < n; i++)
				a[i].cpu0 = agent_cpu(a[i].pid);
		}
		for (int i = 0; i < n; i++)
			pfd[i] = (struct pollfd){ .fd = a[i].fd, .events = POLLIN };
		if (poll(pfd, (nfds_t)n, 200) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < n; i++) {
			if (pfd[i].revents & (POLLIN | POLLHUP))
				agent_read(&a[i], t0 > 0);
		}
	}
	printf("%-9s %10s %12s %10s   %s\n", "agent", "cpu %", "bytes/s",
	    "frames/s", "binary");
	for (int i = 0; i < n; i++) {
		a[i].cpu1 = agent_cpu(a[i].pid);
		printf("%-9s %10.3f %12.0f %10.2f   %s\n", a[i].what,
		    100 * (a[i].cpu1 - a[i].cpu0) / (t1 - t0),
		    a[i].bytes / (t1 - t0), a[i].frames / (t1 - t0), a[i].exe);
	}
	if (n == 2 && a[1].bytes > 0 && a[1].cpu1 > a[1].cpu0)
		printf("ratio     %9.2fx %11.2fx   (this / baseline; targets: "
		    "<= 0.5%% of a core, <= 2 KB/s a node)\n", (a[0].cpu1 -
		    a[0].cpu0) / (a[1].cpu1 - a[1].cpu0), (double)a[0].bytes /
		    (double)a[1].bytes);
	else
		printf("(targets: <= 0.5%% of a core, <= 2 KB/s a node; "
		    "HUNTER_BENCH_BASELINE=PATH to an older hunter compares)\n");
	for (int i = 0; i < n; i++)
		agent_stop(&a[i]);
	return 0;
}

const struct bench_entry bench_agent_entry = {
	.name = "agent",
	.summary = "a node's agent at 1 Hz with 2 ranks: its CPU and bytes a "
	    "second to the backend, beside $HUNTER_BENCH_BASELINE's",
	.run = bench_agent,
};
