/*
 * launcher-srun.c: the nodes of a Slurm allocation (node_spec.slurm_job),
 * reached through srun, as Slurm sites expect of the tools run inside an
 * allocation (and where SSH to the nodes is closed).  Each node gets one
 * step:
 *
 *	srun --jobid=J --overlap --nodes=1 --ntasks=1 -u -w NODE
 *	    --job-name=hunter-agent EXE agent --stdio --node NODE --dir DIR
 *
 * whose stdin and stdout are the link, as an exec channel is the SSH
 * launcher's: -u, because without it slurmstepd holds a task's output
 * back until a newline, which holds binary frames back; --overlap, so
 * the step shares the allocation's CPUs, memory and GPUs with the others.
 * EXE is this binary: Slurm clusters share their file systems.
 *
 * srun runs in its own process group (a Ctrl-C at the terminal is the
 * backend's to answer), with its stderr in DIR/srun.log.  The backend's
 * hello goes out here, and the connect waits until the agent's answer is
 * on its way, so that a node srun cannot reach fails the connect with
 * srun's own words.  `hunter agent --stdio` keeps the agent inside the
 * step (backend/agent/stdio.c), so the launcher is bound: a step that
 * ends is a node lost, with its ranks.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/statedir.h"
#include "lib/xmalloc.h"
#include "backend/fleet/fleet.h"

/* A step starts in well under a second; a node whose slurmd does not
 * answer fails after Slurm's MessageTimeout (10 s by default). */
#define SRUN_START_TIMEOUT_S	60
/* How long a closed link's srun gets to exit before it is asked why. */
#define SRUN_EXIT_WAIT_MS	2000
/* How long fleet_free waits for the steps of closed links to end: the
 * agents stop their workers first (5 s at most, agent.c). */
#define SRUN_QUIESCE_MS		8000

/* The sruns started, until they are reaped. */
struct srun_child {
	pid_t	 pid;
	char	 node[SPEC_NAME_MAX];
	char	 log[4200];
	int	 status;	/* once reaped */
	bool	 reaped;
};

static pthread_mutex_t	 srun_mu = PTHREAD_MUTEX_INITIALIZER;
static struct srun_child *srun_children;
static int		 srun_nchildren;

static bool
srun_match(const struct node_spec *n)
{
	return n->slurm_job[0] != '\0';
}

/* Reap c if it has exited, waiting up to wait_ms for it to. */
static void
srun_reap(struct srun_child *c, int wait_ms)
{
	struct timespec	 ts = { 0, 20 * 1000000L };

	for (int waited = 0; !c->reaped; waited += 20) {
		pid_t r = waitpid(c->pid, &c->status, WNOHANG);

		if (r == c->pid || (r < 0 && errno == ECHILD)) {
			c->reaped = true;
			break;
		}
		if (waited >= wait_ms)
			break;
		nanosleep(&ts, NULL);
	}
}

static void
srun_remember(pid_t pid, const char *node, const char *log)
{
	struct srun_child *c;

	pthread_mutex_lock(&srun_mu);
	/* The node's older link is over: its srun has exited, or will. */
	for (int i = srun_nchildren - 1; i >= 0; i--) {
		if (strcmp(srun_children[i].node, node) != 0)
			continue;
		srun_reap(&srun_children[i], 0);
		if (srun_children[i].reaped)
			srun_children[i] = srun_children[--srun_nchildren];
	}
	srun_children = xreallocarray(srun_children, (size_t)srun_nchildren + 1,
	    sizeof *srun_children);
	c = &srun_children[srun_nchildren++];
	memset(c, 0, sizeof *c);
	c->pid = pid;
	snprintf(c->node, sizeof c->node, "%s", node);
	snprintf(c->log, sizeof c->log, "%s", log);
	pthread_mutex_unlock(&srun_mu);
}

