/*
 * bench-console.c: `hunter bench console`.  It runs this binary's console
 * on a simulated cluster of 1024 nodes reporting at 1 Hz (--simulate) in
 * a 200x50 pseudo-terminal with TERM=xterm-256color, reads everything
 * the console writes, and switches screens on a schedule (the last is a
 * node's detail view).  For each
 * phase it prints the console's CPU time per wall second (utime + stime
 * of the whole process, backend thread included, from /proc) and the
 * bytes it wrote to the terminal per second.  Targets: 2% of a core and
 * 20 KB/s.  Startup (the first full paint) is measured apart.
 */
#include <errno.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/clock.h"
#include "bench/bench.h"

#define BENCH_NODES	"1024"

struct bench_phase {
	const char	*name;
	const char	*keys;		/* typed when the phase starts */
	double		 seconds;
};

static const struct bench_phase bench_phases[] = {
	{ "startup", "", 3 },
	{ "overview", "", 8 },
	{ "nodes", "2", 4 },
	{ "job", "3", 4 },
	{ "logs", "4", 4 },
	/* The nodes screen and Enter: the first node's detail view (a
	 * simulated node with 16 CPUs, two GPUs and its ranks). */
	{ "detail", "2\r", 4 },
};
#define N_PHASES (sizeof bench_phases / sizeof bench_phases[0])

/* utime + stime of pid in seconds, or -1. */
static double
bench_cpu(pid_t pid)
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
	/* fields after the command name, which may hold spaces */
	if ((p = strrchr(buf, ')')) == NULL ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
	    &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* Read what the console writes until t_end; returns the bytes. */
static long
bench_drain(int fd, double t_end)
{
	char	 buf[65536];
	long	 total = 0;
	ssize_t	 n;
	double	 now;

	while ((now = clock_mono()) < t_end) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		if (poll(&pfd, 1, (int)((t_end - now) * 1000) + 1) <= 0)
			continue;
		if ((n = read(fd, buf, sizeof buf)) > 0)
			total += n;
		else if (n == 0 || (errno != EINTR && errno != EAGAIN))
			break;
	}
	return total;
}

static int
bench_console(void)
{
	struct winsize	 ws = { .ws_row = 50, .ws_col = 200 };
	double		 cpu0, cpu1, t0, t1, run_cpu = 0, run_s = 0;
	long		 bytes, run_bytes = 0;
	int		 fd, status;
	pid_t		 pid;

	if ((pid = forkpty(&fd, NULL, NULL, &ws)) < 0) {
		perror("hunter bench console: forkpty");
		return 1;
	}
	if (pid == 0) {
		setenv("TERM", "xterm-256color", 1);
		setenv("LANG", "C.UTF-8", 1);
		unsetenv("LC_ALL");
		unsetenv("NO_COLOR");
		execl("/proc/self/exe", "hunter", "--simulate", BENCH_NODES,
		    (char *)NULL);
		_exit(127);
	}
	printf("console on %s simulated nodes at 1 Hz, 200x50 pty, "
	    "TERM=xterm-256color\n", BENCH_NODES);
	printf("%-9s %6s %12s %10s\n", "phase", "wall s", "cpu %", "KB/s");
	for (size_t i = 0; i < N_PHASES; i++) {
		const struct bench_phase *ph = &bench_phases[i];

		cpu0 = bench_cpu(pid);
		t0 = clock_mono();
		if (*ph->keys != '\0' && write(fd, ph->keys, strlen(ph->keys)) < 0)
			break;
		bytes = bench_drain(fd, t0 + ph->seconds);
		t1 = clock_mono();
		cpu1 = bench_cpu(pid);
		if (cpu0 < 0 || cpu1 < 0) {
			fprintf(stderr, "hunter bench console: the console "
			    "exited\n");
			break;
		}
		printf("%-9s %6.1f %12.2f %10.2f\n", ph->name, t1 - t0,
		    100 * (cpu1 - cpu0) / (t1 - t0), bytes / (t1 - t0) / 1000);
		if (i > 0) {
			run_cpu += cpu1 - cpu0;
			run_s += t1 - t0;
			run_bytes += bytes;
		}
	}
	if (run_s > 0)
		printf("%-9s %6.1f %12.2f %10.2f   (targets: <= 2%% of a core, "
		    "<= 20 KB/s)\n", "steady", run_s, 100 * run_cpu / run_s,
		    run_bytes / run_s / 1000);
	/* q, then y: the simulated job keeps "running" */
	if (write(fd, "qy", 2) < 0) {
		/* gone already */
	}
	for (int i = 0; i < 30 && waitpid(pid, &status, WNOHANG) == 0; i++)
		bench_drain(fd, clock_mono() + 0.1);
	if (waitpid(pid, &status, WNOHANG) == 0) {
		kill(pid, SIGTERM);
		waitpid(pid, &status, 0);
	}
	close(fd);
	return run_s > 0 ? 0 : 1;
}

const struct bench_entry bench_console_entry = {
	.name = "console",
	.summary = "the console on 1024 simulated nodes in a 200x50 pty: CPU and bytes a second",
	.run = bench_console,
};
