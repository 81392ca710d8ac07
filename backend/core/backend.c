/*
 * backend.c: the backend's life: open (lock, journal, console.sock,
 * agents) and close, the loop thread and its command queue, and what
 * front ends read: jobs, nodes, events.  Jobs are in backend-jobs.c, the
 * loop in backend-loop.c, the frames from the agents in backend-poll.c.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/lock.h"
#include "lib/net.h"
#include "lib/statedir.h"
#include "lib/utf8.h"
#include "lib/xmalloc.h"
#include "backend/proto/proto.h"
#include "backend/core/backend-internal.h"
#include "backend/core/metrics-http.h"

void
backend_emit(struct backend *b, const json_t *msg)
{
	if (msg == NULL)
		return;
	if (proto_kind(msg, NULL, 0) == PK_EVENT) {
		if (json_array_size(b->events) >= BACKEND_EVENTS_MAX)
			json_array_remove(b->events, 0);
		json_array_append_new(b->events, json_deep_copy(msg));
	}
	if (b->obs.on_frame != NULL)
		b->obs.on_frame(b->obs.ctx, msg);
}

json_t *
backend_event_new(struct backend *b, const char *job, enum event_kind kind,
    int rank, const char *node, const char *reason)
{
	char	 err[128];
	json_t	*ev;

	(void)b;
	ev = proto_pack(err, sizeof err, "{s:s, s:s, s:s, s:i, s:s, s:s, s:s}",
	    "t", MSG_EVENT, "job", job ? job : "", "kind",
	    event_kind_name(kind), "rank", rank, "node", node ? node : "",
	    "reason", reason, "source", "backend");
	if (ev == NULL)
		fprintf(stderr, "hunter: a %s event: %s\n", event_kind_name(kind),
		    err);
	return ev;
}

/* Every event of a job, the backend's and its ranks', names the phase
 * the job is in after it ("job_phase"), and counts towards the job's
 * events by kind. */
void
backend_event_note(struct backend *b, json_t *ev)
{
	const char	*name = json_string_value(json_object_get(ev, "job"));
	struct job_state *j = name != NULL && *name != '\0' ?
	    backend_job(b, name) : NULL;

	if (j == NULL)
		return;
	j->total.events[event_kind_of(ev)]++;
	json_object_set_new(ev, "job_phase", json_string(job_phase_name(
	    j->phase)));
}

void
backend_event_raise(struct backend *b, json_t *ev)
{
	backend_event_note(b, ev);
	if (b->journal != NULL)		/* durable with the next decision */
		journal_append_lazy(b->journal, ev);
	backend_emit(b, ev);
}

/* An event of the backend's own: journalled, then shown. */
void
backend_event(struct backend *b, const char *job, enum event_kind kind,
    int rank, const char *node, const char *fmt, ...)
{
	char	 reason[1024];
	va_list	 ap;
	json_t	*ev;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof reason, fmt, ap);
	va_end(ap);
	/* A reason may quote a peer or a file and was cut to the buffer:
	 * on a character boundary, stray bytes as '?', or jansson refuses
	 * it.  Job, kind and node are names the specs restrict to ASCII. */
	utf8_fix(reason, sizeof reason);
	if ((ev = backend_event_new(b, job, kind, rank, node, reason)) == NULL)
		return;
	backend_event_raise(b, ev);
	json_decref(ev);
}

static void
backend_store_reply(void *ctx, int link, json_t *reply)
{
	struct backend	*b = ctx;

	if (link >= 0 && link < b->fleet.n)
		fleet_send(&b->fleet.nodes[link], reply);
	json_decref(reply);
}

void
backend_report_node(void *ctx, const char *node, const char *err)
{
	struct backend	 *b = ctx;
	struct fleet_node *fn = fleet_find(&b->fleet, node);

	if (fn != NULL && fn->bound)
		backend_node_down(b, (int)(fn - b->fleet.nodes), err);
	else
		backend_event(b, NULL, EV_REFUSED, -1, node, "node %s: %s", node,
		    err);
}

struct job_state *
backend_job(struct backend *b, const char *name)
{
	for (int i = b->njobs - 1; i >= 0; i--) {
		if (name == NULL || strcmp(b->jobs[i].name, name) == 0)
			return &b->jobs[i];
	}
	return NULL;
}

const char *
backend_state_dir(const struct backend *b)
{
	return b->dir;
}

