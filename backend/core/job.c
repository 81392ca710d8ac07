/*
 * job.c: a job's life, in one place (docs/architecture.md, "A job's
 * life").  The phases of a job and of its ranks, the legal moves between
 * them, and the one writer of each: job_set_phase and rank_set_phase
 * refuse a move the tables do not have, journal every move with its
 * reason and raise it as a "phase" event.  Around them, what moves a
 * job: a rank's exit, a failure and its failover, a re-formation, a
 * stop, and the verdict at the end, which is the backend's own, from
 * what it saw of every rank (each one's exit, whether it said it
 * finished, what was asked of it), never a rank's word for the job.
 *
 * The mechanics stay where they were: launching ranks and relaunching a
 * generation in backend-jobs.c, the queue in backend-queue.c, the
 * detectors' decisions in backend-detect.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/utf8.h"
#include "lib/xmalloc.h"
#include "backend/proto/event.h"
#include "backend/proto/proto.h"
#include "backend/core/backend-internal.h"
#include "backend/core/backend-program.h"

struct phase_row {
	const char	*name;
	int		 severity;
	const char	*help;
};

#define PHASE_ROW(id, name, sev, help)	{ name, EV_##sev, help },
static const struct phase_row job_rows[JOB_PHASE_COUNT] = {
	JOB_PHASES(PHASE_ROW)
};
static const struct phase_row rank_rows[RANK_PHASE_COUNT] = {
	RANK_PHASES(PHASE_ROW)
};
#undef PHASE_ROW

/* The legal moves: bit t of moves[f] is the move from f to t. */
#define TO(p)		(1u << JOB_##p)
#define ENDS		(TO(FINISHED) | TO(STOPPED) | TO(FAILED))
#define REFORMS		(TO(REFORMING) | TO(RESIZING))
static const unsigned job_moves[JOB_PHASE_COUNT] = {
	[JOB_QUEUED] = TO(PLACING) | TO(STOPPED) | TO(FAILED),
	/* A rank that fails at its launch fails over from here. */
	[JOB_PLACING] = TO(RUNNING) | TO(PAUSED) | REFORMS | TO(STOPPING) |
	    ENDS,
	[JOB_RUNNING] = TO(PAUSED) | REFORMS | TO(STOPPING) | ENDS,
	[JOB_PAUSED] = TO(RUNNING) | REFORMS | TO(STOPPING) | ENDS,
	/* The old generation is gone: the next is placed, unless a stop
	 * came meanwhile. */
	[JOB_REFORMING] = TO(PLACING) | TO(STOPPING) | TO(STOPPED) |
	    TO(FAILED),
	[JOB_RESIZING] = TO(PLACING) | TO(STOPPING) | TO(STOPPED) |
	    TO(FAILED),
	/* The ranks may finish in the step the stop was asked at. */
	[JOB_STOPPING] = ENDS,
};
#undef TO

#define RTO(p)		(1u << RANK_##p)
static const unsigned rank_moves[RANK_PHASE_COUNT] = {
	[RANK_PENDING] = RTO(RUNNING) | RTO(FAILED),
	[RANK_RUNNING] = RTO(EXITED) | RTO(FAILED) | RTO(LEFT),
	/* The next generation launches it again, or fails to. */
	[RANK_EXITED] = RTO(RUNNING) | RTO(FAILED),
	[RANK_FAILED] = RTO(RUNNING),
	[RANK_LEFT] = RTO(RUNNING) | RTO(FAILED),
};
#undef RTO

const char *
job_phase_name(enum job_phase p)
{
	return (unsigned)p < JOB_PHASE_COUNT ? job_rows[p].name : "?";
}

const char *
rank_phase_name(enum rank_phase p)
{
	return (unsigned)p < RANK_PHASE_COUNT ? rank_rows[p].name : "?";
}

