/*
 * fleet.c: connecting to the agents of a cluster, through the launcher
 * that serves each node, each connect on a thread of its own, with a
 * per-node backoff so that a dead host is not hammered by the backend's
 * once-a-second reconnect.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/xmalloc.h"
#include "backend/fleet/fleet.h"

extern const struct launcher launcher_local;
extern const struct launcher launcher_srun;
extern const struct launcher launcher_ssh;

/* The first that matches serves a node: srun before ssh, which takes any
 * host but local. */
static const struct launcher *launchers[] = {
	&launcher_local,
	&launcher_srun,
	&launcher_ssh,
};

/* The longest wait between two connects to a node that keeps failing. */
#define FLEET_BACKOFF_MAX_S	30

static const struct launcher *fleet_launcher(const struct fleet_node *);

int fleet_agent_idle_exit = 900;
bool fleet_accept_new_hostkeys;
bool fleet_push;

void
fleet_init(struct fleet *f, const struct cluster_spec *c, const char *state_dir)
{
	ssize_t	 n;

	memset(f, 0, sizeof *f);
	f->n = c->n_nodes;
	f->nodes = xcalloc((size_t)f->n, sizeof *f->nodes);
	if ((n = readlink("/proc/self/exe", f->exe, sizeof f->exe - 1)) > 0)
		f->exe[n] = '\0';
	for (int i = 0; i < f->n; i++) {
		struct fleet_node *fn = &f->nodes[i];

		fn->spec = &c->nodes[i];
		fn->cluster = c;
		fn->fd = -1;
		if (fn->spec->state_dir[0] != '\0')
			snprintf(fn->dir, sizeof fn->dir, "%s", fn->spec->state_dir);
		else if (strcmp(fn->spec->host, "local") != 0 &&
		    fn->spec->slurm_job[0] == '\0')
			snprintf(fn->dir, sizeof fn->dir,
			    "~/.local/state/hunter/nodes/%s", fn->spec->name);
		else
			snprintf(fn->dir, sizeof fn->dir, "%s/nodes/%s",
			    state_dir, fn->spec->name);
		snprintf(fn->addr, sizeof fn->addr, "%s",
		    fn->spec->addr[0] != '\0' ? fn->spec->addr :
		    strcmp(fn->spec->host, "local") == 0 ? "127.0.0.1" :
		    fn->spec->host);
		proto_reader_init(&fn->rd);
		fn->bound = fleet_launcher(fn) != NULL && fleet_launcher(fn)->bound;
		proto_queue_init(&fn->q, -1, 0);
	}
}

/* A connect failed, or its link died before the hello: wait 1, 2, 4 ...
 * FLEET_BACKOFF_MAX_S seconds before the next. */
static void
fleet_backoff(struct fleet_node *fn)
{
	fn->backoff_s = fn->backoff_s == 0 ? 1 : fn->backoff_s * 2;
	if (fn->backoff_s > FLEET_BACKOFF_MAX_S)
		fn->backoff_s = FLEET_BACKOFF_MAX_S;
	fn->retry_at = clock_mono() + fn->backoff_s;
}

void
fleet_close_node(struct fleet_node *fn)
{
	if (fn->fd >= 0) {
		/* A link that got as far as the hello may come back at once. */
		if (fn->up)
			fn->backoff_s = 0;
		else
			fleet_backoff(fn);
		close(fn->fd);
	}
	fn->fd = -1;
	fn->up = false;
	proto_reader_free(&fn->rd);
	proto_reader_init(&fn->rd);
	proto_queue_free(&fn->q);
}

static void	fleet_conn_finish(struct fleet_node *, bool wait,
		    void (*report)(void *, const char *, const char *), void *);

static void
fleet_quiet(void *ctx, const char *node, const char *err)
{
	(void)ctx;
	(void)node;
	(void)err;
}

/* How long closing the fleet waits for what the agents have not taken
 * yet (a stop just before a detach), all nodes together. */
#define FLEET_CLOSE_DRAIN_MS	1000