/* What srun said about it, into buf: the first line of its log that
 * reports an error (srun's first one names the cause, the ones after
 * it the consequences), else its last line. */
static void
srun_last_words(const char *log, char *buf, size_t len)
{
	char	 tail[4096], *line, *pick = NULL, *save;
	ssize_t	 n = 0;
	off_t	 size;
	int	 fd;

	buf[0] = '\0';
	if ((fd = open(log, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	size = lseek(fd, 0, SEEK_END);
	if (size > 0 && lseek(fd, size > (off_t)sizeof tail - 1 ?
	    size - (off_t)sizeof tail + 1 : 0, SEEK_SET) >= 0)
		n = read(fd, tail, sizeof tail - 1);
	close(fd);
	if (n <= 0)
		return;
	tail[n] = '\0';
	/* It is shown on the console: no control characters. */
	for (char *p = tail; *p != '\0'; p++) {
		if ((unsigned char)*p < 0x20 && *p != '\n')
			*p = ' ';
	}
	for (line = strtok_r(tail, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (pick == NULL || strstr(pick, "error:") == NULL)
			pick = line;
	}
	if (pick != NULL)
		snprintf(buf, len, "%s", pick);
}

/* "srun exited with status 1: srun: error: ..." for a reaped child. */
static void
srun_describe(const struct srun_child *c, char *buf, size_t len)
{
	char	 words[1024], how[64];

	srun_last_words(c->log, words, sizeof words);
	if (!c->reaped)
		snprintf(how, sizeof how, "srun is still running");
	else if (WIFSIGNALED(c->status))
		snprintf(how, sizeof how, "srun was killed by signal %d",
		    WTERMSIG(c->status));
	else
		snprintf(how, sizeof how, "srun exited with status %d",
		    WEXITSTATUS(c->status));
	snprintf(buf, len, "%s%s%s", how, words[0] ? ": " : "", words);
}

/* The command line of the node's step. */
static void
srun_argv(const struct fleet_node *fn, const char *exe, char args[][4200],
    const char *argv[], int max)
{
	const struct node_spec *n = fn->spec;
	int	 k = 0, a = 0;

#define ARG(...) do { if (k < max - 1) { snprintf(args[a], sizeof args[0], \
	__VA_ARGS__); argv[k++] = args[a++]; } } while (0)
	ARG("srun");
	ARG("--jobid=%s", n->slurm_job);
	ARG("--overlap");
	ARG("--nodes=1");
	ARG("--ntasks=1");
	ARG("-u");
	ARG("-w");
	ARG("%s", n->name);
	ARG("--job-name=hunter-agent");
	/* No --exact, --cpus-per-task or --gres: a step without them gets
	 * every CPU and GPU the job holds on its node, for the ranks there. */
	ARG("%s", exe);
	ARG("agent");
	ARG("--stdio");
	ARG("--node");
	ARG("%s", n->name);
	ARG("--dir");
	ARG("%s", fn->dir);
	ARG("--idle-exit");
	ARG("%d", fleet_agent_idle_exit);
#undef ARG
	argv[k] = NULL;
}

static pid_t
srun_spawn(const struct fleet_node *fn, const char *exe, int link, int log)
{
	char		 args[24][4200];
	const char	*argv[25];
	pid_t		 pid;

	srun_argv(fn, exe, args, argv, 25);
	if ((pid = fork()) != 0)
		return pid;
	{
		sigset_t none;

		/* The connect runs on a thread that blocks every signal
		 * (fleet.c), and exec keeps the mask. */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
	}
	setpgid(0, 0);
	dup2(link, 0);
	dup2(link, 1);
	dup2(log, 2);
	execvp(argv[0], (char *const *)argv);
	fprintf(stderr, "cannot run srun: %s\n", strerror(errno));
	_exit(127);
}

/* Wait for the agent's answer (the first byte of it, left in the socket
 * for the fleet's reader), srun's end, or the time limit. */
static int
srun_wait_agent(int fd, pid_t pid, const char *node, const char *log,
    char *err, size_t errlen)
{
	double	 deadline = clock_mono() + SRUN_START_TIMEOUT_S;
	struct srun_child c = { .pid = pid };
	char	 byte, why[1200];

	snprintf(c.log, sizeof c.log, "%s", log);
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int left = (int)((deadline - clock_mono()) * 1000);

		if (left <= 0) {
			kill(pid, SIGKILL);
			srun_reap(&c, SRUN_EXIT_WAIT_MS);
			srun_last_words(log, why, sizeof why);
			snprintf(err, errlen, "srun -w %s started no agent in %d "
			    "s%s%s", node, SRUN_START_TIMEOUT_S, why[0] ?
			    ": " : "", why);
			return -1;
		}
		if (poll(&pfd, 1, left > 1000 ? 1000 : left) < 0 &&
		    errno != EINTR)
			break;
		if (pfd.revents == 0)
			continue;
		if (recv(fd, &byte, 1, MSG_PEEK) == 1)
			return 0;
		break;
	}
	srun_reap(&c, SRUN_EXIT_WAIT_MS);
	srun_describe(&c, why, sizeof why);
	snprintf(err, errlen, "srun -w %s: %s", node, why);
	return -1;
}

