/*
 * supervisor.c: the agent's workers.  Each is `hunter worker --fd 3`,
 * forked into its own process group with one end of a socketpair as fd
 * 3 and stdout/stderr on a pipe that ranklog.c copies to
 * DIR/JOB.rankR.log and to the backend; its first frame is the launch
 * command itself.  Exits are reaped and reported with their status or
 * signal, after the worker's last frames and lines; a shared-memory
 * segment a killed worker left is removed then.  A rank of a program
 * job runs the operator's program instead (program.c).  Either starts
 * with the environment rank-env.c makes: the agent's, and the threads
 * the rank's share of the cores allows.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/net.h"
#include "backend/proto/launch.h"
#include "backend/comm/comm.h"
#include "backend/agent/agent.h"

static struct agent_worker *
agent_worker_slot(struct agent *a)
{
	for (int i = 0; i < a->nworkers; i++) {
		struct agent_worker *w = &a->workers[i];

		if (w->exited && w->fd < 0 && w->out < 0) {
			json_decref(w->last_metrics);
			proto_reader_free(&w->rd);
			program_free(w);
			return w;
		}
	}
	if (a->nworkers == AGENT_MAX_WORKERS)
		return NULL;
	return &a->workers[a->nworkers++];
}

/* A slot agent_spawn took and did not use: closed and exited (so nothing
 * signals pid 0, its own group), and given back when it was the last. */
static void
agent_worker_release(struct agent *a, struct agent_worker *w)
{
	if (w->prog != NULL)
		program_free(w);
	memset(w, 0, sizeof *w);
	w->fd = w->out = w->logfd = -1;
	w->exited = true;
	if (w == &a->workers[a->nworkers - 1])
		a->nworkers--;
}

static void
agent_on_worker(int fd, short revents, void *arg)
{
	struct agent_worker *w = arg;

	(void)fd;
	if ((revents & POLLOUT) && proto_queue_flush(&w->q) != 0)
		agent_log(w->agent, "cannot reach %s rank %d: %s", w->job,
		    w->rank, strerror(w->q.err));
	if (revents & ~POLLOUT)
		agent_worker_input(w->agent, w);
}

static void
agent_on_output(int fd, short revents, void *arg)
{
	struct agent_worker *w = arg;

	(void)fd;
	(void)revents;
	ranklog_input(w->agent, w);
}

int
agent_spawn(struct agent *a, const json_t *launch, char *err, size_t errlen)
{
	struct launch_order l;
	struct agent_worker *w;
	struct program_rank *prog = NULL;
	char		 log[PATH_MAX];
	char		**envp = NULL;
	int		 sv[2], po[2];
	pid_t		 pid;

	/* proto_kind checked the order against its list (launch.h). */
	if (launch_unpack(launch, &l, err, errlen) != 0) {
		launch_free(&l);
		return -1;
	}
	launch_free(&l);	/* what is kept here is not allocated */
	if (l.checkpoint_dir[0] != '\0')	/* its file system is sampled */
		sampler_set_dirs(a->sampler, a->dir, l.checkpoint_dir);
	if ((w = agent_worker_slot(a)) == NULL) {
		snprintf(err, errlen, "node %s already runs %d workers", a->node,
		    AGENT_MAX_WORKERS);
		return -1;
	}
	memset(w, 0, sizeof *w);
	w->fd = w->out = w->logfd = -1;
	w->exited = true;
	/* A program job's rank runs the operator's program (program.c). */
	if (json_object_get(launch, "program") != NULL &&
	    (prog = program_prepare(a, launch, err, errlen)) == NULL) {
		agent_worker_release(a, w);
		return -1;
	}
	if (prog == NULL)
		envp = agent_rank_envp(a, launch, NULL, false);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		goto fail;
	}
	if (pipe2(po, O_CLOEXEC) != 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		goto fail;
	}
	snprintf(log, sizeof log, "%s/%s.rank%d.log", a->dir, l.job,
	    l.rank);
	if ((pid = fork()) < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		close(po[0]);
		close(po[1]);
		goto fail;
	}
	if (pid == 0) {
		setpgid(0, 0);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		dup2(po[1], 1);		/* dup2 clears FD_CLOEXEC on 1, 2, 3 */
		dup2(po[1], 2);
		dup2(sv[1], 3);
		if (prog != NULL)
			program_exec(prog);
		execve(a->exe, (char *[]){ a->exe, "worker", "--fd", "3",
		    NULL }, envp);
		fprintf(stderr, "exec %s: %s\n", a->exe, strerror(errno));
		_exit(127);
	}
	agent_envp_free(envp);
	envp = NULL;
	setpgid(pid, pid);
	close(sv[1]);
	close(po[1]);
	ranklog_open(w, po[0], log);
	w->agent = a;
	w->pid = pid;
	w->fd = sv[0];
	w->exited = false;
	w->rank = l.rank;
	w->world = l.world;
	w->generation = l.generation;
	w->run = l.run;
	memset(w->seq, 0, sizeof w->seq);
	snprintf(w->job, sizeof w->job, "%s", l.job);
	proto_reader_init(&w->rd);
	proto_queue_init(&w->q, w->fd, 0);
	w->ev = evloop_fd_add(a->loop, w->fd, POLLIN, agent_on_worker, w);
	evloop_fd_want(w->ev, proto_queue_want, &w->q);
	w->out_ev = evloop_fd_add(a->loop, w->out, POLLIN, agent_on_output, w);
	if ((w->prog = prog) != NULL) {
		agent_log(a, "started %s rank %d as pid %ld: %s", l.job, w->rank,
		    (long)pid, json_string_value(json_array_get(json_object_get(
		    json_object_get(launch, "program"), "argv"), 0)));
		return 0;
	}
	if (proto_queue_send(&w->q, launch) != 0) {
		snprintf(err, errlen, "sending the launch to worker %ld: %s",
		    (long)pid, strerror(errno));
		kill(-pid, SIGKILL);
		return -1;
	}
	agent_log(a, "started %s rank %d as pid %ld", l.job, w->rank, (long)pid);
	return 0;