/* The row of rows[n] called name, or -1. */
static int
phase_named(const struct phase_row *rows, int n, const char *name)
{
	for (int i = 0; name != NULL && i < n; i++) {
		if (strcmp(name, rows[i].name) == 0)
			return i;
	}
	return -1;
}

int
job_phase_named(const char *name, enum job_phase *p)
{
	int	 i = phase_named(job_rows, JOB_PHASE_COUNT, name);

	if (i >= 0)
		*p = (enum job_phase)i;
	return i >= 0 ? 0 : -1;
}

int
rank_phase_named(const char *name, enum rank_phase *p)
{
	int	 i = phase_named(rank_rows, RANK_PHASE_COUNT, name);

	if (i >= 0)
		*p = (enum rank_phase)i;
	return i >= 0 ? 0 : -1;
}

int
job_phase_severity(enum job_phase p)
{
	return (unsigned)p < JOB_PHASE_COUNT ? job_rows[p].severity : EV_INFO;
}

const char *
job_phase_help(enum job_phase p)
{
	return (unsigned)p < JOB_PHASE_COUNT ? job_rows[p].help : "";
}

bool
job_phase_legal(enum job_phase from, enum job_phase to)
{
	return (unsigned)from < JOB_PHASE_COUNT && (unsigned)to <
	    JOB_PHASE_COUNT && (job_moves[from] >> to & 1);
}

bool
rank_phase_legal(enum rank_phase from, enum rank_phase to)
{
	return (unsigned)from < RANK_PHASE_COUNT && (unsigned)to <
	    RANK_PHASE_COUNT && (rank_moves[from] >> to & 1);
}

/*
 * A move that is not in the tables is a bug in the backend.  With
 * HUNTER_STRICT_PHASES set (the test suite sets it) it aborts, so a test
 * that makes one fails; otherwise it is refused, said in an event, and
 * the phase stays.
 */
static int
phase_refused(struct backend *b, const struct job_state *j, int rank,
    const char *from, const char *to, const char *why)
{
	const char	*strict = getenv("HUNTER_STRICT_PHASES");

	if (strict != NULL && *strict != '\0' && strcmp(strict, "0") != 0) {
		fprintf(stderr, "hunter: job %s%s%.0d: illegal phase move "
		    "%s -> %s (%s)\n", j->name, rank >= 0 ? " rank " : "",
		    rank >= 0 ? rank : 0, from, to, why);
		abort();
	}
	backend_event(b, j->name, EV_REFUSED, rank, NULL, "internal error: "
	    "%s%s%s -> %s is not a legal move (%s); it stays %s", rank >= 0 ?
	    "rank phase " : "job phase ", from, "", to, why, from);
	return -1;
}

/* The move as an event: journalled (lazily, as every event) and shown. */
static void
phase_event(struct backend *b, const struct job_state *j, int rank,
    const char *from, const char *to, const char *why)
{
	const char	*node = rank >= 0 && b->cluster != NULL ?
	    b->cluster->nodes[j->ranks[rank].node].name : NULL;
	json_t		*ev = backend_event_new(b, j->name, EV_PHASE, rank, node,
	    why);

	if (ev == NULL)
		return;
	json_object_set_new(ev, "from", json_string(from));
	json_object_set_new(ev, "to", json_string(to));
	json_object_set_new(ev, "generation", json_integer(j->generation));
	backend_event_raise(b, ev);
	json_decref(ev);
}

/* The move of job j (rank -1) or of one of its ranks from one phase to
 * another: refused unless legal, else journalled and raised. */
static int
phase_move(struct backend *b, const struct job_state *j, int rank,
    bool legal, const char *from, const char *to, const char *fmt,
    va_list ap)
{
	char	 why[512];

	vsnprintf(why, sizeof why, fmt, ap);
	utf8_fix(why, sizeof why);
	if (!legal)
		return phase_refused(b, j, rank, from, to, why);
	phase_event(b, j, rank, from, to, why);
	return 0;
}

