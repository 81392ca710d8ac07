/*
 * stdio.c: `hunter agent --stdio --node NAME --dir DIR`, what the SSH
 * launcher runs on a node.  It attaches to the node's agent daemon at
 * DIR/agent.sock, starting it first (fork + exec of this binary as
 * `hunter agent --node --dir --idle-exit`, which daemonizes) when nothing
 * answers, then copies bytes stdin -> socket and socket -> stdout until
 * either side closes, each direction buffered on its own, never blocking
 * the other.  Frames pass through untouched; the daemon never
 * learns that its backend is at the far end of an SSH channel, and it
 * keeps running (with its workers) when the channel drops.
 *
 * A leading "~/" in DIR is expanded here: the launcher quotes every
 * argument, so the login shell expands nothing.  Nothing but relayed
 * bytes may go to stdout; messages go to stderr, which the launcher
 * shows when the channel ends.
 *
 * Inside a Slurm step (SLURM_STEP_ID set: the srun launcher) the agent it
 * starts stays in the step, in the foreground, as Slurm wants of what
 * runs in an allocation: the step's end ends it, and its end (SIGINT,
 * also when this relay dies) ends the step.  Slurm's SIGTERM and SIGUSR1
 * go to every process of the job; the backend answers them by
 * checkpointing its jobs over this link, so the relay ignores them, and
 * the agent and its workers inherit SIGUSR1 ignored.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/evloop.h"
#include "lib/net.h"
#include "lib/statedir.h"
#include "backend/agent/agent.h"

/* How long a starting daemon may take to listen. */
#define STDIO_START_TIMEOUT_MS	5000