fail:
	agent_envp_free(envp);
	w->prog = prog;
	agent_worker_release(a, w);
	return -1;
}

static void
agent_worker_close(struct agent_worker *w)
{
	evloop_fd_del(w->ev);
	w->ev = NULL;
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	proto_queue_free(&w->q);
}

/* Handle what a worker sent: store requests go to the backend (or wait
 * for one); everything else is tagged with the node, kept if a
 * re-attaching backend will need it, and relayed. */
void
agent_worker_input(struct agent *a, struct agent_worker *w)
{
	json_t	*msg;
	ssize_t	 n;
	int	 rc;
	char	 err[300];

	if (w->prog != NULL) {
		program_input(a, w);
		return;
	}
	n = proto_reader_fill(&w->rd, w->fd);
	while ((rc = proto_reader_next(&w->rd, &msg)) == 1) {
		enum proto_kind k = proto_kind(msg, err, sizeof err);

		if (k == PK_INVALID) {
			agent_log(a, "%s rank %d: refusing %s", w->job, w->rank,
			    err);
			json_decref(msg);
			continue;
		}
		json_object_set_new(msg, "node", json_string(a->node));
		json_object_set_new(msg, "run", json_integer(w->run));
		json_object_set_new(msg, "generation", json_integer(w->generation));
		if (k == PK_STORE) {
			json_object_set_new(msg, "job", json_string(w->job));
			json_object_set_new(msg, "rank", json_integer(w->rank));
			if (agent_backend_attached(a))
				agent_to_backend(a, msg);
			else
				json_array_append_new(a->pending, msg);
			continue;
		}
		if (k == PK_METRICS) {
			json_decref(w->last_metrics);
			w->last_metrics = json_deep_copy(msg);
		}
		agent_record(a, msg);
		agent_to_backend(a, msg);
	}
	if (rc < 0) {
		agent_log(a, "bad frame from %s rank %d: %s", w->job, w->rank,
		    w->rd.err);
		agent_worker_close(w);
	} else if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
		agent_worker_close(w);
}

/* A rank killed while it made the shared-memory segment of its host's
 * ranks leaves the segment's name behind (comm.h). */
static void
agent_remove_segments(struct agent *a, struct agent_worker *w)
{
	int	n = comm_shm_remove_left((long)w->pid);

	if (n > 0)
		agent_log(a, "removed %d shared-memory segment%s left by %s "
		    "rank %d (pid %ld)", n, n == 1 ? "" : "s", w->job, w->rank,
		    (long)w->pid);
}

