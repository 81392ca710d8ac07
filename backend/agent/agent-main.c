/*
 * agent-main.c: `hunter agent`, the entry of the per-node daemon: its
 * options, the fork into the background, the pid file, and the order in
 * which the daemon (agent.c) is set up and taken down.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/net.h"
#include "lib/nvml.h"
#include "lib/statedir.h"
#include "backend/agent/agent.h"

/* Fork into the background, detached from the terminal and from the
 * caller's session, with stdio on DIR/agent.log. */
static int
agent_daemonize(const char *dir)
{
	char	 log[PATH_MAX];
	int	 fd;
	pid_t	 pid;

	if ((pid = fork()) < 0)
		return -1;
	if (pid > 0)
		_exit(0);
	setsid();
	if ((pid = fork()) < 0)
		return -1;
	if (pid > 0)
		_exit(0);
	snprintf(log, sizeof log, "%s/agent.log", dir);
	if ((fd = open("/dev/null", O_RDONLY)) >= 0) {
		dup2(fd, 0);
		close(fd);
	}
	if ((fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW,
	    0600)) >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
		close(fd);
	}
	return 0;
}

static const struct cmd_option agent_options[] = {
	{ "node", 'n', "NAME", "the node this agent serves (required)" },
	{ "dir", 'd', "DIR", "its directory: agent.sock, agent.pid, agent.log, "
	    "the ranks' logs (required)" },
	{ "foreground", 'f', NULL, "stay in the foreground" },
	{ "idle-exit", 'i', "SECONDS", "exit after this long with no workers "
	    "and no backend (default 900)" },
	{ "stdio", 's', NULL, "attach stdin and stdout to the node's agent, "
	    "starting it if needed (the SSH and srun launchers run this)" },
	{ NULL }
};

static int
agent_run(const struct cmd_args *args)
{
	struct agent	 a = { .lfd = -1, .idle_exit_s = 900 };
	char		 path[PATH_MAX], err[512];
	int		 foreground = cmd_has(args, "foreground");
	int		 stdio = cmd_has(args, "stdio");
	long long	 idle = a.idle_exit_s;
	ssize_t		 n;
	FILE		*f;

	if (cmd_get_long(args, "idle-exit", 0, INT_MAX, &idle) != 0)
		return 2;
	a.idle_exit_s = (int)idle;
	if (!cmd_has(args, "node") || !cmd_has(args, "dir")) {
		fprintf(stderr, "hunter agent: --node and --dir are required\n");
		return 2;
	}
	snprintf(a.node, sizeof a.node, "%s", cmd_get(args, "node"));
	snprintf(a.dir, sizeof a.dir, "%s", cmd_get(args, "dir"));
	if (stdio)
		return agent_stdio_main(a.node, a.dir, a.idle_exit_s);
	if (statedir_make(a.dir, err, sizeof err) != 0) {
		fprintf(stderr, "hunter agent: %s\n", err);
		return 1;
	}
	snprintf(path, sizeof path, "%s/agent.sock", a.dir);
	if ((a.lfd = net_listen_unix(path, err, sizeof err)) < 0) {
		fprintf(stderr, "hunter agent: %s\n", err);
		return 1;
	}
	if ((n = readlink("/proc/self/exe", a.exe, sizeof a.exe - 1)) <= 0) {
		fprintf(stderr, "hunter agent: cannot find my own binary\n");
		return 1;
	}
	a.exe[n] = '\0';
	if (!foreground && agent_daemonize(a.dir) != 0) {
		fprintf(stderr, "hunter agent: fork: %s\n", strerror(errno));
		return 1;
	}
	snprintf(path, sizeof path, "%s/agent.pid", a.dir);
	{
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
		    O_NOFOLLOW, 0600);

		if (fd >= 0 && (f = fdopen(fd, "w")) != NULL) {
			fprintf(f, "%ld\n", (long)getpid());
			fclose(f);
		} else if (fd >= 0)
			close(fd);
	}
	if (agent_signals_init() != 0)
		return 1;
	/* In a Slurm step (the srun launcher's, stdio.c) Slurm's SIGTERM and
	 * SIGUSR1 (preemption, a time limit, scancel --signal) reach every
	 * process of the job.  The backend answers them by checkpointing its
	 * jobs through this agent, which must outlive them; SIGINT, or the
	 * end of the step, stops it.  Workers inherit SIGUSR1 ignored. */
	if (getenv("SLURM_STEP_ID") != NULL) {
		signal(SIGTERM, SIG_IGN);
		signal(SIGUSR1, SIG_IGN);
	}

	a.sampler = sampler_create("");
	/* The checkpoint directory is each launch's (supervisor.c). */
	sampler_set_dirs(a.sampler, a.dir, NULL);
	sample_ring_init(&a.ring, AGENT_RING_SECONDS);
	a.history = json_array();
	a.pending = json_array();
	a.loop = evloop_new();
	agent_log(&a, "listening on %s/agent.sock (pid %ld)", a.dir, (long)getpid());
	agent_loop(&a);
	agent_stop_workers(&a);

	snprintf(path, sizeof path, "%s/agent.sock", a.dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/agent.pid", a.dir);
	unlink(path);
	while (a.npeers > 0)
		agent_close_peer(&a, a.peers[0], "agent exiting");
	free(a.peers);
	for (int i = 0; i < a.nworkers; i++) {
		json_decref(a.workers[i].last_metrics);
		proto_reader_free(&a.workers[i].rd);
		proto_queue_free(&a.workers[i].q);
	}
	json_decref(a.history);
	json_decref(a.pending);
	sample_ring_free(&a.ring);
	sampler_free(a.sampler);
	nvml_close();
	close(a.lfd);
	evloop_free(a.loop);
	agent_log(&a, "exited");
	return 0;
}

const struct cmd_entry cmd_agent_entry = {
	.name = "agent",
	.usage = "--node NAME --dir DIR",
	.summary = "(started by hunter) the per-node daemon: metrics, workers, "
	    "relay",
	.options = agent_options,
	.args_min = 0,
	.args_max = 0,
	.exec = agent_run,
};

