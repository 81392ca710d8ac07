/*
 * agent.c: the agent daemon's main loop.
 *
 * One poll() loop: the listening socket, the peers (a backend, or a
 * connection not yet introduced by hello), the workers' socketpairs, a
 * self-pipe for SIGCHLD and SIGTERM, and a 1 Hz tick for the sampler.
 * At most one peer is the backend; a new backend hello takes the role
 * over from the old one (that is how a re-attaching console wins).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/net.h"
#include "lib/nvml.h"
#include "lib/statedir.h"
#include "lib/xmalloc.h"
#include "backend/agent/agent.h"

static int agent_sigpipe[2] = { -1, -1 };

void
agent_log(struct agent *a, const char *fmt, ...)
{
	va_list	 ap;
	time_t	 now = time(NULL);
	char	 ts[32];

	strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", localtime(&now));
	fprintf(stderr, "%s agent %s: ", ts, a->node);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

static void
agent_on_signal(int sig)
{
	char	 c = (char)sig;
	int	 saved = errno;

	if (write(agent_sigpipe[1], &c, 1) < 0) {
		/* The pipe is full: a wake-up is already pending. */
	}
	errno = saved;
}

static struct agent_peer *
agent_backend(struct agent *a)
{
	for (int i = 0; i < a->npeers; i++) {
		if (a->peers[i].is_backend)
			return &a->peers[i];
	}
	return NULL;
}

bool
agent_backend_attached(struct agent *a)
{
	return agent_backend(a) != NULL;
}

void
agent_to_backend(struct agent *a, json_t *msg)
{
	struct agent_peer *b = agent_backend(a);

	if (b != NULL && proto_send(b->fd, msg) != 0) {
		agent_log(a, "backend link lost: %s", strerror(errno));
		shutdown(b->fd, SHUT_RDWR);	/* poll reports it and closes */
	}
	json_decref(msg);
}

/* Keep frames a re-attaching backend needs to rebuild its state. */
void
agent_record(struct agent *a, const json_t *msg)
{
	if (!proto_is(msg, MSG_EPOCH) && !proto_is(msg, MSG_EVENT) &&
	    !proto_is(msg, MSG_SUMMARY) && !proto_is(msg, MSG_EXIT))
		return;
	if (json_array_size(a->history) >= AGENT_HISTORY_MAX)
		json_array_remove(a->history, 0);
	json_array_append_new(a->history, json_deep_copy(msg));
}

void
agent_close_peer(struct agent *a, int i, const char *why)
{
	struct agent_peer *p = &a->peers[i];

	if (p->is_backend)
		agent_log(a, "backend detached: %s", why);
	close(p->fd);
	proto_reader_free(&p->rd);
	a->peers[i] = a->peers[--a->npeers];
}

/* A backend says hello: answer with ours, the workers and the history. */
static void
agent_hello(struct agent *a, struct agent_peer *p, const json_t *msg)
{
	const char	*role = json_string_value(json_object_get(msg, "role"));
	json_t		*hello, *samples = json_array();
	size_t		 i;
	json_t		*m;

	if (role == NULL || strcmp(role, "backend") != 0)
		return;
	for (int j = 0; j < a->npeers; j++) {
		if (a->peers[j].is_backend && &a->peers[j] != p) {
			agent_log(a, "a new backend takes over");
			proto_send_new(a->peers[j].fd, json_pack("{s:s, s:s}",
			    "t", MSG_ERROR, "reason", "another backend attached"));
			shutdown(a->peers[j].fd, SHUT_RDWR);
			a->peers[j].is_backend = false;
		}
	}
	p->is_backend = true;
	hello = proto_hello("agent", a->node);
	json_object_set_new(hello, "pid", json_integer(getpid()));
	json_object_set_new(hello, "workers", agent_workers_json(a));
	{
		/* The GPUs here, for placement (NVML: no CUDA context). */
		struct gpu_sample gs[16];
		int		  n = nvml_sample(gs, 16);

		json_object_set_new(hello, "gpus", json_integer(n));
		if (n == 0 && nvml_absent_reason() != NULL)
			json_object_set_new(hello, "gpus_why",
			    json_string(nvml_absent_reason()));
	}
	for (i = a->ring.len > 60 ? a->ring.len - 60 : 0; i < a->ring.len; i++)
		json_array_append_new(samples,
		    node_sample_json(sample_ring_get(&a->ring, i)));
	json_object_set_new(hello, "samples", samples);
	proto_send_new(p->fd, hello);
	json_array_foreach(a->history, i, m)
		proto_send(p->fd, m);
	for (int w = 0; w < a->nworkers; w++) {
		if (a->workers[w].last_metrics != NULL)
			proto_send(p->fd, a->workers[w].last_metrics);
	}
	json_array_foreach(a->pending, i, m)
		proto_send(p->fd, m);
	json_array_clear(a->pending);
	agent_log(a, "backend attached");
}