int
job_set_phase(struct backend *b, struct job_state *j, enum job_phase to,
    const char *fmt, ...)
{
	enum job_phase	 from = j->phase;
	va_list		 ap;
	int		 rc;

	if (from == to)
		return 0;
	/* The move is the phase's, before its event names the job's. */
	if (job_phase_legal(from, to)) {
		j->phase = to;
		j->phase_since = clock_mono();
	}
	va_start(ap, fmt);
	rc = phase_move(b, j, -1, j->phase == to, job_phase_name(from),
	    job_phase_name(to), fmt, ap);
	va_end(ap);
	return rc;
}

int
rank_set_phase(struct backend *b, struct job_state *j, int r,
    enum rank_phase to, const char *fmt, ...)
{
	enum rank_phase	 from = j->ranks[r].phase;
	va_list		 ap;
	int		 rc;

	if (from == to)
		return 0;
	if (rank_phase_legal(from, to))
		j->ranks[r].phase = to;
	va_start(ap, fmt);
	rc = phase_move(b, j, r, j->ranks[r].phase == to, rank_phase_name(from),
	    rank_phase_name(to), fmt, ap);
	va_end(ap);
	return rc;
}

void
job_restore_phase(struct job_state *j, enum job_phase p)
{
	j->phase = p;
	j->phase_since = clock_mono();
}

void
rank_restore_phase(struct job_state *j, int r, enum rank_phase p)
{
	j->ranks[r].phase = p;
}

bool
job_done(const struct job_state *j)
{
	return job_phase_final(j->phase);
}

bool
job_reforming(const struct job_state *j)
{
	return j->phase == JOB_REFORMING || j->phase == JOB_RESIZING;
}

int
job_ranks_running(const struct job_state *j)
{
	int	 n = 0;

	for (int r = 0; r < j->world; r++)
		n += j->ranks[r].phase == RANK_RUNNING;
	return n;
}

/* Release what a re-formation held (its placement), as it is dropped. */
static void
job_drop_reform(struct job_state *j)
{
	free(j->restart.node_of);
	j->restart.node_of = NULL;
}

/* The end of j: the final phase, its slots back to the queue, its store
 * scope gone, the journal's durable record of it. */
void
job_end(struct backend *b, struct job_state *j, enum job_phase to,
    const char *fmt, ...)
{
	bool		 launched = j->phase != JOB_QUEUED;
	char		 why[512], err[128];
	va_list		 ap;
	json_t		*rec;

	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	if (!job_phase_final(to) || job_set_phase(b, j, to, "%s", why) != 0)
		return;
	job_drop_reform(j);
	backend_store_scope(j, err, sizeof err);
	if (b->store != NULL)		/* the simulated backend has none */
		store_drop_scope(b->store, err);
	for (int r = 0; launched && r < j->world; r++) {
		if (b->used[j->ranks[r].node] > 0)
			b->used[j->ranks[r].node]--;
	}
	rec = proto_pack(err, sizeof err, "{s:s, s:s, s:s, s:s}", "t",
	    MSG_JOB_END, "job", j->name, "state", job_phase_name(to),
	    "reason", why);
	/* The simulated backend keeps no journal. */
	if (b->journal != NULL && (rec == NULL ||
	    journal_append(b->journal, rec) != 0))
		backend_event(b, j->name, EV_REFUSED, -1, NULL, "the journal "
		    "did not take the end of the job: %s", rec == NULL ? err :
		    strerror(errno));
	json_decref(rec);
	if (b->preempting && launched)
		backend_preempt_done(b, j);
	backend_schedule(b);		/* the freed slots may fit a queued job */
}

/*
 * The verdict, once no rank runs and nothing is to be re-formed: failed
 * when a rank failed; stopped when a stop was asked (the operator's, a
 * preemption's), or when a worker's rank exited well without saying it
 * finished (--stop-after-epochs, a SIGTERM); finished when every rank
 * of the job ended well and, for hunter's own workers, each said it
 * trained to the end.
 */
