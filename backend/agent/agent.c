/*
 * agent.c: the agent daemon's main loop.
 *
 * One event loop (lib/evloop.h): the listening socket, the peers (a
 * backend, or a connection not yet introduced by hello: agent-peer.c),
 * the workers' socketpairs and output pipes (supervisor.c), a self-pipe
 * for SIGCHLD and SIGTERM, a 1 Hz tick for the sampler and the idle
 * exit, and the programs' deadlines as the longest wait.  Each tick sends
 * the node's frame: its sample and lists, its GPUs, its ranks' processes;
 * an XID error NVML reported goes as an event of its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
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
#include "lib/evloop.h"
#include "lib/net.h"
#include "lib/nvml.h"
#include "lib/statedir.h"
#include "lib/xmalloc.h"
#include "backend/proto/event.h"
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
		if (a->peers[i]->is_backend)
			return a->peers[i];
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
	uint64_t	 dropped = 0;
	int		 rc;

	if (b != NULL && (rc = proto_queue_send(&b->q, msg)) == 1) {
		for (int k = 0; k < PK_COUNT; k++)
			dropped += b->q.dropped[k];
		/* The first drop since the last report: when it began. */
		if (dropped == 1)
			agent_log(a, "the backend reads nothing (%zu KiB wait): "
			    "dropping metrics and log lines until it does",
			    proto_queue_waiting(&b->q) / 1024);
	} else if (b != NULL && rc < 0) {
		if (errno == EINVAL)
			agent_log(a, "not sending a '%s' frame that cannot "
			    "be encoded", proto_type(msg));
		else {
			agent_log(a, "backend link lost: %s", strerror(errno));
			shutdown(b->fd, SHUT_RDWR);	/* poll reports it */
		}
	}
	json_decref(msg);
}

/* Once a slow backend reads again, say what it missed. */
static void
agent_report_drops(struct agent *a)
{
	struct agent_peer *b = agent_backend(a);
	char		 link[96];
	json_t		*ev;

	snprintf(link, sizeof link, "agent of %s -> backend", a->node);
	if (b == NULL || (ev = proto_queue_drop_event(&b->q, link)) == NULL)
		return;
	agent_log(a, "%s", json_string_value(json_object_get(ev, "reason")));
	json_object_set_new(ev, "node", json_string(a->node));
	agent_to_backend(a, ev);
}

/* Keep frames a re-attaching backend needs to rebuild its state. */
void
agent_record(struct agent *a, const json_t *msg)
{
	switch (proto_kind(msg, NULL, 0)) {
	case PK_EPOCH:
	case PK_EVAL:
	case PK_EVENT:
	case PK_SUMMARY:
	case PK_EXIT:
		break;
	default:
		return;
	}
	if (json_array_size(a->history) >= AGENT_HISTORY_MAX)
		json_array_remove(a->history, 0);
	json_array_append_new(a->history, json_deep_copy(msg));
}

/* An XID error on one of the node's GPUs: an event of the node's. */
static void
agent_xid(struct agent *a, const struct nvml_xid *x,
    const struct gpu_sample *gs, int ng)
{
	const char	*name = "";
	json_t		*ev;

	for (int g = 0; g < ng; g++) {
		if (gs[g].index == x->index)
			name = gs[g].name;
	}
	ev = json_pack("{s:s, s:s, s:i, s:s, s:i, s:I}", "t", MSG_EVENT,
	    "kind", event_kind_name(EV_XID), "rank", -1, "node", a->node,
	    "gpu", x->index, "xid", (json_int_t)x->xid);
	json_object_set_new(ev, "reason", json_sprintf("GPU %d%s%s%s: XID "
	    "error %llu", x->index, *name ? " (" : "", name, *name ? ")" : "",
	    x->xid));
	agent_log(a, "%s", json_string_value(json_object_get(ev, "reason")));
	agent_to_backend(a, ev);
}

/* The process rows of every rank running here ("ranks" of the node's
 * frame), each named as its worker's frames name it; NULL for none.
 * A GPU process that is a rank's gets its owner. */