void
fleet_free(struct fleet *f)
{
	double	 until = clock_mono() + FLEET_CLOSE_DRAIN_MS / 1000.0;

	for (int i = 0; i < f->n; i++) {
		double left = until - clock_mono();

		if (f->nodes[i].fd >= 0 && proto_queue_waiting(&f->nodes[i].q) > 0)
			proto_queue_drain(&f->nodes[i].q, left > 0 ?
			    (int)(left * 1000) : 0);
	}
	for (int i = 0; i < f->n; i++) {
		/* A connect in flight ends within its launcher's timeout. */
		fleet_conn_finish(&f->nodes[i], true, fleet_quiet, NULL);
		fleet_close_node(&f->nodes[i]);
		proto_reader_free(&f->nodes[i].rd);
		json_decref(f->nodes[i].hello);
	}
	for (size_t j = 0; j < sizeof launchers / sizeof launchers[0]; j++) {
		if (launchers[j]->quiesce != NULL)
			launchers[j]->quiesce();
	}
	free(f->nodes);
	memset(f, 0, sizeof *f);
}

struct fleet_node *
fleet_find(struct fleet *f, const char *name)
{
	for (int i = 0; i < f->n; i++) {
		if (strcmp(f->nodes[i].spec->name, name) == 0)
			return &f->nodes[i];
	}
	return NULL;
}

void
fleet_link_why(const struct fleet_node *fn, char *buf, size_t len)
{
	const struct launcher *l = fleet_launcher(fn);

	if (len > 0)
		buf[0] = '\0';
	if (l != NULL && l->why != NULL)
		l->why(fn, buf, len);
}

int
fleet_send(struct fleet_node *fn, const json_t *msg)
{
	int	saved;

	if (fn->fd < 0) {
		errno = ENOTCONN;
		return -1;
	}
	/* Nothing the backend sends an agent is droppable: never 1.  An
	 * agent that closed its end (EPIPE, ECONNRESET) stays open here: the
	 * poll reads its EOF, and the loss of the link is said and acted on
	 * there, with the ranks it held, rather than closed in silence. */
	if (proto_queue_send(&fn->q, msg) < 0) {
		saved = errno;
		if (saved != EINVAL && saved != EPIPE && saved != ECONNRESET)
			fleet_close_node(fn);
		errno = saved;
		return -1;
	}
	return 0;
}

int
fleet_flush(struct fleet_node *fn)
{
	int	saved;

	if (fn->fd < 0 || proto_queue_flush(&fn->q) == 0)
		return 0;
	saved = errno;
	fleet_close_node(fn);
	errno = saved;
	return -1;
}

/*
 * A connect in flight: the launcher runs on its own thread, on a copy of
 * the node, so a host that does not answer (an SSH connect waits up to
 * its timeout) holds up neither the other nodes nor the backend's loop.
 */
struct fleet_conn {
	struct fleet_node	 node;		/* the thread's copy */
	const struct launcher	*l;
	const char		*exe;
	int			 fd;
	char			 err[1024];
	atomic_bool		 done;
	pthread_t		 thread;
};

static void *
fleet_conn_run(void *arg)
{
	struct fleet_conn *c = arg;

	c->fd = c->l->connect(&c->node, c->exe, c->err, sizeof c->err);
	atomic_store(&c->done, true);
	return NULL;
}

static const struct launcher *
fleet_launcher(const struct fleet_node *fn)
{
	for (size_t j = 0; j < sizeof launchers / sizeof launchers[0]; j++) {
		if (launchers[j]->match(fn->spec))
			return launchers[j];
	}
	return NULL;
}

