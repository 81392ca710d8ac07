/*
 * run.c: run_capture(), a command's stdout into a buffer and the last
 * line of its stderr into the caller's error, within a time limit.  Both
 * pipes are drained together, so a command that writes much to either
 * never stalls on the other.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/errf.h"
#include "lib/xmalloc.h"
#include "lib/run.h"

struct run_buf {
	char	*s;
	size_t	 len, cap;
};

static void
run_keep(struct run_buf *b, const char *p, size_t n, size_t max)
{
	if (b->len >= max)
		return;
	if (n > max - b->len)
		n = max - b->len;
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->s = xrealloc(b->s, b->cap);
	}
	memcpy(b->s + b->len, p, n);
	b->len += n;
	b->s[b->len] = '\0';
}

/* The last non-empty line of s, into err. */
static void
run_last_line(const char *s, char *err, size_t errlen)
{
	const char	*end = s + strlen(s), *start;

	while (end > s && (end[-1] == '\n' || end[-1] == '\r'))
		end--;
	for (start = end; start > s && start[-1] != '\n'; start--)
		;
	errf(err, errlen, "%.*s", (int)(end - start), start);
}

static pid_t
run_spawn(const char *const argv[], int out[2], int errp[2])
{
	pid_t	 pid;
	int	 null;

	if (pipe2(out, O_CLOEXEC) != 0)
		return -1;
	if (pipe2(errp, O_CLOEXEC) != 0) {
		close(out[0]);
		close(out[1]);
		return -1;
	}
	if ((pid = fork()) == 0) {
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if ((null = open("/dev/null", O_RDONLY)) >= 0)
			dup2(null, 0);
		dup2(out[1], 1);
		dup2(errp[1], 2);
		execvp(argv[0], (char *const *)argv);
		fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(out[1]);
	close(errp[1]);
	if (pid < 0) {
		close(out[0]);
		close(errp[0]);
	}
	return pid;
}

int
run_capture(const char *const argv[], char **out, int timeout_ms, char *err,
    size_t errlen)
{
	struct run_buf	 o = { 0 }, e = { 0 };
	struct pollfd	 pfd[2];
	double		 deadline = clock_mono() + timeout_ms / 1000.0;
	int		 po[2], pe[2], status = 0, open_fds = 2;
	bool		 late = false;
	char		 buf[8192];
	pid_t		 pid;

	*out = NULL;
	if ((pid = run_spawn(argv, po, pe)) < 0) {
		errf(err, errlen, "cannot run %s: %s", argv[0], strerror(errno));
		return -1;
	}
	pfd[0] = (struct pollfd){ .fd = po[0], .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = pe[0], .events = POLLIN };
	while (open_fds > 0) {
		int left = (int)((deadline - clock_mono()) * 1000);

		if (left <= 0) {
			late = true;
			break;
		}
		if (poll(pfd, 2, left) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 2; i++) {
			ssize_t n;

			if (pfd[i].fd < 0 || pfd[i].revents == 0)
				continue;
			if ((n = read(pfd[i].fd, buf, sizeof buf)) > 0)
				run_keep(i == 0 ? &o : &e, buf, (size_t)n, i == 0 ?
				    RUN_OUTPUT_MAX : 64 * 1024);
			else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
				close(pfd[i].fd);
				pfd[i].fd = -1;
				open_fds--;
			}
		}
	}
	if (late)
		kill(pid, SIGKILL);
	for (int i = 0; i < 2; i++) {
		if (pfd[i].fd >= 0)
			close(pfd[i].fd);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	run_last_line(e.s != NULL ? e.s : "", err, errlen);
	free(e.s);
	if (late || !WIFEXITED(status)) {
		if (late)
			errf(err, errlen, "%s did not answer within %d s", argv[0],
			    timeout_ms / 1000);
		else
			errf(err, errlen, "%s was killed by signal %d", argv[0],
			    WTERMSIG(status));
		free(o.s);
		return -1;
	}
	*out = o.s != NULL ? o.s : xstrdup("");
	return WEXITSTATUS(status);
}
