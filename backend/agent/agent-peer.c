/*
 * agent-peer.c: the agent's peers on agent.sock.  A peer becomes the
 * backend by its hello (and a new backend's hello takes the role over
 * from the old one: that is how a re-attaching console wins); only the
 * backend may launch and kill workers, stop the agent or answer the
 * workers' store requests.  Anything else a peer sends first ends its
 * link, with an error frame that says why.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/nvml.h"
#include "lib/utf8.h"
#include "lib/net.h"
#include "lib/xmalloc.h"
#include "backend/agent/agent.h"

void
agent_close_peer(struct agent *a, struct agent_peer *p, const char *why)
{
	if (p->is_backend)
		agent_log(a, "backend detached: %s", why);
	evloop_fd_del(p->ev);
	close(p->fd);
	proto_reader_free(&p->rd);
	proto_queue_free(&p->q);
	for (int i = 0; i < a->npeers; i++) {
		if (a->peers[i] == p) {
			a->peers[i] = a->peers[--a->npeers];
			break;
		}
	}
	free(p);
}

/* A backend says hello: answer with ours, the workers and the history. */
static void
agent_hello(struct agent *a, struct agent_peer *p, const json_t *msg)
{
	json_t		*hello, *samples;
	size_t		 i;
	json_t		*m;

	for (int j = 0; j < a->npeers; j++) {
		struct agent_peer *old = a->peers[j];

		if (old->is_backend && old != p) {
			agent_log(a, "a new backend takes over");
			proto_queue_send_new(&old->q, json_pack("{s:s, s:s}",
			    "t", MSG_ERROR, "reason",
			    "another backend attached"));
			shutdown(old->fd, SHUT_RDWR);
			old->is_backend = false;
		}
	}
	p->is_backend = true;
	hello = proto_hello("agent", a->node);
	json_object_set_new(hello, "pid", json_integer(getpid()));
	json_object_set_new(hello, "workers", agent_workers_json(a));
	json_object_set_new(hello, "blas", agent_blas_json(a));
	{
		/* The GPUs here, for placement (NVML: no CUDA context). */
		struct gpu_sample gs[16];
		int		  n = nvml_sample(gs, 16);

		json_object_set_new(hello, "gpus", json_integer(n));
		if (n == 0 && nvml_absent_reason() != NULL)
			json_object_set_new(hello, "gpus_why",
			    json_string(nvml_absent_reason()));
	}
	samples = json_array();
	for (i = a->ring.len > 60 ? a->ring.len - 60 : 0; i < a->ring.len; i++)
		json_array_append_new(samples,
		    node_sample_json(sample_ring_get(&a->ring, i)));
	json_object_set_new(hello, "samples", samples);
	proto_queue_send_new(&p->q, hello);
	json_array_foreach(a->history, i, m)
		proto_queue_send(&p->q, m);
	for (int w = 0; w < a->nworkers; w++) {
		if (a->workers[w].last_metrics != NULL)
			proto_queue_send(&p->q, a->workers[w].last_metrics);
	}
	json_array_foreach(a->pending, i, m)
		proto_queue_send(&p->q, m);
	json_array_clear(a->pending);
	agent_log(a, "backend attached");
}

static void
agent_command(struct agent *a, struct agent_peer *p, const json_t *msg)
{
	const char	*cmd = json_string_value(json_object_get(msg, "cmd"));
	const char	*job = json_string_value(json_object_get(msg, "job"));
	json_t		*r = json_object_get(msg, "rank");
	char		 err[512], perr[128];
	json_t		*ev;

	if (strcmp(cmd, "launch") == 0) {
		if (agent_spawn(a, msg, err, sizeof err) != 0) {
			agent_log(a, "launch failed: %s", err);
			ev = proto_pack(perr, sizeof perr, "{s:s, s:s, s:s?, s:O?, "
			    "s:s, s:s}", "t", MSG_EVENT, "kind", "failed",
			    "job", job, "rank", r, "node", a->node,
			    "reason", utf8_fix(err, sizeof err));
			if (ev == NULL)
				agent_log(a, "the launch failure: %s", perr);
			else
				proto_queue_send_new(&p->q, ev);
		}
	} else if (strcmp(cmd, "kill") == 0) {
		agent_signal_workers(a, job, json_is_integer(r) ?
		    (int)json_integer_value(r) : -1, SIGKILL);
	} else if (strcmp(cmd, "ping") == 0) {
		/* The backend learns that its frames get here again. */
		proto_queue_send_new(&p->q, json_pack("{s:s, s:s, s:O}", "t",
		    MSG_OK, "reason", "ping", "seq", json_object_get(msg,
		    "seq")));
	} else if (strcmp(cmd, "bench-sgemm") == 0) {
		agent_bench_sgemm(a, p);
	} else if (strcmp(cmd, "shutdown") == 0) {
		agent_log(a, "shutdown requested");
		a->quit = true;
	} else {
		/* stop, pause, resume, checkpoint...: the workers decide. */
		agent_forward_to_workers(a, msg);
	}
}

