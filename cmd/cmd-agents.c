/*
 * cmd-agents.c: `hunter agents [--stop]`: the agents of this state
 * directory's nodes (STATE/nodes/NAME/agent.pid: the embedded cluster's
 * and every other local node's), each with its pid and whether it runs,
 * and with --stop each sent SIGTERM and waited for.  An agent outlives
 * the run that started it by its idle time (900 s) so that the next run
 * or console finds it; this ends them now.  A backend that holds the
 * state directory keeps its agents: --stop refuses while one runs.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/lock.h"
#include "lib/statedir.h"
#include "lib/xmalloc.h"
#include "cmd/cmd.h"

/* How long an agent may take to stop: it stops its workers first, which
 * checkpoint (the agent gives them 5 s). */
#define AGENTS_STOP_S	15

struct agent_entry {
	char	 node[NAME_MAX + 1];
	pid_t	 pid;		/* 0: no pid file, or an unreadable one */
	bool	 alive;		/* the pid is a hunter agent of this dir */
};

/* Whether pid is alive and runs `hunter agent ... --dir dir`: a pid file
 * left by an agent that died may name another process since. */
static bool
agents_is_ours(pid_t pid, const char *dir)
{
	char	 path[64], args[8192];
	bool	 agent = false, here = false;
	size_t	 n;
	FILE	*f;

	snprintf(path, sizeof path, "/proc/%ld/cmdline", (long)pid);
	if ((f = fopen(path, "re")) == NULL)
		return false;
	n = fread(args, 1, sizeof args - 1, f);
	fclose(f);
	args[n] = '\0';
	for (size_t o = 0; o < n; o += strlen(args + o) + 1) {
		agent |= strcmp(args + o, "agent") == 0;
		here |= strcmp(args + o, dir) == 0;
	}
	return agent && here;
}

/* The nodes of STATE/nodes with an agent.pid, sorted by name. */
static int
agents_list(const char *state, struct agent_entry **out)
{
	char		 dir[PATH_MAX + 16], path[PATH_MAX * 2 + 32];
	char		 node[PATH_MAX * 2];
	struct dirent	*de;
	DIR		*d;
	int		 n = 0;

	*out = NULL;
	snprintf(dir, sizeof dir, "%s/nodes", state);
	if ((d = opendir(dir)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		struct agent_entry *e;
		long	 pid = 0;
		FILE	*f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s/agent.pid", dir, de->d_name);
		if ((f = fopen(path, "re")) == NULL)
			continue;
		if (fscanf(f, "%ld", &pid) != 1 || pid <= 1)
			pid = 0;
		fclose(f);
		*out = xreallocarray(*out, (size_t)n + 1, sizeof **out);
		e = &(*out)[n++];
		snprintf(e->node, sizeof e->node, "%s", de->d_name);
		e->pid = (pid_t)pid;
		snprintf(node, sizeof node, "%s/%s", dir, de->d_name);
		e->alive = pid > 0 && agents_is_ours(e->pid, node);
	}
	closedir(d);
	for (int i = 1; i < n; i++) {
		for (int k = i; k > 0 && strcmp((*out)[k - 1].node,
		    (*out)[k].node) > 0; k--) {
			struct agent_entry t = (*out)[k];

			(*out)[k] = (*out)[k - 1];
			(*out)[k - 1] = t;
		}
	}
	return n;
}

/* SIGTERM to each running agent, then wait for all to be gone. */
static int
agents_stop(struct agent_entry *e, int n)
{
	double	 until = clock_mono() + AGENTS_STOP_S;
	int	 left = 0, rc = 0;

	for (int i = 0; i < n; i++) {
		if (e[i].alive && kill(e[i].pid, SIGTERM) != 0) {
			fprintf(stderr, "hunter agents: %s (pid %ld): %s\n",
			    e[i].node, (long)e[i].pid, strerror(errno));
			e[i].alive = false;
			rc = 1;
		}
		left += e[i].alive;
	}
	while (left > 0 && clock_mono() < until) {
		nanosleep(&(struct timespec){ 0, 50 * 1000 * 1000 }, NULL);
		left = 0;
		for (int i = 0; i < n; i++) {
			if (e[i].alive && kill(e[i].pid, 0) != 0 &&
			    errno == ESRCH) {
				printf("stopped %s (pid %ld)\n", e[i].node,
				    (long)e[i].pid);
				e[i].alive = false;
			}
			left += e[i].alive;
		}
	}
	for (int i = 0; i < n; i++) {
		if (e[i].alive) {
			fprintf(stderr, "hunter agents: %s (pid %ld) still runs "
			    "%d s after SIGTERM\n", e[i].node, (long)e[i].pid,
			    AGENTS_STOP_S);
			rc = 1;
		}
	}
	return rc;
}

static const struct cmd_option agents_options[] = {
	{ "stop", 0, NULL, "stop them: SIGTERM to each, which stops its "
	    "workers first, and wait until all are gone" },
	{ NULL }
};

static int
cmd_agents(const struct cmd_args *a)
{
	struct agent_entry *e;
	char		 state[PATH_MAX];
	pid_t		 holder = 0;
	int		 n, fd, running = 0, rc = 0;

	if (statedir_path(state, sizeof state) != 0) {
		fprintf(stderr, "hunter agents: no state directory: set "
		    "HUNTER_STATE_DIR\n");
		return 1;
	}
	n = agents_list(state, &e);
	for (int i = 0; i < n; i++)
		running += e[i].alive;
	if (!cmd_has(a, "stop")) {
		printf("agents of %s: %d running\n", state, running);
		if (n > 0)
			printf("%-16s %8s  %s\n", "NODE", "PID", "STATE");
		for (int i = 0; i < n; i++)
			printf("%-16s %8ld  %s\n", e[i].node, (long)e[i].pid,
			    e[i].alive ? "running" : "gone (a stale pid file)");
		free(e);
		return 0;
	}
	/* A backend's jobs need their agents: not under a running one. */
	if (running > 0 && (fd = lock_take(state, &holder)) < 0) {
		if (holder > 0)
			fprintf(stderr, "hunter agents: a backend (pid %ld) runs "
			    "%s and its jobs need these agents: stop its jobs "
			    "(hunter ctl JOB stop) or detach it first\n",
			    (long)holder, state);
		else
			fprintf(stderr, "hunter agents: %s/backend.lock: %s\n",
			    state, strerror(errno));
		free(e);
		return 1;
	} else if (running > 0) {
		rc = agents_stop(e, n);
		close(fd);
	}
	if (running == 0)
		printf("hunter agents: no agent of %s runs\n", state);
	else
		printf("hunter agents: %s %d agent%s of %s\n", rc != 0 ?
		    "could not stop all" : "stopped", running, running == 1 ?
		    "" : "s", state);
	free(e);
	return rc;
}

const struct cmd_entry cmd_agents_entry = {
	.name = "agents",
	.usage = "",
	.summary = "list the agents of this state directory's nodes; with "
	    "--stop, stop them",
	.options = agents_options,
	.args_min = 0,
	.args_max = 0,
	.exec = cmd_agents,
};
