/*
 * backend-poll.c: frames from the agents into the state model and the
 * observer's feed, store requests, a lost link; the loop that reads them
 * is backend-loop.c's, console.sock's clients are backend-console.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/clock.h"
#include "backend/proto/proto.h"
#include "backend/core/backend-internal.h"
#include "backend/core/backend-program.h"

struct job_state *
backend_frame_job(struct backend *b, const json_t *msg, int *rank)
{
	const char	*name = json_string_value(json_object_get(msg, "job"));
	json_t		*r = json_object_get(msg, "rank");
	struct job_state *j;

	json_t		*gen = json_object_get(msg, "generation");

	if (name == NULL || (j = backend_job(b, name)) == NULL || job_done(j) ||
	    json_integer_value(json_object_get(msg, "run")) != j->run ||
	    (json_is_integer(gen) && json_integer_value(gen) != j->generation))
		return NULL;
	*rank = json_is_integer(r) ? (int)json_integer_value(r) : -1;
	if (*rank >= j->world)
		return NULL;
	return j;
}

/* Where each rank metric lives in struct rank_state. */
#define RANK_STATE_AT(id, field, ...) \
	[RM_##id] = offsetof(struct rank_state, field),
static const size_t rank_state_at[RM_COUNT] = { RANK_METRICS(RANK_STATE_AT) };
#undef RANK_STATE_AT

void
backend_rank_metrics(struct job_state *j, int r, const json_t *m)
{
	struct rank_state *rs = &j->ranks[r];
	char		 err[1];

	if (json_is_true(json_object_get(m, "beat"))) {
		rs->last_seen = clock_mono();	/* a heartbeat only */
		rs->paused = json_is_true(json_object_get(m, "paused"));
		return;
	}
	/* Cannot fail: proto_kind checked every field's type.  The rows of
	 * its processes are its agent's (backend-nodes.c). */
	metrics_merge(rank_metrics, RM_COUNT, rank_state_at, m, rs, &rs->known,
	    ~RM_PROC_MASK, err, sizeof err);
	rs->last_seen = clock_mono();
	rs->paused = false;
	series_push(&rs->h_compute_ms, (float)rs->compute_ms);
	series_push(&rs->h_comm_ms, (float)rs->comm_ms);
	series_push(&rs->h_rss, (float)rs->rss);
	series_push(&rs->h_step, (float)rs->step);
	series_push(&rs->h_loss, (float)rs->loss);
	series_push(&rs->h_samples, (float)rs->samples_per_s);
	series_push(&rs->h_step_ms, (float)rs->step_ms);
	if (r == 0)			/* the scheduler's goodput */
		sched_observe(j, rs);
}

/*
 * The GPUs a node's agent sees (NVML) bound its cuda slots for placement:
 * a node that declares more than it has gets only what it has, said once
 * in an event, so a cuda job is placed only where devices are.
 */
static void
backend_node_gpus(struct backend *b, int n, const json_t *hello)
{
	const json_t	*g = json_object_get(hello, "gpus");
	const char	*why = json_string_value(json_object_get(hello,
	    "gpus_why"));
	const struct node_spec *ns = &b->cluster->nodes[n];
	int		 seen, cap;

	if (b->placing.nodes == NULL || !json_is_integer(g))
		return;			/* an agent that does not say */
	seen = (int)json_integer_value(g);
	cap = seen < ns->cuda_slots ? seen : ns->cuda_slots;
	if (cap == b->placing.nodes[n].cuda_slots)
		return;
	b->placing.nodes[n].cuda_slots = cap;
	if (cap < ns->cuda_slots)
		backend_event(b, NULL, EV_REFUSED, -1, ns->name, "node %s "
		    "declares %d cuda slot%s but its agent sees %d GPU%s%s%s%s; "
		    "placement counts %d there", ns->name, ns->cuda_slots,
		    ns->cuda_slots == 1 ? "" : "s", seen, seen == 1 ? "" : "s",
		    why != NULL ? " (" : "", why != NULL ? why : "",
		    why != NULL ? ")" : "", cap);
}

/* Whether the workers of a hello hold rank r of j's generation. */
static bool
hello_lists(const json_t *workers, const struct job_state *j, int r)
{
	const json_t	*w;
	size_t		 i;

	json_array_foreach(workers, i, w) {
		const char	*job = json_string_value(json_object_get(w, "job"));

		if (job != NULL && strcmp(job, j->name) == 0 &&
		    json_integer_value(json_object_get(w, "run")) == j->run &&
		    json_integer_value(json_object_get(w, "generation")) ==
		    j->generation &&
		    json_integer_value(json_object_get(w, "rank")) == r)
			return true;
	}
	return false;
}

/*
 * The ranks a re-attach rebuilt on node n that its agent's hello does
 * not list (job, run, generation and rank): the launch never arrived (the
 * backend that journalled it died first), so nothing there will ever
 * beat.  The absent detector acts a second later (detect-absent.c),
 * which lets the exits of the agent's history (that follow its hello)
 * come in first: a rank that ran and ended there, its slot since reused,
 * is not absent.
 */
static void
backend_hello_absent(struct backend *b, int n, const json_t *workers)
{
	double		 now = clock_mono();

	for (int i = 0; i < b->njobs; i++) {
		struct job_state *j = &b->jobs[i];

		for (int r = 0; !job_done(j) && r < j->world; r++) {
			struct rank_state *rs = &j->ranks[r];

			if (!rs->replayed || rs->node != n ||
			    rs->phase != RANK_RUNNING)
				continue;
			rs->replayed = false;
			if (!hello_lists(workers, j, r))
				rs->absent_since = now;
		}
	}
}

/* The agent's hello: which of our ranks still run there, and its GPUs. */
static void
backend_agent_hello(struct backend *b, struct fleet_node *fn, json_t *msg)
{
	json_t		*w;
	size_t		 i;

	struct node_view *nv = &b->nodes[fn - b->fleet.nodes];
	const char	*build = json_string_value(json_object_get(
	    json_object_get(msg, "versions"), "build"));

	json_decref(fn->hello);
	fn->hello = json_incref(msg);
	fn->up = true;
	fn->why[0] = '\0';
	backend_node_back(b, (int)(fn - b->fleet.nodes));
	backend_node_gpus(b, (int)(fn - b->fleet.nodes), msg);
	backend_node_hello(nv, msg);
	nv->up = true;
	snprintf(nv->build, sizeof nv->build, "%s", build != NULL ? build : "");
	json_array_foreach(json_object_get(msg, "workers"), i, w) {
		int		 r;
		struct job_state *j = backend_frame_job(b, w, &r);

		if (j == NULL || r < 0)
			continue;
		j->ranks[r].pid = (long)json_integer_value(json_object_get(w,
		    "pid"));
		/* A re-attached backend counts its commands on from what the
		 * generation's ranks were sent. */
		for (int c = 0; c < JOB_CMD_COUNT; c++) {
			json_int_t seq = json_integer_value(json_array_get(
			    json_object_get(w, "seq"), (size_t)c));

			if (seq > j->seq[c])
				j->seq[c] = (long)seq;
		}
	}
	backend_hello_absent(b, (int)(fn - b->fleet.nodes),
	    json_object_get(msg, "workers"));
	backend_schedule(b);	/* a job may wait for this node */
}

/* A worker's store request, relayed and tagged by its agent: in the
 * scope of its run and generation, or refused when that is not live (an
 * old generation's straggler, a run that ended). */
static void
backend_store_request(struct backend *b, struct fleet_node *fn, json_t *msg)
{
	int		 link = (int)(fn - b->fleet.nodes), r = -1;
	struct job_state *j = backend_frame_job(b, msg, &r);
	char		 scope[64], why[200];

	if (j == NULL || r < 0 || j->phase == JOB_QUEUED || !json_is_integer(
	    json_object_get(msg, "generation"))) {
		snprintf(why, sizeof why, "no live run of job %.64s has this "
		    "rank and generation", json_string_value(json_object_get(
		    msg, "job")) ?: "?");
		store_refuse(b->store, link, msg, why);
		return;
	}
	backend_store_scope(j, scope, sizeof scope);
	store_handle(b->store, link, scope, msg, clock_mono());
}

/* A frame from the agent of fn: the state model first, then the
 * observer's feed, for every frame of a job of ours. */
static void
backend_agent_frame(struct backend *b, struct fleet_node *fn, json_t *msg)
{
	struct job_state *j;
	enum proto_kind	 k;
	char		 err[300];
	int		 r = -1;
	json_t		*copy;

	switch ((k = proto_kind(msg, err, sizeof err))) {
	case PK_INVALID:
		backend_event(b, NULL, EV_REFUSED, -1, fn->spec->name,
		    "node %s: refusing %s", fn->spec->name, err);
		return;
	case PK_HELLO:
		backend_agent_hello(b, fn, msg);
		return;
	case PK_STORE:
		backend_store_request(b, fn, msg);
		return;
	case PK_OK:		/* the answer to a ping: sent at seq ms */
		if (json_is_integer(json_object_get(msg, "seq")))
			fn->answered = (double)json_integer_value(
			    json_object_get(msg, "seq")) / 1000;
		return;
	case PK_ERROR:		/* e.g. the remote agent could not start */
		backend_event(b, NULL, EV_REFUSED, -1, fn->spec->name,
		    "node %s: %s", fn->spec->name, json_string_value(
		    json_object_get(msg, "reason")));
		if (!fn->up)	/* the reason it is down, until it is up */
			fleet_set_why(fn, json_string_value(json_object_get(msg,
			    "reason")));
		return;
	case PK_METRICS:
		if (json_object_get(msg, "job") != NULL)
			break;
		backend_node_metrics(b, (int)(fn - b->fleet.nodes), msg);
		backend_emit(b, msg);
		return;
	case PK_EVENT:
		if (json_object_get(msg, "job") != NULL)
			break;
		/* The agent's own (what its link dropped): the node's. */
		json_object_set_new(msg, "node", json_string(fn->spec->name));
		journal_append_lazy(b->journal, msg);	/* an event: no fsync */
		backend_emit(b, msg);
		return;
	default:
		break;
	}
	if ((j = backend_frame_job(b, msg, &r)) == NULL)
		return;			/* another or an older job's */
	backend_series_frame(b, j, r, k, msg);
	if (r >= 0 && k != PK_EXIT)
		job_rank_seen(b, j, r);
	switch (k) {
	case PK_METRICS:
		if (r >= 0)
			backend_rank_metrics(j, r, msg);
		break;
	case PK_EPOCH:
		if (j->epochs == NULL)
			j->epochs = json_array();
		json_array_append(j->epochs, msg);
		break;
	case PK_EVAL:
		if (j->evals == NULL)
			j->evals = json_array();
		json_array_append(j->evals, msg);
		break;
	case PK_LOG:
		/* A program that fails says why on its stderr, not in an
		 * event (a Python traceback's last line). */
		if (r >= 0)
			snprintf(j->ranks[r].last_line, sizeof j->ranks[r].last_line,
			    "%s", json_string_value(json_object_get(msg, "line")));
		break;
	case PK_SUMMARY:
		/* Cannot fail: proto_kind checked it against its list. */
		summary_unpack(msg, &j->sum, err, sizeof err);
		break;
	case PK_EXIT:
		if (r >= 0) {
			job_rank_exit(b, j, r, msg);
			return;
		}
		break;
	case PK_EVENT:
		job_rank_event(b, j, r, msg);
		if (j->prog != NULL)
			backend_program_event(b, j, r, msg);
		backend_event_note(b, msg);
		copy = json_deep_copy(msg);
		journal_append_lazy(b->journal, copy);
		json_decref(copy);
		break;
	default:
		break;
	}
	backend_emit(b, msg);
}

/* The link to fn's agent ended (read, or a queue that failed), why. */
static void
backend_node_lost(struct backend *b, struct fleet_node *fn, const char *why)
{
	store_drop_link(b->store, (int)(fn - b->fleet.nodes));
	/* A link that ends before its hello with an error frame has said
	 * why already (backend_agent_frame): that is the reason it is down. */
	if (fn->up || fn->why[0] == '\0')
		backend_event(b, NULL, EV_FAILOVER, -1, fn->spec->name,
		    "lost the link to the agent of %s: %s; reconnecting",
		    fn->spec->name, why);
	if (fn->why[0] == '\0')
		fleet_set_why(fn, why);
	fleet_close_node(fn);
	b->nodes[fn - b->fleet.nodes].up = false;
	backend_link_lost(b, fn);
}

void
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
	if (rc < 0 || n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
		backend_node_lost(b, fn, rc < 0 ? fn->rd.err : n == 0 ?
		    "connection closed" : strerror(errno));
}

/* The fd of fn can take more: what waits for its agent goes out. */
void
backend_node_output(struct backend *b, struct fleet_node *fn)
{
	if (fleet_flush(fn) != 0)
		backend_node_lost(b, fn, strerror(errno));
}