static void
agent_command(struct agent *a, struct agent_peer *p, const json_t *msg)
{
	const char	*cmd = json_string_value(json_object_get(msg, "cmd"));
	const char	*job = json_string_value(json_object_get(msg, "job"));
	json_t		*r = json_object_get(msg, "rank");
	char		 err[512];

	if (cmd == NULL)
		return;
	if (strcmp(cmd, "launch") == 0) {
		if (agent_spawn(a, msg, err, sizeof err) != 0) {
			agent_log(a, "launch failed: %s", err);
			proto_send_new(p->fd, json_pack("{s:s, s:s, s:s, s:O?, "
			    "s:s, s:s}", "t", MSG_EVENT, "kind", "failed",
			    "job", job ? job : "", "rank", r, "node", a->node,
			    "reason", err));
		}
	} else if (strcmp(cmd, "kill") == 0) {
		agent_signal_workers(a, job, json_is_integer(r) ?
		    (int)json_integer_value(r) : -1, SIGKILL);
	} else if (strcmp(cmd, "shutdown") == 0) {
		agent_log(a, "shutdown requested");
		a->quit = true;
	} else {
		/* stop, pause, resume, checkpoint...: the workers decide. */
		agent_forward_to_workers(a, msg);
	}
}

static void
agent_peer_input(struct agent *a, int i)
{
	struct agent_peer *p = &a->peers[i];
	json_t		*msg;
	ssize_t		 n;
	int		 rc;

	n = proto_reader_fill(&p->rd, p->fd);
	while ((rc = proto_reader_next(&p->rd, &msg)) == 1) {
		if (proto_is(msg, MSG_HELLO))
			agent_hello(a, p, msg);
		else if (proto_is(msg, MSG_CMD))
			agent_command(a, p, msg);
		else if (proto_is(msg, MSG_STORE))
			agent_forward_to_workers(a, msg);
		else
			agent_log(a, "ignoring a '%s' frame", proto_type(msg));
		json_decref(msg);
	}
	if (rc < 0) {
		agent_log(a, "bad frame from a peer: %s", p->rd.err);
		agent_close_peer(a, i, p->rd.err);
	} else if (n == 0)
		agent_close_peer(a, i, "connection closed");
	else if (n < 0 && errno != EAGAIN && errno != EINTR)
		agent_close_peer(a, i, strerror(errno));
}

