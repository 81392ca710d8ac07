/*
 * backend.c: the backend's life: open (lock, journal, console.sock,
 * agents), submit and attach, and the poll loop that turns frames from
 * the agents into the state model and the observer's feed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backend/core/clock.h"
#include "backend/core/backend.h"
#include "backend/core/lock.h"
#include "backend/core/net.h"
#include "backend/core/statedir.h"
#include "backend/core/xmalloc.h"
#include "backend/proto/proto.h"
#include "backend/sched/place.h"

#define MAX_CONSOLE_PEERS 16

struct console_peer {
	int		 fd;
	struct proto_reader rd;
};

struct backend {
	char		 dir[PATH_MAX];
	int		 lock_fd;
	struct journal	*journal;
	struct store	*store;
	struct fleet	 fleet;
	const struct cluster_spec *cluster;
	int		*used;		/* slots taken per node */
	struct job_state *jobs;
	int		 njobs;
	struct backend_observer obs;
	int		 console_fd;
	struct console_peer peers[MAX_CONSOLE_PEERS];
	int		 npeers;
	bool		 detach;
	double		 next_reconnect;
};

static void
backend_emit(struct backend *b, const json_t *msg)
{
	if (b->obs.on_frame != NULL)
		b->obs.on_frame(b->obs.ctx, msg);
}