static int
srun_connect(struct fleet_node *fn, const char *exe, char *err, size_t errlen)
{
	const char	*node = fn->spec->name;
	char		 log[4200];
	int		 sv[2], logfd;
	pid_t		 pid;

	if (statedir_make(fn->dir, err, errlen) != 0)
		return -1;
	snprintf(log, sizeof log, "%s/srun.log", fn->dir);
	if ((logfd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
	    O_NOFOLLOW, 0600)) < 0) {
		snprintf(err, errlen, "%s: %s", log, strerror(errno));
		return -1;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		close(logfd);
		return -1;
	}
	pid = srun_spawn(fn, exe, sv[1], logfd);
	close(sv[1]);
	close(logfd);
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(sv[0]);
		return -1;
	}
	/* srun reads the hello when its step runs; a write that fails means
	 * srun is gone already, which the wait then says. */
	(void)proto_send_new(sv[0], proto_hello("backend", NULL));
	if (srun_wait_agent(sv[0], pid, node, log, err, errlen) != 0) {
		close(sv[0]);
		return -1;
	}
	fn->stage = FLEET_REACHED;
	fn->hello_sent = true;
	srun_remember(pid, node, log);
	return sv[0];
}

static void
srun_why(const struct fleet_node *fn, char *buf, size_t len)
{
	pthread_mutex_lock(&srun_mu);
	for (int i = srun_nchildren - 1; i >= 0; i--) {
		struct srun_child *c = &srun_children[i];

		if (strcmp(c->node, fn->spec->name) != 0)
			continue;
		srun_reap(c, SRUN_EXIT_WAIT_MS);
		srun_describe(c, buf, len);
		if (c->reaped)
			srun_children[i] = srun_children[--srun_nchildren];
		break;
	}
	pthread_mutex_unlock(&srun_mu);
}

/* The links are closed: give each step the time to end, and reap it. */
static void
srun_quiesce(void)
{
	double	 deadline = clock_mono() + SRUN_QUIESCE_MS / 1000.0;

	pthread_mutex_lock(&srun_mu);
	for (int i = 0; i < srun_nchildren; i++) {
		int left = (int)((deadline - clock_mono()) * 1000);

		srun_reap(&srun_children[i], left > 0 ? left : 0);
	}
	free(srun_children);
	srun_children = NULL;
	srun_nchildren = 0;
	pthread_mutex_unlock(&srun_mu);
}

const struct launcher launcher_srun = {
	.name = "srun",
	.match = srun_match,
	.connect = srun_connect,
	.quiesce = srun_quiesce,
	.why = srun_why,
	.bound = true,
};