static void
agent_report_exit(struct agent *a, struct agent_worker *w, int status)
{
	json_t	*msg = json_pack("{s:s, s:s, s:i, s:I, s:s, s:I, s:i}", "t",
	    MSG_EXIT, "job", w->job, "rank", w->rank, "pid", (json_int_t)w->pid,
	    "node", a->node, "run", w->run, "generation", w->generation);

	if (WIFSIGNALED(status)) {
		json_object_set_new(msg, "signal", json_integer(WTERMSIG(status)));
		agent_log(a, "%s rank %d (pid %ld) killed by signal %d", w->job,
		    w->rank, (long)w->pid, WTERMSIG(status));
	} else {
		json_object_set_new(msg, "code", json_integer(WEXITSTATUS(status)));
		agent_log(a, "%s rank %d (pid %ld) exited with status %d", w->job,
		    w->rank, (long)w->pid, WEXITSTATUS(status));
	}
	if (w->prog != NULL)
		program_exit(a, w, status, msg);
	agent_record(a, msg);
	agent_to_backend(a, msg);
}

void
agent_reap(struct agent *a)
{
	pid_t	 pid;
	int	 status;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (int i = 0; i < a->nworkers; i++) {
			struct agent_worker *w = &a->workers[i];

			if (w->pid != pid || w->exited)
				continue;
			/* Drain what it wrote and printed before it died
			 * (a child it left may keep the pipe open: what
			 * comes later still arrives, before EOF). */
			if (w->fd >= 0) {
				net_set_nonblock(w->fd, 1);
				agent_worker_input(a, w);
			}
			if (w->out >= 0)
				ranklog_input(a, w);
			agent_worker_close(w);
			w->exited = true;
			agent_report_exit(a, w, status);
			agent_remove_segments(a, w);
		}
	}
}

void
agent_signal_workers(struct agent *a, const char *job, int rank, int sig)
{
	for (int i = 0; i < a->nworkers; i++) {
		struct agent_worker *w = &a->workers[i];

		if (w->exited || w->pid <= 0 ||
		    (job != NULL && strcmp(job, w->job) != 0) ||
		    (rank >= 0 && rank != w->rank))
			continue;
		kill(-w->pid, sig);	/* never -0: the agent's own group */
	}
}

/* The count a sequenced command carries, kept for the hello. */
static void
agent_worker_seq(struct agent_worker *w, const json_t *msg)
{
	int		 c = proto_kind(msg, NULL, 0) == PK_CMD ?
	    proto_seq_cmd(json_string_value(json_object_get(msg, "cmd"))) : -1;
	json_int_t	 seq = json_integer_value(json_object_get(msg, "seq"));

	if (c >= 0 && seq > w->seq[c])
		w->seq[c] = (long)seq;
}

/* Commands and store answers: to the workers of msg's job (and rank). */
void
agent_forward_to_workers(struct agent *a, const json_t *msg)
{
	const char	*job = json_string_value(json_object_get(msg, "job"));
	json_t		*r = json_object_get(msg, "rank");

	for (int i = 0; i < a->nworkers; i++) {
		struct agent_worker *w = &a->workers[i];

		if ((w->prog != NULL ? w->exited : w->fd < 0) ||
		    (job != NULL && strcmp(job, w->job) != 0) ||
		    (json_is_integer(r) && json_integer_value(r) != w->rank))
			continue;
		agent_worker_seq(w, msg);
		if (w->prog != NULL) {	/* commands only, as lines or signals */
			if (proto_kind(msg, NULL, 0) == PK_CMD)
				program_command(a, w, msg);
			continue;
		}
		if (proto_queue_send(&w->q, msg) != 0)
			agent_log(a, "cannot reach %s rank %d: %s", w->job,
			    w->rank, strerror(errno));
	}
}

json_t *
agent_workers_json(const struct agent *a)
{
	json_t	*arr = json_array();

	for (int i = 0; i < a->nworkers; i++) {
		const struct agent_worker *w = &a->workers[i];

		json_t	*seq = json_array();

		for (int c = 0; c < PROTO_SEQ_CMDS; c++)
			json_array_append_new(seq, json_integer(w->seq[c]));
		json_array_append_new(arr, json_pack("{s:s, s:i, s:i, s:i, s:I, "
		    "s:b, s:I, s:o}", "job", w->job, "rank", w->rank, "world",
		    w->world, "generation", w->generation, "pid",
		    (json_int_t)w->pid, "running", !w->exited, "run", w->run,
		    "seq", seq));
	}
	return arr;
}