static int
backend_take_lock(struct backend *b, bool takeover, char *err, size_t errlen)
{
	char	 path[PATH_MAX + 16], e[256];
	pid_t	 holder;
	int	 fd;

	if ((b->lock_fd = lock_take(b->dir, &holder)) >= 0)
		return 0;
	if (errno != EWOULDBLOCK) {
		snprintf(err, errlen, "%s/backend.lock: %s", b->dir, strerror(errno));
		return -1;
	}
	if (!takeover) {
		snprintf(err, errlen, "another hunter (pid %ld) is attached to "
		    "%s; use --takeover to detach it and attach here",
		    (long)holder, b->dir);
		return -1;
	}
	snprintf(path, sizeof path, "%s/console.sock", b->dir);
	if ((fd = net_connect_unix(path, e, sizeof e)) >= 0) {
		proto_send_new(fd, json_pack("{s:s, s:s}", "t", MSG_CMD,
		    "cmd", "detach"));
		close(fd);
	}
	if ((b->lock_fd = lock_wait(b->dir, 10000, &holder)) < 0) {
		snprintf(err, errlen, "hunter pid %ld did not detach from %s",
		    (long)holder, b->dir);
		return -1;
	}
	return 0;
}

/* A link per node (an SSH node's takes three fds: its socket, and both
 * ends of the socketpair to its pump), plus the state directory's own:
 * the default soft limit of 1024 would fail nodes silently past it. */
static void
backend_fd_limit(struct backend *b, const struct cluster_spec *c)
{
	long	 want = 3L * c->n_nodes + 64 + MAX_CONSOLE_PEERS;
	long	 got = net_raise_nofile(want);

	if (got >= 0 && got < want)
		backend_event(b, NULL, EV_REFUSED, -1, NULL, "the cluster has %d "
		    "nodes, and this process may open %ld files (ulimit -n; "
		    "%ld wanted): nodes past that fail to connect with \"Too "
		    "many open files\"", c->n_nodes, got, want);
}

void
backend_crash_point(const char *point)
{
	const char	*at = getenv("HUNTER_CRASH_AT");

	if (at != NULL && strcmp(at, point) == 0)
		raise(SIGKILL);
}

/* The journal could not take a record (a full disk), or can again. */
static void
backend_journal_trouble(void *ctx, const char *what)
{
	backend_event(ctx, NULL, EV_WARNING, -1, NULL, "%s", what);
}

struct backend *
backend_open(const struct backend_opts *o, char *err, size_t errlen)
{
	struct backend	*b = xcalloc(1, sizeof *b);
	char		 path[PATH_MAX + 32];

	b->lock_fd = b->console_fd = -1;
	pthread_mutex_init(&b->mu, NULL);
	pthread_mutex_init(&b->qmu, NULL);
	b->events = json_array();
	b->queue = json_array();
	if (backend_loop_open(b) != 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		goto fail;
	}
	b->obs = o->obs;
	b->cluster = o->cluster;
	if (o->state_dir != NULL)
		snprintf(b->dir, sizeof b->dir, "%s", o->state_dir);
	else if (statedir_path(b->dir, sizeof b->dir) != 0) {
		snprintf(err, errlen, "no state directory: set HUNTER_STATE_DIR");
		goto fail;
	}
	if (statedir_make(b->dir, err, errlen) != 0)
		goto fail;
	if (backend_take_lock(b, o->takeover, err, errlen) != 0)
		goto fail;
	{
		struct user_config	 uc;
		struct spec_errors	 errs = { 0 };

		/* config.yaml's problems are its front end's to print. */
		spec_load_config(&uc, &errs);
		spec_errors_free(&errs);
		if (sched_open(b, &o->cluster->sched, &uc.sched, err,
		    errlen) != 0)
			goto fail;
	}
	snprintf(path, sizeof path, "%s/journal.jsonl", b->dir);
	if ((b->journal = journal_open(path, err, errlen)) == NULL)
		goto fail;
	journal_on_trouble(b->journal, backend_journal_trouble, b);
	/* For tests: rotate a journal at this size (bytes). */
	if (getenv("HUNTER_JOURNAL_MAX_BYTES") != NULL)
		journal_set_limit(b->journal, atoll(getenv(
		    "HUNTER_JOURNAL_MAX_BYTES")));
	if (o->metrics != NULL && (b->metrics = metrics_http_open(o->metrics,
	    evloop_wake_fd(b->loop), err, errlen)) == NULL)
		goto fail;
	snprintf(path, sizeof path, "%s/console.sock", b->dir);
	unlink(path);	/* we hold the lock: any socket there is stale */
	if ((b->console_fd = net_listen_unix(path, err, errlen)) < 0)
		goto fail;
	b->store = store_create(backend_store_reply, b);
	b->placing = *o->cluster;
	b->placing.nodes = xcalloc((size_t)o->cluster->n_nodes + 1,
	    sizeof *b->placing.nodes);
	memcpy(b->placing.nodes, o->cluster->nodes, (size_t)o->cluster->n_nodes *
	    sizeof *b->placing.nodes);
	b->used = xcalloc((size_t)o->cluster->n_nodes, sizeof *b->used);
	backend_fd_limit(b, o->cluster);
	fleet_init(&b->fleet, o->cluster, b->dir);
	b->nodes = xcalloc((size_t)b->fleet.n, sizeof *b->nodes);
	for (int i = 0; i < b->fleet.n; i++)
		b->nodes[i].spec = b->fleet.nodes[i].spec;
	fleet_connect(&b->fleet, backend_report_node, b);
	if (b->metrics != NULL)
		backend_event(b, NULL, EV_METRICS, -1, NULL, "Prometheus metrics "
		    "on %s", metrics_http_url(b->metrics));
	return b;
fail:
	backend_close(b);
	return NULL;
}