static void
job_verdict(struct backend *b, struct job_state *j)
{
	int	 failed = -1, unfinished = -1;

	for (int r = 0; r < j->world; r++) {
		const struct rank_state *rs = &j->ranks[r];

		if (rs->phase == RANK_FAILED && failed < 0)
			failed = r;
		if (!rs->finished && unfinished < 0)
			unfinished = r;
	}
	if (failed >= 0) {
		if (j->reason[0] == '\0')
			snprintf(j->reason, sizeof j->reason, "rank %d on %s: %s",
			    failed, b->cluster->nodes[j->ranks[failed].node].name,
			    j->ranks[failed].exit_reason);
		job_end(b, j, JOB_FAILED, "%s", j->reason);
	} else if (j->phase == JOB_STOPPING || b->preempting)
		job_end(b, j, JOB_STOPPED, "every rank stopped as asked");
	else if (j->prog == NULL && unfinished >= 0)
		job_end(b, j, JOB_STOPPED, "rank %d exited before the end of "
		    "training (step %ld, epoch %ld)", unfinished,
		    j->ranks[unfinished].step, j->ranks[unfinished].epoch);
	else if (SUMMARY_HAS(&j->sum, checkpoint_error)) {
		/* Trained to the end, but not saved: said, and hunter run's
		 * exit status says it too. */
		snprintf(j->reason, sizeof j->reason, "the final checkpoint "
		    "could not be written: %s", j->sum.checkpoint_error);
		utf8_fix(j->reason, sizeof j->reason);
		job_end(b, j, JOB_FINISHED, "every rank trained to the end; %s",
		    j->reason);
	} else
		job_end(b, j, JOB_FINISHED, "every rank %s", j->prog != NULL ?
		    "ended well" : "trained to the end");
}

/* A failed rank may be moved, unless the job is out of re-formations or
 * is ending anyway. */
static bool
job_may_fail_over(const struct backend *b, const struct job_state *j)
{
	if (b->preempting || j->phase == JOB_STOPPING || job_reforming(j))
		return false;
	if (j->prog != NULL && (j->prog->giving_up || j->prog->tune.active))
		return false;
	return true;
}

/*
 * The next generation waits while a node of its placement is silent (a
 * partition, a stopped agent): its ranks there would not rendezvous and
 * each try would cost the job a restart.  Once every node is heard
 * again, it waits on until each has answered a ping sent since: after a
 * partition one direction of a link may come back seconds before the
 * other (TCP's backed-off retransmits), and a launch that has not
 * arrived leaves its peers waiting in the rendezvous; the answer also
 * says the kills and stops queued for the old generation arrived first.
 * Said when it starts and when it ends; the detectors' round settles a
 * re-forming job every second, so the relaunch follows by itself.
 */
#define JOB_PING_WAIT_S	120	/* TCP's longest retransmit backoff */

static bool
job_relaunch_waits(struct backend *b, struct job_state *j)
{
	double		 hb = j->spec.policy.heartbeat_timeout_s, now;
	const char	*name;
	bool		 unanswered = false;
	int		 n;

	for (int r = 0; r < j->restart.world; r++) {
		n = j->restart.node_of[r];
		name = b->cluster->nodes[n].name;
		if (backend_node_heard(b, n, hb))
			continue;
		if (!j->restart.waiting)
			backend_event(b, j->name, EV_DOWN, -1, name, "generation "
			    "%d waits for %s: nothing from its agent for over "
			    "%.0f s (the heartbeat timeout)", j->generation + 1,
			    name, hb);
		if (!j->restart.waiting)
			j->restart.wait_since = clock_mono();
		j->restart.waiting = true;
		j->restart.heard_since = 0;
		return true;
	}
	if (!j->restart.waiting)
		return false;
	now = clock_mono();
	if (j->restart.heard_since == 0)
		j->restart.heard_since = now;
	for (int r = 0; r < j->restart.world; r++) {
		n = j->restart.node_of[r];
		if (b->fleet.nodes[n].answered < j->restart.wait_since) {
			backend_node_ping(b, n, now);
			unanswered = true;
			name = b->cluster->nodes[n].name;
		}
	}
	/* An agent of an older build forwards the ping to its workers and
	 * never answers: heard for long enough is then taken as back. */
	if (unanswered && now - j->restart.heard_since < JOB_PING_WAIT_S)
		return true;
	if (unanswered)
		backend_event(b, j->name, EV_UP, -1, name, "generation %d "
		    "relaunches: every node is heard again, but %s has not "
		    "answered a ping in %d s (an agent of an older build?)",
		    j->generation + 1, name, JOB_PING_WAIT_S);
	else
		backend_event(b, j->name, EV_UP, -1, NULL, "every node of "
		    "generation %d answers again, after %.0f s",
		    j->generation + 1, now - j->restart.wait_since);
	j->restart.waiting = false;
	return false;
}