static json_t *
agent_rank_procs(struct agent *a, struct gpu_sample *gs, int ng)
{
	struct proc_want want[AGENT_MAX_WORKERS];
	struct rank_report rr[AGENT_MAX_WORKERS];
	int		 at[AGENT_MAX_WORKERS], n = 0;
	json_t		*list;

	for (int i = 0; i < a->nworkers; i++) {
		if (a->workers[i].exited)
			continue;
		want[n] = (struct proc_want){ a->workers[i].pid,
		    a->workers[i].prog != NULL };
		at[n++] = i;
	}
	if (n == 0)
		return NULL;
	sampler_procs(a->sampler, want, n, gs, ng, rr);
	list = json_array();
	for (int k = 0; k < n; k++) {
		const struct agent_worker *w = &a->workers[at[k]];
		json_t	*o = json_pack("{s:s, s:i, s:I, s:i, s:I}", "job", w->job,
		    "rank", w->rank, "run", (json_int_t)w->run, "generation",
		    w->generation, "pid", (json_int_t)w->pid);

		metrics_put(rank_metrics, RM_COUNT, NULL, &rr[k], rr[k].valid &
		    RM_AGENT_MASK & ~RM_BIT(PID), false, o);
		json_array_append_new(list, o);
	}
	return list;
}

static void
agent_tick(struct agent *a)
{
	static struct node_lists nl;	/* large; one agent a process */
	struct node_sample s;
	struct gpu_sample gs[AGENT_GPUS];
	struct nvml_xid	 xid[AGENT_GPUS];
	json_t		*m, *ranks;
	int		 ng, nx;

	sampler_sample(a->sampler, &s, &nl);
	if (a->blas_gflops > 0) {
		s.v[NM_BLAS_GFLOPS] = a->blas_gflops;
		s.valid |= UINT64_C(1) << NM_BLAS_GFLOPS;
	}
	sample_ring_push(&a->ring, &s);
	nx = nvml_xids(xid, AGENT_GPUS);
	ng = nvml_sample(gs, AGENT_GPUS);
	for (int i = 0; i < nx; i++)
		agent_xid(a, &xid[i], gs, ng);
	m = json_pack("{s:s, s:s, s:s}", "t", MSG_METRICS, "scope", "node",
	    "node", a->node);
	json_object_update_new(m, node_sample_json(&s));
	node_lists_put(&nl, m);
	if ((ranks = agent_rank_procs(a, gs, ng)) != NULL)
		json_object_set_new(m, "ranks", ranks);
	json_object_set_new(m, "gpus", gpu_samples_json(gs, ng));
	agent_to_backend(a, m);
	agent_report_drops(a);
}

static int
agent_running_workers(const struct agent *a)
{
	int	 n = 0;

	for (int i = 0; i < a->nworkers; i++)
		n += !a->workers[i].exited;
	return n;
}

/* The self-pipe: SIGTERM and SIGINT stop the agent, SIGCHLD reaps. */
static void
agent_on_signals(int fd, short revents, void *arg)
{
	struct agent	*a = arg;
	char		 c;

	(void)revents;
	while (read(fd, &c, 1) == 1) {
		if (c == SIGTERM || c == SIGINT) {
			agent_log(a, "signal %d: stopping", c);
			a->quit = true;
		}
	}
	agent_reap(a);
}

static void
agent_on_listen(int fd, short revents, void *arg)
{
	(void)fd;
	(void)revents;
	agent_accept(arg);
}

/* Once a second: the node's sample, and the idle exit (no workers, no
 * backend for idle_exit_s). */
static void
agent_on_tick(void *arg)
{
	struct agent	*a = arg;
	double		 now = clock_mono();

	agent_tick(a);
	if (agent_running_workers(a) > 0 || agent_backend(a) != NULL)
		a->idle_since = now;
	else if (a->idle_exit_s > 0 && now - a->idle_since > a->idle_exit_s) {
		agent_log(a, "idle for %d s; exiting", a->idle_exit_s);
		a->quit = true;
	}
}

void
agent_loop(struct agent *a)
{
	struct evloop_timer *tick;

	a->idle_since = clock_mono();
	evloop_fd_add(a->loop, a->lfd, POLLIN, agent_on_listen, a);
	evloop_fd_add(a->loop, agent_sigpipe[0], POLLIN, agent_on_signals, a);
	tick = evloop_timer_add(a->loop, 0, 1.0, agent_on_tick, a);
	while (!a->quit) {
		double now = clock_mono();
		double due = program_tick(a, now);	/* programs' timers */
		int ms = due > now ? (int)((due - now) * 1000) + 1 : 0;

		if (evloop_run_once(a->loop, ms) < 0) {
			agent_log(a, "poll: %s", strerror(errno));
			break;
		}
	}
	evloop_timer_del(tick);
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