/* Start connecting fn if it is down, due and not already connecting. */
static void
fleet_conn_start(struct fleet *f, struct fleet_node *fn,
    void (*report)(void *, const char *, const char *), void *ctx)
{
	const struct launcher *l;
	struct fleet_conn *c;
	char	 err[256];
	sigset_t all, old;
	int	 rc;

	if (fn->fd >= 0 || fn->conn != NULL || clock_mono() < fn->retry_at)
		return;
	fn->stage = FLEET_DOWN;
	if ((l = fleet_launcher(fn)) == NULL) {
		snprintf(err, sizeof err, "no launcher for host '%s'",
		    fn->spec->host);
		report(ctx, fn->spec->name, err);
		fleet_backoff(fn);
		return;
	}
	c = xcalloc(1, sizeof *c);
	c->node = *fn;
	c->node.hello_sent = false;
	c->l = l;
	c->exe = f->exe;
	c->fd = -1;
	atomic_init(&c->done, false);
	/* Signals stay with the threads that wait for them. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&c->thread, NULL, fleet_conn_run, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		snprintf(err, sizeof err, "pthread_create: %s", strerror(rc));
		report(ctx, fn->spec->name, err);
		free(c);
		fleet_backoff(fn);
		return;
	}
	fn->conn = c;
}

void
fleet_set_why(struct fleet_node *fn, const char *why)
{
	snprintf(fn->why, sizeof fn->why, "%s", why);
}

/*
 * The hello could not be sent: the far end closed already.  An SSH pump
 * (or an agent) says why in an error frame before it closes, and that
 * frame is still in our buffer: it names the cause (hunter missing on
 * the node...), where "hello: Broken pipe" would name only the symptom.
 */
static void
fleet_hello_failed(struct fleet_node *fn, int hello_errno, char *err,
    size_t errlen)
{
	struct proto_reader rd;
	json_t	*msg;
	char	 buf[65536];
	ssize_t	 n;

	snprintf(err, errlen, "hello: %s", strerror(hello_errno));
	proto_reader_init(&rd);
	while ((n = recv(fn->fd, buf, sizeof buf, MSG_DONTWAIT)) > 0 &&
	    proto_reader_feed(&rd, buf, (size_t)n) == 0)
		;
	while (proto_reader_next(&rd, &msg) == 1) {
		const char *why = json_string_value(json_object_get(msg,
		    "reason"));

		if (proto_kind(msg, NULL, 0) == PK_ERROR && why != NULL)
			snprintf(err, errlen, "%s", why);
		json_decref(msg);
	}
	proto_reader_free(&rd);
}

/* Take the result of fn's connect if it is over (or, with wait, once it
 * is): the link and a hello, or the error and a backoff. */
static void
fleet_conn_finish(struct fleet_node *fn, bool wait,
    void (*report)(void *, const char *, const char *), void *ctx)
{
	struct fleet_conn *c = fn->conn;
	char	 err[1100];

	if (c == NULL || (!wait && !atomic_load(&c->done)))
		return;
	pthread_join(c->thread, NULL);
	fn->conn = NULL;
	fn->stage = c->node.stage;
	if (c->fd < 0) {
		fleet_set_why(fn, c->err);
		report(ctx, fn->spec->name, c->err);
		fleet_backoff(fn);
		free(c);
		return;
	}
	fn->fd = c->fd;
	fn->hello_sent = c->node.hello_sent;
	free(c);
	fn->stage = FLEET_LINKED;
	proto_queue_init(&fn->q, fn->fd, 0);
	if (!fn->hello_sent && proto_queue_send_new(&fn->q,
	    proto_hello("backend", NULL)) != 0) {
		fleet_hello_failed(fn, errno, err, sizeof err);
		fleet_close_node(fn);
		fleet_set_why(fn, err);
		report(ctx, fn->spec->name, err);
		return;
	}
	fn->last_seen = clock_mono();
}

static int
fleet_up(const struct fleet *f)
{
	int	 up = 0;

	for (int i = 0; i < f->n; i++)
		up += f->nodes[i].fd >= 0;
	return up;
}

int
fleet_connect(struct fleet *f, void (*report)(void *, const char *,
    const char *), void *ctx)
{
	for (int i = 0; i < f->n; i++)
		fleet_conn_start(f, &f->nodes[i], report, ctx);
	for (int i = 0; i < f->n; i++)
		fleet_conn_finish(&f->nodes[i], true, report, ctx);
	return fleet_up(f);
}

int
fleet_connect_async(struct fleet *f, void (*report)(void *, const char *,
    const char *), void *ctx)
{
	for (int i = 0; i < f->n; i++) {
		fleet_conn_finish(&f->nodes[i], false, report, ctx);
		fleet_conn_start(f, &f->nodes[i], report, ctx);
	}
	return fleet_up(f);
}