void
job_settle(struct backend *b, struct job_state *j)
{
	if (job_done(j) || job_ranks_running(j) > 0)
		return;
	/* A preempted backend relaunches nothing: the nodes are going. */
	if (b->preempting && job_reforming(j)) {
		job_drop_reform(j);
		job_set_phase(b, j, JOB_STOPPING, "preempted while it re-formed");
	}
	/* A job out of re-formations said so when its rank failed. */
	if (!job_reforming(j) && job_may_fail_over(b, j) &&
	    (j->restarts < j->spec.policy.max_restarts || j->prog != NULL)) {
		for (int r = 0; r < j->world; r++) {
			if (j->ranks[r].phase == RANK_FAILED) {
				job_failover(b, j);
				break;
			}
		}
	}
	if (job_reforming(j) && j->restart.node_of == NULL) {
		/* Never so: a re-formation keeps its placement until the
		 * relaunch, and the journal's replay keeps it with it. */
		job_end(b, j, JOB_FAILED, "%s re-formed without a placement to "
		    "start its next generation on (a defect of hunter's)",
		    j->name);
		return;
	}
	if (job_reforming(j)) {
		if (!job_relaunch_waits(b, j))
			backend_relaunch(b, j);
		return;
	}
	job_verdict(b, j);
}

/* Record what ended rank r: signal (0 if none) and why. */
static void
rank_note_exit(struct rank_state *rs, int sig, const char *why)
{
	rs->exit_signal = sig;
	snprintf(rs->exit_reason, sizeof rs->exit_reason, "%s", why);
	utf8_fix(rs->exit_reason, sizeof rs->exit_reason);
}

void
job_rank_failed(struct backend *b, struct job_state *j, int r, int sig,
    const char *why)
{
	struct rank_state *rs = &j->ranks[r];

	rank_note_exit(rs, sig, why);
	rank_set_phase(b, j, r, RANK_FAILED, "%s", rs->exit_reason);
}