/* DIR with a leading "~" or "~/" replaced by the home directory. */
static int
stdio_expand(const char *dir, char *buf, size_t len)
{
	const char	*home = getenv("HOME");
	struct passwd	*pw;
	int		 n;

	if (dir[0] != '~' || (dir[1] != '/' && dir[1] != '\0'))
		n = snprintf(buf, len, "%s", dir);
	else {
		if ((home == NULL || home[0] == '\0') &&
		    (pw = getpwuid(getuid())) != NULL)
			home = pw->pw_dir;
		if (home == NULL || home[0] == '\0')
			return -1;
		n = snprintf(buf, len, "%s%s", home, dir + 1);
	}
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* Start the daemon; it forks into the background, so the child we wait
 * for exits at once.  Its failure is not final: another --stdio may have
 * started the daemon a moment before (then ours finds the socket taken). */
static void
stdio_start_daemon(const char *node, const char *dir, int idle_exit_s)
{
	char	 exe[PATH_MAX], idle[16];
	ssize_t	 n;
	pid_t	 pid;
	int	 status, fd;

	if ((n = readlink("/proc/self/exe", exe, sizeof exe - 1)) <= 0)
		return;
	exe[n] = '\0';
	snprintf(idle, sizeof idle, "%d", idle_exit_s);
	if ((pid = fork()) < 0)
		return;
	if (pid == 0) {
		/* Keep the relay's stdout clean: the daemon's words go to
		 * stderr until it opens its log. */
		if ((fd = open("/dev/null", O_RDONLY)) >= 0)
			dup2(fd, 0);
		dup2(2, 1);
		execl(exe, exe, "agent", "--node", node, "--dir", dir,
		    "--idle-exit", idle, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
}

/* Start the agent inside this Slurm step: a child in the foreground,
 * logging to DIR/agent.log, that gets SIGINT when this relay ends. */
static pid_t
stdio_start_in_step(const char *node, const char *dir, int idle_exit_s)
{
	char	 exe[PATH_MAX], idle[16], log[PATH_MAX + 16];
	ssize_t	 n;
	pid_t	 pid, parent = getpid();
	int	 fd, logfd;

	if ((n = readlink("/proc/self/exe", exe, sizeof exe - 1)) <= 0 ||
	    statedir_make(dir, log, sizeof log) != 0)
		return -1;
	exe[n] = '\0';
	snprintf(idle, sizeof idle, "%d", idle_exit_s);
	snprintf(log, sizeof log, "%s/agent.log", dir);
	if ((logfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC |
	    O_NOFOLLOW, 0600)) < 0)
		return -1;
	if ((pid = fork()) == 0) {
		prctl(PR_SET_PDEATHSIG, SIGINT);
		if (getppid() != parent)
			_exit(1);	/* the relay is gone already */
		if ((fd = open("/dev/null", O_RDONLY)) >= 0)
			dup2(fd, 0);
		dup2(logfd, 1);
		dup2(logfd, 2);
		execl(exe, exe, "agent", "--foreground", "--node", node, "--dir",
		    dir, "--idle-exit", idle, (char *)NULL);
		_exit(127);
	}
	close(logfd);
	return pid;
}

/* Stop the agent this relay started in its step, and wait for it: it
 * stops its workers first (5 s at most, agent.c). */
static void
stdio_stop_in_step(pid_t pid)
{
	struct timespec	 ts = { 0, 50 * 1000000L };

	kill(pid, SIGINT);
	for (int waited = 0; waited < 10000; waited += 50) {
		if (waitpid(pid, NULL, WNOHANG) != 0)
			return;
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static int
stdio_attach(const char *node, const char *dir, int idle_exit_s,
    pid_t *in_step)
{
	struct timespec	 ts = { 0, 10 * 1000000L };
	char		 path[PATH_MAX + 16], err[512];
	int		 fd;

	snprintf(path, sizeof path, "%s/agent.sock", dir);
	/* A directory someone else may write to could hold their socket. */
	if ((statedir_check(dir, err, sizeof err) != 0 && errno != ENOENT) ||
	    ((fd = net_connect_unix(path, err, sizeof err)) < 0 &&
	    errno == EPERM)) {
		fprintf(stderr, "hunter agent --stdio: %s\n", err);
		return -1;
	}
	if (fd >= 0)
		return fd;
	if (getenv("SLURM_STEP_ID") != NULL)
		*in_step = stdio_start_in_step(node, dir, idle_exit_s);
	else
		stdio_start_daemon(node, dir, idle_exit_s);
	for (int waited = 0; waited < STDIO_START_TIMEOUT_MS; waited += 10) {
		if ((fd = net_connect_unix(path, err, sizeof err)) >= 0)
			return fd;
		if (errno == EPERM)
			break;
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, "hunter agent --stdio: the agent of %s did not start "
	    "(%s; see %s/agent.log)\n", node, err, dir);
	return -1;
}

/* One direction of the relay: bytes read from one side that the other
 * has not taken yet.  Each direction waits only for itself, so a channel
 * that is slow to take the agent's frames never holds up the backend's
 * commands (the agent's queue absorbs the backlog and drops metrics). */
struct stdio_dir {
	int	 from, to;
	char	 buf[65536];
	size_t	 off, len;
	bool	 eof;		/* from has closed */
};

/* Read into d when it has room.  0 = go on, -1 = from closed or failed. */
static int
stdio_read(struct stdio_dir *d)
{
	ssize_t	 n;

	if (d->off == d->len)
		d->off = d->len = 0;
	if (d->len == sizeof d->buf)
		return 0;		/* no room until the other side takes */
	n = read(d->from, d->buf + d->len, sizeof d->buf - d->len);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : -1;
	if (n == 0)
		return -1;
	d->len += (size_t)n;
	return 0;
}

/* Write what d holds as far as to takes it.  0, or -1 when to failed.
 * Once all is out the buffer starts over, so a full one has room again
 * (it was left full, and its side was never read again). */
static int
stdio_write(struct stdio_dir *d)
{
	ssize_t	 w;

	while (d->off < d->len) {
		if ((w = write(d->to, d->buf + d->off, d->len - d->off)) < 0)
			return errno == EINTR || errno == EAGAIN ? 0 : -1;
		d->off += (size_t)w;
	}
	d->off = d->len = 0;
	return 0;
}

/* The loop reads a side while its direction has room, writes the other
 * while it holds bytes. */
static short
stdio_want_read(void *arg)
{
	struct stdio_dir *d = arg;

	return d->len < sizeof d->buf ? POLLIN : 0;
}

static short
stdio_want_write(void *arg)
{
	struct stdio_dir *d = arg;

	return d->off < d->len ? POLLOUT : 0;
}

/* What came is passed on at once; a hang-up still reads as EOF once the
 * data is taken (a full buffer: the rest once the other side took it). */
static void
stdio_on_read(int fd, short revents, void *arg)
{
	struct stdio_dir *d = arg;

	(void)fd;
	if (d->len == sizeof d->buf ? (revents & (POLLHUP | POLLERR)) != 0 :
	    stdio_read(d) != 0)
		d->eof = true;
	if (stdio_write(d) != 0)
		d->eof = true;
}

/* Its side can take more; an error there with nothing to take (the
 * reader of stdout is gone) ends the direction too. */
static void
stdio_on_write(int fd, short revents, void *arg)
{
	struct stdio_dir *d = arg;
	bool		 idle = d->off == d->len;

	(void)fd;
	if (stdio_write(d) != 0 || (idle && (revents & POLLERR)))
		d->eof = true;
}

/* fd into the loop as d's source (reading) or its destination. */
static void
stdio_watch(struct evloop *loop, int fd, bool reading, struct stdio_dir *d)
{
	struct evloop_fd *e = evloop_fd_add(loop, fd, 0, reading ?
	    stdio_on_read : stdio_on_write, d);

	evloop_fd_want(e, reading ? stdio_want_read : stdio_want_write, d);
}

int
agent_stdio_main(const char *node, const char *dir_arg, int idle_exit_s)
{
	static struct stdio_dir up, down;	/* to the agent, to the backend */
	struct evloop	*loop;
	char		 dir[PATH_MAX];
	int		 sock;
	pid_t		 in_step = -1;

	signal(SIGPIPE, SIG_IGN);
	if (stdio_expand(dir_arg, dir, sizeof dir) != 0) {
		fprintf(stderr, "hunter agent --stdio: cannot expand %s\n",
		    dir_arg);
		return 1;
	}
	if (getenv("SLURM_STEP_ID") != NULL) {
		signal(SIGTERM, SIG_IGN);
		signal(SIGUSR1, SIG_IGN);
	}
	if ((sock = stdio_attach(node, dir, idle_exit_s, &in_step)) < 0) {
		if (in_step > 0)
			stdio_stop_in_step(in_step);
		return 1;
	}
	up = (struct stdio_dir){ .from = 0, .to = sock };
	down = (struct stdio_dir){ .from = sock, .to = 1 };
	net_set_nonblock(0, 1);
	net_set_nonblock(1, 1);
	net_set_nonblock(sock, 1);
	/* The reads first: what the daemon said before it hung up is taken
	 * before the socket's hang-up can end the relay. */
	loop = evloop_new();
	stdio_watch(loop, 0, true, &up);
	stdio_watch(loop, sock, true, &down);
	stdio_watch(loop, sock, false, &up);
	stdio_watch(loop, 1, false, &down);
	/* Until either side closes: the console went away, or the daemon
	 * closed (it exits, or a newer backend took over). */
	while (!up.eof && !down.eof && evloop_run_once(loop, -1) >= 0)
		;
	evloop_free(loop);
	/* The daemon closed: its last frames (an error saying why) still go
	 * out, waiting for the channel now that nothing else is left. */
	if (down.eof) {
		net_set_nonblock(1, 0);
		net_set_nonblock(sock, 0);
		while (stdio_write(&down) == 0 && stdio_read(&down) == 0)
			;
		stdio_write(&down);
	}
	close(sock);
	if (in_step > 0)
		stdio_stop_in_step(in_step);
	return 0;
}
