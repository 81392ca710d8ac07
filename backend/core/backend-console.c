/*
 * backend-console.c: console.sock's clients (hunter ctl, a takeover, the
 * front ends of other processes): this user's only (SO_PEERCRED), at most
 * MAX_CONSOLE_PEERS of them, a command frame each answered ok or with the
 * reason it was refused (its fields are checked first: proto_cmd_check),
 * the ones beyond refused with a word, the silent ones and the ones whose
 * request is not whole CONSOLE_IDLE_S after its first byte closed.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/net.h"
#include "lib/utf8.h"
#include "lib/xmalloc.h"
#include "backend/proto/proto.h"
#include "backend/core/backend-internal.h"

/* What an accepted command did: for a submit, where its job is now (its
 * queue position and why it waits, or its placement). */
static const char *
console_accepted(struct backend *b, const json_t *cmd, char *buf,
    size_t len)
{
	const struct job_state *j = backend_job(b, NULL);
	int	 ahead = 0;

	if (strcmp(json_string_value(json_object_get(cmd, "cmd")), "submit") != 0 ||
	    j == NULL)
		return "accepted";
	if (j->phase != JOB_QUEUED) {
		snprintf(buf, len, "%s: %s, %d rank%s", j->name,
		    job_phase_name(j->phase), j->world, j->world == 1 ? "" : "s");
		return buf;
	}
	for (int i = 0; i < b->njobs; i++)
		ahead += &b->jobs[i] != j && b->jobs[i].phase == JOB_QUEUED &&
		    b->jobs[i].submitted <= j->submitted;
	snprintf(buf, len, "%s: queued, position %d (%s)", j->name, ahead + 1,
	    j->reason);
	return buf;
}

/* A command on console.sock: answered ok, or with the reason it was
 * refused (the event the command just raised). */
static void
backend_console_frame(struct backend *b, struct console_peer *p,
    const json_t *msg)
{
	const char	*reason = "expected a cmd frame";
	char		 err[300], text[1024];
	size_t		 ne = json_array_size(b->events);
	json_t		*last, *m;

	switch (proto_kind(msg, err, sizeof err)) {
	case PK_CMD:
		if (strcmp(json_string_value(json_object_get(msg, "cmd")),
		    "detach") == 0) {
			b->detach = true;
			return;
		}
		if (strcmp(json_string_value(json_object_get(msg, "cmd")),
		    "jobs") == 0) {
			m = json_pack("{s:s, s:s, s:o}", "t", MSG_OK, "reason",
			    "the jobs", "jobs", backend_jobs_json(b));
			proto_queue_send_new(&p->q, m);
			return;
		}
		if (backend_command(b, msg) == 0) {
			if ((m = proto_pack(err, sizeof err, "{s:s, s:s}", "t",
			    MSG_OK, "reason", console_accepted(b, msg, text,
			    sizeof text))) != NULL)
				proto_queue_send_new(&p->q, m);
			return;
		}
		last = json_array_size(b->events) > ne ? json_array_get(
		    b->events, json_array_size(b->events) - 1) : NULL;
		reason = last != NULL ? json_string_value(json_object_get(last,
		    "reason")) : "refused";
		break;
	case PK_INVALID:
		reason = err;
		break;
	default:
		break;
	}
	/* proto_kind's message may quote the peer's bytes, cut short. */
	snprintf(text, sizeof text, "%s", reason != NULL ? reason : "refused");
	if ((m = proto_pack(err, sizeof err, "{s:s, s:s}", "t", MSG_ERROR,
	    "reason", utf8_fix(text, sizeof text))) != NULL)
		proto_queue_send_new(&p->q, m);
}

void
backend_console_close(struct backend *b, struct console_peer *p)
{
	evloop_fd_del(p->ev);
	close(p->fd);
	proto_reader_free(&p->rd);
	proto_queue_free(&p->q);
	for (int i = 0; i < b->npeers; i++) {
		if (b->peers[i] == p) {
			b->peers[i] = b->peers[--b->npeers];
			break;
		}
	}
	free(p);
}

/*
 * What a client sent.  Its clock (last_seen) starts at its accept, at
 * the first byte of a request and at each request it completed; bytes
 * that trickle in do not restart it, so a request must be whole within
 * CONSOLE_IDLE_S of its first byte.
 */
static void
backend_console_input(struct backend *b, struct console_peer *p)
{
	json_t		*msg;
	bool		 partial = p->rd.len > p->rd.off, whole = false;
	ssize_t		 n = proto_reader_fill(&p->rd, p->fd);
	int		 rc;

	while ((rc = proto_reader_next(&p->rd, &msg)) == 1) {
		backend_console_frame(b, p, msg);
		json_decref(msg);
		whole = true;
	}
	if (whole || (!partial && p->rd.len > p->rd.off))
		p->last_seen = clock_mono();
	/* A peer that stopped reading its answers is dropped, too. */
	if (rc < 0 || n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR) ||
	    p->q.err != 0)
		backend_console_close(b, p);
}

static void
backend_console_on(int fd, short revents, void *arg)
{
	struct console_peer *p = arg;

	(void)fd;
	if (revents & POLLOUT)
		proto_queue_flush(&p->q);
	backend_console_input(p->b, p);
}

/*
 * A client on console.sock: taken whenever the socket says one waits (a
 * listening fd left readable would wake poll() at once, forever: the
 * loop spun), and refused with a word when MAX_CONSOLE_PEERS are in.
 */
void
backend_console_accept(struct backend *b)
{
	struct proto_queue q;
	char	 err[300], why[160];
	json_t	*m;
	int	 fd = net_accept_unix(b->console_fd, "console.sock", err,
	    sizeof err);
	struct console_peer *p;

	if (fd < 0) {
		if (errno == EPERM)	/* another user's */
			backend_event(b, NULL, EV_REFUSED, -1, NULL, "%s", err);
		return;
	}
	if (b->npeers < MAX_CONSOLE_PEERS) {
		p = xcalloc(1, sizeof *p);
		p->b = b;
		p->fd = fd;
		p->last_seen = clock_mono();
		proto_reader_init(&p->rd);
		proto_queue_init(&p->q, fd, 0);
		p->ev = evloop_fd_add(b->loop, fd, POLLIN, backend_console_on,
		    p);
		evloop_fd_want(p->ev, proto_queue_want, &p->q);
		b->peers[b->npeers++] = p;
		return;
	}
	snprintf(why, sizeof why, "too many console.sock clients (%d are "
	    "connected); try again", MAX_CONSOLE_PEERS);
	/* What the fresh socket takes at once: a refused client that does
	 * not read holds up no one. */
	proto_queue_init(&q, fd, 0);
	if ((m = proto_pack(err, sizeof err, "{s:s, s:s}", "t", MSG_ERROR,
	    "reason", why)) != NULL)
		proto_queue_send_new(&q, m);
	proto_queue_free(&q);
	close(fd);
}

void
backend_console_reap(struct backend *b, double now)
{
	for (int i = b->npeers - 1; i >= 0; i--) {
		if (now - b->peers[i]->last_seen > CONSOLE_IDLE_S)
			backend_console_close(b, b->peers[i]);
	}
}