void
job_rank_exit(struct backend *b, struct job_state *j, int r,
    const json_t *msg)
{
	struct rank_state *rs = &j->ranks[r];
	json_t		*sig = json_object_get(msg, "signal");
	json_int_t	 code = json_integer_value(json_object_get(msg, "code"));
	const char	*reason = json_string_value(json_object_get(msg,
	    "reason"));
	const char	*node = b->cluster->nodes[rs->node].name;
	char		 why[256];

	if (rs->phase != RANK_RUNNING)
		return;
	backend_store_scope(j, why, sizeof why);
	if (b->store != NULL)		/* the simulated backend has none */
		store_drop_rank(b->store, why, r);
	if (program_tune_active(j)) {	/* an autotune trial's rank */
		program_tune_exit(b, j, r, msg);
		return;
	}
	if (job_reforming(j)) {		/* expected: the group is re-forming */
		rank_set_phase(b, j, r, RANK_EXITED, "exited for the "
		    "re-formation");
		job_settle(b, j);
		return;
	}
	if (json_is_integer(sig))
		snprintf(why, sizeof why, "killed by signal %d",
		    (int)json_integer_value(sig));
	else if (code != 0)
		snprintf(why, sizeof why, "exited with status %d", (int)code);
	else {
		rank_set_phase(b, j, r, RANK_EXITED, "exited with status 0");
		job_settle(b, j);
		return;
	}
	/* A program's agent may know why (its words, its memory). */
	if (reason != NULL)
		snprintf(why + strlen(why), sizeof why - strlen(why), " (%s)",
		    reason);
	if (j->prog != NULL && (j->phase == JOB_STOPPING || j->prog->ending)) {
		/* The operator's stop ended it, after its grace if need be, or
		 * its peer ended well and it was asked to follow. */
		rank_note_exit(rs, json_is_integer(sig) ?
		    (int)json_integer_value(sig) : 0, why);
		rank_set_phase(b, j, r, RANK_EXITED, "asked to stop, %s", why);
		backend_event(b, j->name, EV_STOPPED, r, node, "rank %d on %s, "
		    "asked to stop, %s", r, node, rs->exit_reason);
		job_settle(b, j);
		return;
	}
	job_rank_failed(b, j, r, json_is_integer(sig) ?
	    (int)json_integer_value(sig) : 0, why);
	backend_event(b, j->name, EV_FAILED, r, node, "rank %d on %s %s", r,
	    node, rs->exit_reason);
	/*
	 * A rank killed by a signal is the cause; a rank that exits with an
	 * error is more often a bystander whose peer died, so its failover
	 * waits a moment (detect.c) for the real cause to be reported.  The
	 * other ranks fail on the dead link within the timeout and exit.
	 */
	if (rs->exit_signal != 0)
		job_failover(b, j);
	else if (j->fail_since == 0)
		j->fail_since = clock_mono();
	job_settle(b, j);
}

void
job_rank_seen(struct backend *b, struct job_state *j, int r)
{
	if (j->phase == JOB_PLACING)
		job_set_phase(b, j, JOB_RUNNING, "rank %d of generation %d "
		    "reports", r, j->generation);
}

void
job_rank_event(struct backend *b, struct job_state *j, int r,
    const json_t *ev)
{
	enum event_kind	 k = event_kind_of(ev);

	if (k == EV_FINISHED && r >= 0)
		j->ranks[r].finished = true;
	else if (k == EV_FAILED && r >= 0)
		snprintf(j->ranks[r].said, sizeof j->ranks[r].said, "%s",
		    json_string_value(json_object_get(ev, "reason")) ?: "");
	else if (k == EV_PAUSED && (j->phase == JOB_RUNNING ||
	    j->phase == JOB_PLACING))
		job_set_phase(b, j, JOB_PAUSED, "rank %d holds at a step "
		    "boundary", r);
	else if (k == EV_RESUMED && j->phase == JOB_PAUSED)
		job_set_phase(b, j, JOB_RUNNING, "rank %d goes on", r);
}

/*
 * Stop every rank of j at one step and start the group again as the next
 * generation: world ranks on node_of (the re-formation's placement; a
 * new world is a resize), from the newest checkpoint.  The decision goes
 * to the journal with the placement, so a backend that re-attaches
 * mid-way carries it out.
 */
void
job_journal_decision(struct backend *b, struct job_state *j)
{
	json_t		*rec, *placement = json_array();
	const char	*kind = event_kind_name(j->restart.kind);
	char		 err[128];

	for (int r = 0; r < j->restart.world && b->cluster != NULL; r++)
		json_array_append_new(placement, json_string(
		    b->cluster->nodes[j->restart.node_of[r]].name));
	rec = proto_pack(err, sizeof err, "{s:s, s:s, s:s, s:s, s:i, s:I, s:i, "
	    "s:o}", "t", MSG_DECISION, "job", j->name, "kind", kind,
	    "reason", j->restart.reason, "generation", j->generation, "run",
	    (json_int_t)j->run, "world", j->restart.world, "placement",
	    placement);
	if (b->journal != NULL && (rec == NULL ||
	    journal_append(b->journal, rec) != 0))
		backend_event(b, j->name, EV_REFUSED, -1, NULL, "the journal "
		    "did not take the decision (%s): %s", kind,
		    rec == NULL ? err : strerror(errno));
	json_decref(rec);
}