/* An event of the backend's own: journalled, then shown. */
static void
backend_event(struct backend *b, const char *job, const char *kind, int rank,
    const char *node, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static void
backend_event(struct backend *b, const char *job, const char *kind, int rank,
    const char *node, const char *fmt, ...)
{
	char	 reason[1024];
	va_list	 ap;
	json_t	*ev;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof reason, fmt, ap);
	va_end(ap);
	ev = json_pack("{s:s, s:s, s:s, s:i, s:s, s:s, s:s}", "t", MSG_EVENT,
	    "job", job ? job : "", "kind", kind, "rank", rank,
	    "node", node ? node : "", "reason", reason, "source", "backend");
	if (b->journal != NULL)
		journal_append(b->journal, ev);
	backend_emit(b, ev);
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

static void
backend_report_node(void *ctx, const char *node, const char *err)
{
	backend_event(ctx, NULL, "refused", -1, node, "node %s: %s", node, err);
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

struct backend *
backend_open(const struct backend_opts *o, char *err, size_t errlen)
{
	struct backend	*b = xcalloc(1, sizeof *b);
	char		 path[PATH_MAX + 32];

	b->lock_fd = b->console_fd = -1;
	b->obs = o->obs;
	b->cluster = o->cluster;
	if (o->state_dir != NULL)
		snprintf(b->dir, sizeof b->dir, "%s", o->state_dir);
	else if (statedir_path(b->dir, sizeof b->dir) != 0) {
		snprintf(err, errlen, "no state directory: set HUNTER_STATE_DIR");
		goto fail;
	}
	if (mkdir_p(b->dir, 0700) != 0 || chmod(b->dir, 0700) != 0) {
		snprintf(err, errlen, "%s: %s", b->dir, strerror(errno));
		goto fail;
	}
	if (backend_take_lock(b, o->takeover, err, errlen) != 0)
		goto fail;
	snprintf(path, sizeof path, "%s/journal.jsonl", b->dir);
	if ((b->journal = journal_open(path, err, errlen)) == NULL)
		goto fail;
	snprintf(path, sizeof path, "%s/console.sock", b->dir);
	unlink(path);	/* we hold the lock: any socket there is stale */
	if ((b->console_fd = net_listen_unix(path, err, errlen)) < 0)
		goto fail;
	b->store = store_create(backend_store_reply, b);
	b->used = xcalloc((size_t)o->cluster->n_nodes, sizeof *b->used);
	fleet_init(&b->fleet, o->cluster, b->dir);
	fleet_connect(&b->fleet, backend_report_node, b);
	return b;
fail:
	backend_close(b);
	return NULL;
}

/* Milliseconds since the epoch: unique enough for launches that the same
 * state directory's lock already serialises. */
static long long
backend_run_id(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct job_state *
backend_new_job(struct backend *b, const char *name)
{
	struct job_state *j;

	b->jobs = xreallocarray(b->jobs, (size_t)b->njobs + 1, sizeof *b->jobs);
	j = &b->jobs[b->njobs++];
	memset(j, 0, sizeof *j);
	snprintf(j->name, sizeof j->name, "%s", name);
	snprintf(j->state, sizeof j->state, "running");
	return j;
}

static char *
read_text(const char *path, char *err, size_t errlen)
{
	FILE	*f = fopen(path, "r");
	char	*buf;
	long	 n;

	if (f == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	if (n < 0 || n > (1 << 20)) {
		snprintf(err, errlen, "%s: not a job file (%ld bytes)", path, n);
		fclose(f);
		return NULL;
	}
	buf = xmalloc((size_t)n + 1);
	n = (long)fread(buf, 1, (size_t)n, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void
backend_launch_rank(struct backend *b, struct job_state *j, int r,
    const struct submit_opts *so)
{
	struct fleet_node *fn = &b->fleet.nodes[j->ranks[r].node];
	char		 ckdir[PATH_MAX + 64];
	json_t		*m;

	if (j->spec.checkpoint.dir[0] != '\0')
		snprintf(ckdir, sizeof ckdir, "%s", j->spec.checkpoint.dir);
	else
		snprintf(ckdir, sizeof ckdir, "%s/checkpoints/%s", b->dir, j->name);
	m = json_pack("{s:s, s:s, s:s, s:i, s:i, s:i, s:s, s:s, s:s, s:s, "
	    "s:b, s:i, s:i, s:i, s:i}", "t", MSG_CMD, "cmd", "launch",
	    "job", j->name, "rank", r, "world", j->world,
	    "generation", j->generation, "node", fn->spec->name,
	    "addr", fn->addr, "spec_file", j->spec_file, "spec_yaml", j->yaml,
	    "resume", so->resume, "stop_after_epochs", so->stop_after_epochs,
	    "trace_steps", so->trace_steps, "slow_data_ms", so->slow_data_ms,
	    "timeout_ms", (int)(j->spec.policy.heartbeat_timeout_s * 1000));
	json_object_set_new(m, "checkpoint_dir", json_string(ckdir));
	json_object_set_new(m, "run", json_integer(j->run));
	if (fleet_send(fn, m) != 0) {
		j->ranks[r].status = RANK_FAILED;
		backend_event(b, j->name, "failed", r, fn->spec->name,
		    "cannot reach the agent of %s", fn->spec->name);
	} else
		j->ranks[r].status = RANK_RUNNING;
	json_decref(m);
}

int
backend_submit(struct backend *b, const char *spec_file,
    const struct submit_opts *so, char *err, size_t errlen)
{
	struct spec_errors errs = { 0 };
	struct job_state *j, *old;
	struct job_spec	 spec;
	int		*node_of;
	char		*yaml;
	json_t		*rec, *placement;

	if ((yaml = read_text(spec_file, err, errlen)) == NULL)
		return -1;
	if (spec_parse_job(spec_file, yaml, strlen(yaml), &spec, &errs) != 0) {
		snprintf(err, errlen, "%s:%d:%d: %s%s", errs.v[0].file,
		    errs.v[0].line, errs.v[0].col, errs.v[0].msg, errs.n > 1 ?
		    " (and more: hunter validate lists them all)" : "");
		spec_errors_free(&errs);
		free(yaml);
		return -1;
	}
	if ((old = backend_job(b, spec.name)) != NULL && !old->done) {
		snprintf(err, errlen, "job %s is already running; `hunter run "
		    "--attach` follows it", spec.name);
		free(yaml);
		return -1;
	}
	node_of = xcalloc((size_t)spec.resources.ranks, sizeof *node_of);
	if (place_job(b->cluster, &spec, b->used, node_of, err, errlen) != 0) {
		backend_event(b, spec.name, "refused", -1, NULL, "%s", err);
		free(node_of);
		free(yaml);
		return -1;
	}
	j = backend_new_job(b, spec.name);
	j->spec = spec;
	j->yaml = yaml;
	snprintf(j->spec_file, sizeof j->spec_file, "%s", spec_file);
	j->world = spec.resources.ranks;
	j->run = backend_run_id();
	j->ranks = xcalloc((size_t)j->world, sizeof *j->ranks);
	placement = json_array();
	for (int r = 0; r < j->world; r++) {
		j->ranks[r].node = node_of[r];
		json_array_append_new(placement,
		    json_string(b->cluster->nodes[node_of[r]].name));
	}
	free(node_of);
	rec = json_pack("{s:s, s:s, s:s, s:s, s:i, s:i, s:I, s:O}", "t", "job",
	    "job", j->name, "spec_file", spec_file, "yaml", yaml,
	    "world", j->world, "generation", j->generation,
	    "run", (json_int_t)j->run, "placement", placement);
	journal_append(b->journal, rec);
	json_decref(rec);
	{
		char	*names = json_dumps(placement, JSON_COMPACT);
		backend_event(b, j->name, "placed", -1, NULL, "%d ranks on %s",
		    j->world, names);
		free(names);
	}
	json_decref(placement);
	for (int r = 0; r < j->world; r++)
		backend_launch_rank(b, j, r, so);
	return 0;
}

/* Rebuild jobs from the journal: the last "job" record of each name that
 * has no "job_end" after it is still running. */
static void
backend_replay_record(void *ctx, json_t *rec)
{
	struct backend	*b = ctx;
	const char	*t = json_string_value(json_object_get(rec, "t"));
	const char	*name = json_string_value(json_object_get(rec, "job"));
	struct job_state *j;
	struct spec_errors errs = { 0 };
	json_t		*pl, *v;
	size_t		 i;

	if (t == NULL || name == NULL)
		return;
	if (strcmp(t, "job_end") == 0) {
		if ((j = backend_job(b, name)) != NULL)
			j->done = true;
		return;
	}
	if (strcmp(t, "job") != 0)
		return;
	j = backend_new_job(b, name);
	j->yaml = xstrdup(json_string_value(json_object_get(rec, "yaml")) ?: "");
	snprintf(j->spec_file, sizeof j->spec_file, "%s",
	    json_string_value(json_object_get(rec, "spec_file")) ?: "");
	if (spec_parse_job(j->spec_file, j->yaml, strlen(j->yaml), &j->spec,
	    &errs) != 0)
		spec_job_defaults(&j->spec);
	spec_errors_free(&errs);
	j->world = (int)json_integer_value(json_object_get(rec, "world"));
	j->generation = (int)json_integer_value(json_object_get(rec, "generation"));
	j->run = json_integer_value(json_object_get(rec, "run"));
	if (j->world <= 0 || j->world > 65536)
		j->world = 1;
	j->ranks = xcalloc((size_t)j->world, sizeof *j->ranks);
	pl = json_object_get(rec, "placement");
	json_array_foreach(pl, i, v) {
		struct fleet_node *fn = fleet_find(&b->fleet, json_string_value(v) ?: "");

		if (i < (size_t)j->world && fn != NULL) {
			j->ranks[i].node = (int)(fn - b->fleet.nodes);
			j->ranks[i].status = RANK_RUNNING;
		}
	}
}

int
backend_attach(struct backend *b, const char *name, char *err, size_t errlen)
{
	char		 path[PATH_MAX + 32], why[512] = "";
	int		 bad;
	struct job_state *j;

	snprintf(path, sizeof path, "%s/journal.jsonl", b->dir);
	if (journal_replay(path, backend_replay_record, b, &bad, why,
	    sizeof why) < 0) {
		snprintf(err, errlen, "%s", why);
		return -1;
	}
	if (bad > 0)
		backend_event(b, NULL, "restarted", -1, NULL, "%s (%d line%s)",
		    why, bad, bad == 1 ? "" : "s");
	for (int i = b->njobs - 1; i >= 0; i--) {
		j = &b->jobs[i];
		if (!j->done && (name == NULL || strcmp(j->name, name) == 0)) {
			/* Older records of the same name are history. */
			for (int k = 0; k < i; k++) {
				if (strcmp(b->jobs[k].name, j->name) == 0)
					b->jobs[k].done = true;
			}
			backend_event(b, j->name, "restarted", -1, NULL,
			    "re-attached to %s (%d ranks)", j->name, j->world);
			return 0;
		}
	}
	snprintf(err, errlen, "no running job%s%s in %s", name ? " named " : "",
	    name ? name : "", b->dir);
	return -1;
}

/* The job and rank a frame from an agent is about, if it is one of ours. */
static struct job_state *
backend_frame_job(struct backend *b, const json_t *msg, int *rank)
{
	const char	*name = json_string_value(json_object_get(msg, "job"));
	json_t		*r = json_object_get(msg, "rank");
	struct job_state *j;

	if (name == NULL || (j = backend_job(b, name)) == NULL || j->done ||
	    json_integer_value(json_object_get(msg, "run")) != j->run)
		return NULL;
	*rank = json_is_integer(r) ? (int)json_integer_value(r) : -1;
	if (*rank >= j->world)
		return NULL;
	return j;
}

static void
backend_job_done(struct backend *b, struct job_state *j)
{
	const char	*st = "failed";
	json_t		*rec;

	for (int r = 0; r < j->world; r++) {
		if (j->ranks[r].status == RANK_RUNNING ||
		    j->ranks[r].status == RANK_PENDING)
			return;
	}
	if (j->summary != NULL && json_string_value(json_object_get(j->summary,
	    "state")) != NULL)
		st = json_string_value(json_object_get(j->summary, "state"));
	for (int r = 0; r < j->world; r++) {
		if (j->ranks[r].status == RANK_FAILED)
			st = "failed";
	}
	snprintf(j->state, sizeof j->state, "%s", st);
	j->done = true;
	for (int r = 0; r < j->world; r++) {
		if (b->used[j->ranks[r].node] > 0)
			b->used[j->ranks[r].node]--;
	}
	rec = json_pack("{s:s, s:s, s:s}", "t", "job_end", "job", j->name,
	    "state", j->state);
	journal_append(b->journal, rec);
	json_decref(rec);
}

static void
backend_rank_exit(struct backend *b, struct job_state *j, int r,
    const json_t *msg)
{
	struct rank_state *rs = &j->ranks[r];
	json_t		*sig = json_object_get(msg, "signal");
	json_int_t	 code = json_integer_value(json_object_get(msg, "code"));
	const char	*node = b->fleet.nodes[rs->node].spec->name;

	if (rs->status == RANK_EXITED || rs->status == RANK_FAILED)
		return;
	if (json_is_integer(sig)) {
		snprintf(rs->exit_reason, sizeof rs->exit_reason,
		    "killed by signal %d", (int)json_integer_value(sig));
	} else if (code != 0) {
		snprintf(rs->exit_reason, sizeof rs->exit_reason,
		    "exited with status %d", (int)code);
	} else {
		rs->status = RANK_EXITED;
		backend_job_done(b, j);
		return;
	}
	rs->status = RANK_FAILED;
	backend_event(b, j->name, "failed", r, node, "rank %d on %s %s", r,
	    node, rs->exit_reason);
	backend_job_done(b, j);
}

static void
backend_rank_metrics(struct job_state *j, int r, const json_t *m)
{
	struct rank_state *rs = &j->ranks[r];

	rs->step = (long)json_integer_value(json_object_get(m, "step"));
	rs->epoch = (int)json_integer_value(json_object_get(m, "epoch"));
	rs->loss = json_number_value(json_object_get(m, "loss"));
	rs->samples_per_s = json_number_value(json_object_get(m, "samples_per_s"));
	rs->step_ms = json_number_value(json_object_get(m, "step_ms"));
	rs->comm_ms = json_number_value(json_object_get(m, "comm_ms"));
	rs->data_wait_ms = json_number_value(json_object_get(m, "data_wait_ms"));
	rs->rss = (long)json_integer_value(json_object_get(m, "rss"));
	rs->heartbeat = json_number_value(json_object_get(m, "heartbeat"));
}

/* The agent's hello: which of our ranks still run there. */
static void
backend_agent_hello(struct backend *b, struct fleet_node *fn, json_t *msg)
{
	json_t		*w;
	size_t		 i;

	json_decref(fn->hello);
	fn->hello = json_incref(msg);
	fn->up = true;
	json_array_foreach(json_object_get(msg, "workers"), i, w) {
		int		 r;
		struct job_state *j = backend_frame_job(b, w, &r);

		if (j != NULL && r >= 0)
			j->ranks[r].pid = (long)json_integer_value(
			    json_object_get(w, "pid"));
	}
}

static void
backend_agent_frame(struct backend *b, struct fleet_node *fn, json_t *msg)
{
	struct job_state *j;
	int		 r = -1;

	if (proto_is(msg, MSG_HELLO)) {
		backend_agent_hello(b, fn, msg);
		return;
	}
	if (proto_is(msg, MSG_STORE)) {
		store_handle(b->store, (int)(fn - b->fleet.nodes), msg, clock_mono());
		return;
	}
	if (proto_is(msg, MSG_METRICS) && json_object_get(msg, "job") == NULL) {
		backend_emit(b, msg);	/* node metrics */
		return;
	}
	if ((j = backend_frame_job(b, msg, &r)) == NULL)
		return;			/* another or an older job's */
	if (proto_is(msg, MSG_METRICS) && r >= 0)
		backend_rank_metrics(j, r, msg);
	else if (proto_is(msg, MSG_SUMMARY)) {
		json_decref(j->summary);
		j->summary = json_incref(msg);
	} else if (proto_is(msg, MSG_EXIT) && r >= 0) {
		backend_rank_exit(b, j, r, msg);
		return;
	} else if (proto_is(msg, MSG_EVENT)) {
		json_t *copy = json_deep_copy(msg);
		journal_append(b->journal, copy);
		json_decref(copy);
	}
	backend_emit(b, msg);
}

static void
backend_node_input(struct backend *b, struct fleet_node *fn)
{
	json_t	*msg;
	ssize_t	 n;
	int	 rc;

	n = proto_reader_fill(&fn->rd, fn->fd);
	fn->last_seen = clock_mono();
	while ((rc = proto_reader_next(&fn->rd, &msg)) == 1) {
		backend_agent_frame(b, fn, msg);
		json_decref(msg);
	}
	if (rc < 0 || n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		store_drop_link(b->store, (int)(fn - b->fleet.nodes));
		backend_event(b, NULL, "failover", -1, fn->spec->name,
		    "lost the link to the agent of %s: %s; reconnecting",
		    fn->spec->name, rc < 0 ? fn->rd.err : n == 0 ?
		    "connection closed" : strerror(errno));
		fleet_close_node(fn);
	}
}

static void
backend_console_input(struct backend *b, int i)
{
	struct console_peer *p = &b->peers[i];
	json_t		*msg;
	ssize_t		 n = proto_reader_fill(&p->rd, p->fd);
	int		 rc;

	while ((rc = proto_reader_next(&p->rd, &msg)) == 1) {
		const char *cmd = json_string_value(json_object_get(msg, "cmd"));

		if (proto_is(msg, MSG_CMD) && cmd != NULL &&
		    strcmp(cmd, "detach") == 0)
			b->detach = true;
		else if (proto_is(msg, MSG_CMD) && cmd != NULL &&
		    strcmp(cmd, "stop") == 0)
			backend_stop_job(b, json_string_value(json_object_get(msg,
			    "job")));
		else
			proto_send_new(p->fd, json_pack("{s:s, s:s}", "t",
			    MSG_ERROR, "reason", "unknown command"));
		json_decref(msg);
	}
	if (rc < 0 || n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		close(p->fd);
		proto_reader_free(&p->rd);
		b->peers[i] = b->peers[--b->npeers];
	}
}

int
backend_poll(struct backend *b, int timeout_ms)
{
	struct pollfd	 pfd[1 + MAX_CONSOLE_PEERS + 1024];
	int		 map[1024], n = 0, nn = 0, np;
	double		 now = clock_mono();

	if (now >= b->next_reconnect) {
		for (int i = 0; i < b->fleet.n; i++) {
			if (b->fleet.nodes[i].fd < 0) {
				fleet_connect(&b->fleet, backend_report_node, b);
				break;
			}
		}
		b->next_reconnect = now + 1.0;
	}
	pfd[n++] = (struct pollfd){ .fd = b->console_fd, .events = POLLIN };
	np = b->npeers;
	for (int i = 0; i < np; i++)
		pfd[n++] = (struct pollfd){ .fd = b->peers[i].fd, .events = POLLIN };
	for (int i = 0; i < b->fleet.n && nn < 1024; i++) {
		if (b->fleet.nodes[i].fd < 0)
			continue;
		map[nn++] = i;
		pfd[n++] = (struct pollfd){ .fd = b->fleet.nodes[i].fd,
		    .events = POLLIN };
	}
	if (poll(pfd, (nfds_t)n, timeout_ms) < 0 && errno != EINTR)
		return 0;
	for (int i = 0; i < nn; i++) {
		if (pfd[1 + np + i].revents != 0)
			backend_node_input(b, &b->fleet.nodes[map[i]]);
	}
	for (int i = np - 1; i >= 0; i--) {
		if (pfd[1 + i].revents != 0)
			backend_console_input(b, i);
	}
	if ((pfd[0].revents & POLLIN) && b->npeers < MAX_CONSOLE_PEERS) {
		int fd = accept4(b->console_fd, NULL, NULL, SOCK_CLOEXEC);

		if (fd >= 0) {
			b->peers[b->npeers].fd = fd;
			proto_reader_init(&b->peers[b->npeers].rd);
			b->npeers++;
		}
	}
	store_tick(b->store, clock_mono());
	return b->detach ? -1 : 0;
}

void
backend_stop_job(struct backend *b, const char *name)
{
	struct job_state *j = backend_job(b, name);
	json_t		*m;

	if (j == NULL || j->done)
		return;
	m = json_pack("{s:s, s:s, s:s}", "t", MSG_CMD, "cmd", "stop", "job",
	    j->name);
	for (int i = 0; i < b->fleet.n; i++)
		fleet_send(&b->fleet.nodes[i], m);
	json_decref(m);
	backend_event(b, j->name, "checkpoint", -1, NULL,
	    "stop requested: every rank checkpoints at the same step and ends");
}

void
backend_close(struct backend *b)
{
	char	 path[PATH_MAX + 32];

	if (b == NULL)
		return;
	for (int i = 0; i < b->npeers; i++) {
		close(b->peers[i].fd);
		proto_reader_free(&b->peers[i].rd);
	}
	if (b->console_fd >= 0) {
		close(b->console_fd);
		snprintf(path, sizeof path, "%s/console.sock", b->dir);
		unlink(path);
	}
	if (b->fleet.nodes != NULL)
		fleet_free(&b->fleet);
	for (int i = 0; i < b->njobs; i++) {
		free(b->jobs[i].yaml);
		free(b->jobs[i].ranks);
		json_decref(b->jobs[i].summary);
	}
	free(b->jobs);
	free(b->used);
	store_free(b->store);
	journal_close(b->journal);
	if (b->lock_fd >= 0)
		close(b->lock_fd);
	free(b);
}