static void
agent_accept(struct agent *a)
{
	int	 fd = accept4(a->lfd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return;
	a->peers = xreallocarray(a->peers, (size_t)a->npeers + 1,
	    sizeof *a->peers);
	a->peers[a->npeers].fd = fd;
	a->peers[a->npeers].is_backend = false;
	proto_reader_init(&a->peers[a->npeers].rd);
	a->npeers++;
}

static void
agent_tick(struct agent *a)
{
	struct node_sample s;
	json_t		*m;

	sampler_sample(a->sampler, &s);
	sample_ring_push(&a->ring, &s);
	m = node_sample_json(&s);
	json_object_set_new(m, "t", json_string(MSG_METRICS));
	json_object_set_new(m, "scope", json_string("node"));
	json_object_set_new(m, "node", json_string(a->node));
	{
		struct gpu_sample gs[16];

		json_object_set_new(m, "gpus", gpu_samples_json(gs,
		    nvml_sample(gs, 16)));
	}
	agent_to_backend(a, m);
}

static int
agent_running_workers(const struct agent *a)
{
	int	 n = 0;

	for (int i = 0; i < a->nworkers; i++)
		n += !a->workers[i].exited;
	return n;
}

void
agent_loop(struct agent *a)
{
	struct pollfd	 pfd[2 + 64 + 2 * AGENT_MAX_WORKERS];
	int		 widx[AGENT_MAX_WORKERS], oidx[AGENT_MAX_WORKERS];
	int		 npeer, nw, no, n;
	double		 next_tick = clock_mono();
	char		 c;

	a->idle_since = clock_mono();
	while (!a->quit) {
		double now = clock_mono();
		int timeout = (int)((next_tick - now) * 1000) + 1;

		if (now >= next_tick) {
			agent_tick(a);
			next_tick += 1.0;
			if (next_tick < now)
				next_tick = now + 1.0;
			continue;
		}
		if (agent_running_workers(a) > 0 || agent_backend(a) != NULL)
			a->idle_since = now;
		else if (a->idle_exit_s > 0 && now - a->idle_since > a->idle_exit_s) {
			agent_log(a, "idle for %d s; exiting", a->idle_exit_s);
			break;
		}
		n = 0;
		pfd[n++] = (struct pollfd){ .fd = a->lfd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = agent_sigpipe[0], .events = POLLIN };
		npeer = a->npeers < 64 ? a->npeers : 64;
		for (int i = 0; i < npeer; i++)
			pfd[n++] = (struct pollfd){ .fd = a->peers[i].fd, .events = POLLIN };
		nw = 0;
		for (int i = 0; i < a->nworkers; i++) {
			if (a->workers[i].fd < 0)
				continue;
			widx[nw++] = i;
			pfd[n++] = (struct pollfd){ .fd = a->workers[i].fd, .events = POLLIN };
		}
		no = 0;
		for (int i = 0; i < a->nworkers; i++) {
			if (a->workers[i].out < 0)
				continue;
			oidx[no++] = i;
			pfd[n++] = (struct pollfd){ .fd = a->workers[i].out, .events = POLLIN };
		}
		if (poll(pfd, (nfds_t)n, timeout) < 0) {
			if (errno == EINTR)
				continue;
			agent_log(a, "poll: %s", strerror(errno));
			break;
		}
		/* Workers first, so their last frames precede their exit. */
		for (int i = 0; i < nw; i++) {
			if (pfd[2 + npeer + i].revents != 0)
				agent_worker_input(a, &a->workers[widx[i]]);
		}
		for (int i = 0; i < no; i++) {
			if (pfd[2 + npeer + nw + i].revents != 0)
				ranklog_input(a, &a->workers[oidx[i]]);
		}
		if (pfd[1].revents & POLLIN) {
			while (read(agent_sigpipe[0], &c, 1) == 1) {
				if (c == SIGTERM || c == SIGINT) {
					agent_log(a, "signal %d: stopping", c);
					a->quit = true;
				}
			}
			agent_reap(a);
		}
		for (int i = npeer - 1; i >= 0; i--) {
			if (pfd[2 + i].revents != 0)
				agent_peer_input(a, i);
		}
		if (pfd[0].revents & POLLIN)
			agent_accept(a);
	}
}

/* Stop every worker: SIGTERM to each group, then SIGKILL after 5 s. */
void
agent_stop_workers(struct agent *a)
{
	agent_signal_workers(a, NULL, -1, SIGTERM);
	for (int waited = 0; agent_running_workers(a) > 0 && waited < 5000;
	    waited += 50) {
		usleep(50000);
		agent_reap(a);
	}
	agent_signal_workers(a, NULL, -1, SIGKILL);
	agent_reap(a);
}

/* The self-pipe that SIGCHLD and SIGTERM write to, and their handlers.
 * 0, or -1 when no pipe could be made. */
int
agent_signals_init(void)
{
	struct sigaction sa = { .sa_handler = agent_on_signal };

	if (pipe2(agent_sigpipe, O_CLOEXEC | O_NONBLOCK) != 0)
		return -1;
	/* Whatever started us may have blocked signals (exec keeps the
	 * mask); the agent lives on SIGCHLD and SIGTERM, its workers too. */
	{
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
	}
	sigaction(SIGCHLD, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	return 0;
}