static int
job_regroup(struct backend *b, struct job_state *j, const int *node_of,
    int world, enum event_kind kind, const char *reason)
{
	enum job_phase	 to = world != j->world ? JOB_RESIZING : JOB_REFORMING;

	if (job_done(j) || job_reforming(j) || j->phase == JOB_QUEUED ||
	    j->phase == JOB_STOPPING || world < 1)
		return -1;
	if (!job_phase_legal(j->phase, to))
		return -1;
	snprintf(j->restart.reason, sizeof j->restart.reason, "%s", reason);
	utf8_fix(j->restart.reason, sizeof j->restart.reason);
	j->restart.since = clock_mono();
	j->restart.waiting = false;
	free(j->restart.node_of);	/* a replayed decision never carried out */
	j->restart.node_of = xcalloc((size_t)world, sizeof(int));
	memcpy(j->restart.node_of, node_of, sizeof(int) * (size_t)world);
	j->restart.world = world;
	j->restart.kind = kind;
	j->total.failovers += kind == EV_FAILOVER;
	job_journal_decision(b, j);
	/* After the decision: a backend that replays the journal finds the
	 * placement before the move that needs it. */
	job_set_phase(b, j, to, "%s: %s", event_kind_name(kind),
	    j->restart.reason);
	backend_send_cmd(b, j, JOB_CMD_STOP);
	return 0;
}

int
job_reform(struct backend *b, struct job_state *j, const int *node_of,
    enum event_kind kind, const char *fmt, ...)
{
	char	 why[256];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	return job_regroup(b, j, node_of, j->world, kind, why);
}

int
job_resize(struct backend *b, struct job_state *j, const int *node_of,
    int world, const char *fmt, ...)
{
	char	 why[256];
	va_list	 ap;

	if (world == j->world)
		return -1;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	return job_regroup(b, j, node_of, world, EV_RESIZED, why);
}

/* Slots of node n a job may take: spares count, for migration and
 * failover. */
int
job_node_free(struct backend *b, const struct job_state *j, int n)
{
	const struct node_spec *ns = &backend_placing(b)->nodes[n];
	int	 slots = j->spec.resources.device == DEVICE_CUDA ?
	    ns->cuda_slots : ns->cpu_slots;

	return slots - b->used[n];
}

/* What a failed rank said of its failure: its failed event, else the last
 * line it printed. */
static const char *
rank_words(const struct rank_state *rs)
{
	return rs->said[0] != '\0' ? rs->said : rs->last_line;
}

/* The job cannot go on after rank r failed: why, and its program's peers
 * are asked to stop. */
static void
job_give_up(struct backend *b, struct job_state *j, int rank)
{
	utf8_fix(j->reason, sizeof j->reason);	/* it quotes the rank */
	backend_event(b, j->name, EV_FAILED, rank, NULL, "%s", j->reason);
	if (j->prog != NULL)
		backend_program_give_up(b, j);
}

/*
 * A rank died (not as part of a re-formation): move it to a free spare
 * if there is one, and re-form from the newest checkpoint.  Of the failed
 * ranks, the one moved is one killed by a signal if there is one (the
 * others died of its death), else the first.
 */