void
backend_close(struct backend *b)
{
	char	 path[PATH_MAX + 32];

	if (b == NULL)
		return;
	if (b->threaded) {
		pthread_mutex_lock(&b->mu);
		b->quit = true;
		pthread_mutex_unlock(&b->mu);
		evloop_wake(b->loop);
		pthread_join(b->thread, NULL);
	}
	if (b->metrics != NULL) {
		bool	 over = b->njobs > 0;

		for (int i = 0; i < b->njobs; i++)
			over &= job_done(&b->jobs[i]);
		/* The final values, for a scraper to take before we go. */
		backend_prom_publish(b);
		metrics_http_close(b->metrics, over);
	}
	while (b->npeers > 0)
		backend_console_close(b, b->peers[0]);
	if (b->console_fd >= 0) {
		close(b->console_fd);
		snprintf(path, sizeof path, "%s/console.sock", b->dir);
		unlink(path);
	}
	for (int i = 0; b->nodes != NULL && i < b->fleet.n; i++)
		backend_node_free(&b->nodes[i]);
	if (b->fleet.nodes != NULL)
		fleet_free(&b->fleet);
	for (int i = 0; i < b->njobs; i++) {
		free(b->jobs[i].yaml);
		free(b->jobs[i].ranks);
		free(b->jobs[i].restart.node_of);
		json_decref(b->jobs[i].epochs);
		free(b->jobs[i].prog);
		json_decref(b->jobs[i].evals);
		backend_series_close(&b->jobs[i]);
	}
	free(b->jobs);
	free(b->nodes);
	json_decref(b->events);
	json_decref(b->queue);
	backend_loop_free(b);
	pthread_mutex_destroy(&b->mu);
	pthread_mutex_destroy(&b->qmu);
	free(b->used);
	free(b->placing.nodes);
	store_free(b->store);
	journal_close(b->journal);
	if (b->lock_fd >= 0)
		close(b->lock_fd);
	free(b);
}

static void *
backend_main(void *arg)
{
	struct backend	*b = arg;
	bool		 quit = false;

	while (!quit) {
		backend_loop_once(b, 250);
		pthread_mutex_lock(&b->mu);
		quit = b->quit;
		pthread_mutex_unlock(&b->mu);
	}
	return NULL;
}

int
backend_start(struct backend *b)
{
	if (pthread_create(&b->thread, NULL, backend_main, b) != 0)
		return -1;
	b->threaded = true;
	return 0;
}

void
backend_lock(struct backend *b)
{
	pthread_mutex_lock(&b->mu);
}

int
backend_trylock(struct backend *b)
{
	return pthread_mutex_trylock(&b->mu) == 0 ? 0 : -1;
}

void
backend_unlock(struct backend *b)
{
	pthread_mutex_unlock(&b->mu);
}

void
backend_post(struct backend *b, json_t *cmd)
{
	pthread_mutex_lock(&b->qmu);
	json_array_append_new(b->queue, cmd);
	pthread_mutex_unlock(&b->qmu);
	evloop_wake(b->loop);
}

/* Run the posted commands; called by the loop with the state lock held. */
void
backend_run_commands(struct backend *b)
{
	json_t	*q, *cmd;
	size_t	 i;

	pthread_mutex_lock(&b->qmu);
	q = b->queue;
	b->queue = json_array();
	pthread_mutex_unlock(&b->qmu);
	json_array_foreach(q, i, cmd)
		backend_command(b, cmd);
	json_decref(q);
}

bool
backend_detached(struct backend *b)
{
	return b->detach;
}

int
backend_njobs(struct backend *b)
{
	return b->njobs;
}

struct job_state *
backend_job_at(struct backend *b, int i)
{
	return i >= 0 && i < b->njobs ? &b->jobs[i] : NULL;
}

int
backend_nnodes(struct backend *b)
{
	return b->fleet.n;
}

struct node_view *
backend_node_at(struct backend *b, int i)
{
	return i >= 0 && i < b->fleet.n ? &b->nodes[i] : NULL;
}

const json_t *
backend_events(struct backend *b)
{
	return b->events;
}