/*
 * Refuse a peer: say why in an error frame, log it and close the link.
 * Only a backend, introduced by its hello, may launch, kill, stop the
 * agent or reach the workers' store; the link of anything else ends.
 */
static void
agent_refuse_peer(struct agent *a, struct agent_peer *p, const char *why)
{
	char	 text[512], err[128];
	json_t	*m;

	agent_log(a, "refusing a peer: %s", why);
	snprintf(text, sizeof text, "%s", why);	/* may quote the peer */
	if ((m = proto_pack(err, sizeof err, "{s:s, s:s, s:s}", "t", MSG_ERROR,
	    "node", a->node, "reason", utf8_fix(text, sizeof text))) != NULL)
		proto_queue_send_new(&p->q, m);
	agent_close_peer(a, p, why);
}

/* One frame from peer p; -1 once the peer is closed. */
static int
agent_peer_frame(struct agent *a, struct agent_peer *p, const json_t *msg)
{
	enum proto_kind	 k;
	const char	*role;
	char		 err[300], why[400];

	k = proto_kind(msg, err, sizeof err);
	if (k == PK_UNKNOWN) {
		agent_log(a, "ignoring a '%s' frame", proto_type(msg));
		return 0;
	}
	if (k == PK_INVALID && p->is_backend) {
		agent_log(a, "refusing %s", err);
		return 0;
	}
	if (k == PK_INVALID) {
		agent_refuse_peer(a, p, err);
		return -1;
	}
	if (k == PK_HELLO) {
		role = json_string_value(json_object_get(msg, "role"));
		if (strcmp(role, "backend") != 0) {
			snprintf(why, sizeof why, "a hello from a '%.64s': "
			    "only a backend attaches here", role);
			agent_refuse_peer(a, p, why);
			return -1;
		}
		agent_hello(a, p, msg);
		return 0;
	}
	if (!p->is_backend) {
		snprintf(why, sizeof why, "'%s' frame before the backend's "
		    "hello", proto_kind_name(k));
		agent_refuse_peer(a, p, why);
		return -1;
	}
	switch (k) {
	case PK_CMD:
		agent_command(a, p, msg);
		break;
	case PK_STORE:
		agent_forward_to_workers(a, msg);
		break;
	default:
		agent_log(a, "ignoring a '%s' frame", proto_type(msg));
		break;
	}
	return 0;
}

static void
agent_peer_input(struct agent *a, struct agent_peer *p)
{
	json_t		*msg;
	ssize_t		 n;
	int		 rc;

	n = proto_reader_fill(&p->rd, p->fd);
	while ((rc = proto_reader_next(&p->rd, &msg)) == 1) {
		int closed = agent_peer_frame(a, p, msg);

		json_decref(msg);
		if (closed)
			return;
	}
	if (rc < 0) {
		agent_log(a, "bad frame from a peer: %s", p->rd.err);
		agent_close_peer(a, p, p->rd.err);
	} else if (n == 0)
		agent_close_peer(a, p, "connection closed");
	else if (n < 0 && errno != EAGAIN && errno != EINTR)
		agent_close_peer(a, p, strerror(errno));
}

static void
agent_on_peer(int fd, short revents, void *arg)
{
	struct agent_peer *p = arg;

	(void)fd;
	if ((revents & POLLOUT) && proto_queue_flush(&p->q) != 0) {
		agent_close_peer(p->agent, p, strerror(p->q.err));
		return;
	}
	if (revents & ~POLLOUT)
		agent_peer_input(p->agent, p);
}

/* A peer on agent.sock; one of another user (whatever made the socket
 * reachable to them) is refused and logged. */
void
agent_accept(struct agent *a)
{
	char	 err[300];
	int	 fd = net_accept_unix(a->lfd, "agent.sock", err, sizeof err);
	struct agent_peer *p;

	if (fd < 0) {
		if (errno == EPERM)
			agent_log(a, "%s", err);
		return;
	}
	p = xcalloc(1, sizeof *p);
	p->agent = a;
	p->fd = fd;
	proto_reader_init(&p->rd);
	proto_queue_init(&p->q, fd, 0);
	p->ev = evloop_fd_add(a->loop, fd, POLLIN, agent_on_peer, p);
	evloop_fd_want(p->ev, proto_queue_want, &p->q);
	a->peers = xreallocarray(a->peers, (size_t)a->npeers + 1,
	    sizeof *a->peers);
	a->peers[a->npeers++] = p;
}
