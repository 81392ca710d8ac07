/*
 * launcher-local.c: nodes on this machine ("host: local").  The agent's
 * socket is DIR/agent.sock; when nothing answers there, start
 * `hunter agent` (it puts itself in the background) and wait for it.
 * A DIR that someone else owns or may write to is refused before
 * anything is started or connected (a socket planted there would be
 * taken for the agent), and so is an agent.sock served by another user.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/net.h"
#include "lib/statedir.h"
#include "backend/fleet/fleet.h"

/* How long a starting agent may take to listen. */
#define LOCAL_START_TIMEOUT_MS 5000

static bool
local_match(const struct node_spec *n)
{
	return strcmp(n->host, "local") == 0;
}

static int
local_start(struct fleet_node *fn, const char *exe, char *err, size_t errlen)
{
	char	 idle[16];
	pid_t	 pid;
	int	 status;

	snprintf(idle, sizeof idle, "%d", fleet_agent_idle_exit);
	if ((pid = fork()) < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		sigset_t none;

		/* The connect runs on a thread that blocks every signal
		 * (fleet.c), and exec keeps the mask: the agent must not. */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execl(exe, exe, "agent", "--node", fn->spec->name, "--dir",
		    fn->dir, "--idle-exit", idle, (char *)NULL);
		_exit(127);
	}
	/* The agent forks into the background; this child exits at once. */
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		snprintf(err, errlen, "hunter agent for %s failed to start (see "
		    "%s/agent.log)", fn->spec->name, fn->dir);
		return -1;
	}
	return 0;
}

static int
local_connect(struct fleet_node *fn, const char *exe, char *err, size_t errlen)
{
	struct timespec	 ts = { 0, 10 * 1000000L };
	char		 path[4200];
	int		 fd;

	snprintf(path, sizeof path, "%s/agent.sock", fn->dir);
	if (statedir_check(fn->dir, err, errlen) != 0 && errno != ENOENT)
		return -1;
	if ((fd = net_connect_unix(path, err, errlen)) >= 0 || errno == EPERM)
		return fd;
	if (local_start(fn, exe, err, errlen) != 0)
		return -1;
	for (int waited = 0; waited < LOCAL_START_TIMEOUT_MS; waited += 10) {
		if ((fd = net_connect_unix(path, err, errlen)) >= 0 ||
		    errno == EPERM)
			return fd;
		nanosleep(&ts, NULL);
	}
	return -1;
}

const struct launcher launcher_local = {
	.name = "local",
	.match = local_match,
	.connect = local_connect,
};