void
job_failover(struct backend *b, struct job_state *j)
{
	int		 rank = -1, from, to, *node_of;
	const char	*why;

	if (!job_may_fail_over(b, j))
		return;
	for (int r = 0; r < j->world; r++) {
		if (j->ranks[r].phase != RANK_FAILED)
			continue;
		if (rank < 0 || (j->ranks[r].exit_signal != 0 &&
		    j->ranks[rank].exit_signal == 0))
			rank = r;
	}
	if (rank < 0)
		return;
	j->fail_since = 0;
	why = j->ranks[rank].exit_reason;
	from = to = j->ranks[rank].node;
	if (j->restarts >= j->spec.policy.max_restarts) {
		snprintf(j->reason, sizeof j->reason, "rank %d: %s; %d "
		    "re-formations already, giving up", rank, why, j->restarts);
		job_give_up(b, j, rank);
		return;
	}
	/* A spare that is silent is as cut off as the rank's own node. */
	for (int n = 0; n < b->fleet.n; n++) {
		if (b->cluster->nodes[n].spare && job_node_free(b, j, n) > 0 &&
		    backend_node_heard(b, n, j->spec.policy.heartbeat_timeout_s)) {
			to = n;
			break;
		}
	}
	/* A rank that exited by itself before its first step (no CUDA
	 * device, an unreadable data path, a module its program lacks)
	 * fails the same way again on the same node: with no spare to try,
	 * the job fails now; and once it failed so on a spare too, it is the
	 * job, not the node.  The reason ends with the rank's own words. */
	if (j->ranks[rank].step == 0 && j->ranks[rank].exit_signal == 0 &&
	    (to == from || j->early_failovers > 0)) {
		snprintf(j->reason, sizeof j->reason, "rank %d on %s: %s before "
		    "its first step%s; not restarting%s%s", rank,
		    b->cluster->nodes[from].name, why, j->early_failovers > 0 ?
		    ", as it did on another node before" : ", and no spare node "
		    "is free to try", rank_words(&j->ranks[rank])[0] != '\0' ? ": " : "",
		    rank_words(&j->ranks[rank]));
		job_give_up(b, j, rank);
		return;
	}
	j->early_failovers += j->ranks[rank].step == 0 &&
	    j->ranks[rank].exit_signal == 0;
	node_of = xcalloc((size_t)j->world, sizeof *node_of);
	for (int r = 0; r < j->world; r++)
		node_of[r] = j->ranks[r].node;
	node_of[rank] = to;
	job_reform(b, j, node_of, EV_FAILOVER, "rank %d on %s: %s; rank %d "
	    "moves to %s", rank, b->cluster->nodes[from].name, why, rank,
	    b->cluster->nodes[to].name);
	free(node_of);
}

void
job_stop(struct backend *b, struct job_state *j, const char *why)
{
	bool	 failed = false;

	if (job_done(j))
		return;
	/* Nothing runs to stop at a step: it ends now.  A queued job keeps
	 * why it waited; one whose ranks all failed, why they did. */
	if (j->phase == JOB_QUEUED || job_ranks_running(j) == 0) {
		for (int r = 0; j->phase != JOB_QUEUED && r < j->world; r++) {
			if (j->ranks[r].phase == RANK_FAILED && !failed &&
			    j->reason[0] == '\0')
				snprintf(j->reason, sizeof j->reason, "rank %d: %s",
				    r, j->ranks[r].exit_reason);
			failed |= j->ranks[r].phase == RANK_FAILED;
		}
		backend_event(b, j->name, EV_STOPPED, -1, NULL, "stopped %s%s%s",
		    j->phase == JOB_QUEUED ? "in the queue" :
		    "with no rank running", j->reason[0] != '\0' ? ": " : "",
		    j->reason);
		job_end(b, j, failed ? JOB_FAILED : JOB_STOPPED, "%s%s%s", why,
		    j->reason[0] != '\0' ? ": " : "", j->reason);
		return;
	}
	if (j->phase == JOB_STOPPING)
		return;
	/* A re-formation under way has sent its stop already; it now ends
	 * there instead of starting the next generation. */
	if (job_reforming(j))
		job_drop_reform(j);
	else
		backend_send_cmd(b, j, JOB_CMD_STOP);
	job_set_phase(b, j, JOB_STOPPING, "%s", why);
}
