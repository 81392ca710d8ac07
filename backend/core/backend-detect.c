/*
 * backend-detect.c: the detectors' hands.  Once a second it takes a
 * snapshot of each live job (struct detect_job: the ranks' statuses,
 * heartbeats and series, the nodes a rank could move to), runs the
 * detectors over it (backend/sched/detect.h: they decide, following the
 * job's policy) and applies what they decide: it sends the kill, marks a
 * rank lost or left behind, migrates, restarts or fails over.  Each
 * decision goes to the journal (job_reform) and the events with
 * its reason.  After the backend's own loop was held up, the ranks' and
 * the nodes' silence over that time is forgiven (backend_after_stall).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/xmalloc.h"
#include "backend/proto/proto.h"
#include "backend/sched/detect.h"
#include "backend/core/backend-internal.h"
#include "backend/core/backend-program.h"

static void
kill_rank(struct backend *b, struct job_state *j, int r)
{
	char	 err[128];
	json_t	*m = proto_pack(err, sizeof err, "{s:s, s:s, s:s, s:i}", "t",
	    MSG_CMD, "cmd", "kill", "job", j->name, "rank", r);

	if (m == NULL) {
		backend_event(b, j->name, EV_REFUSED, r, NULL, "kill: %s", err);
		return;
	}
	fleet_send(&b->fleet.nodes[j->ranks[r].node], m);
	json_decref(m);
}

/* What the detectors may see of j; nodes and ranks are the caller's
 * arrays of b->fleet.n and j->world. */
static void
snapshot(struct backend *b, struct job_state *j, double now,
    struct detect_job *s, struct detect_node *nodes, struct detect_rank *ranks)
{
	for (int n = 0; n < b->fleet.n; n++) {
		const struct node_spec *ns = &b->cluster->nodes[n];

		nodes[n] = (struct detect_node){ .name = ns->name,
		    .spare = ns->spare, .up = b->fleet.nodes[n].fd >= 0,
		    .heard = b->fleet.nodes[n].last_seen,
		    .cpu_free = ns->cpu_slots - b->used[n] };
	}
	for (int r = 0; r < j->world; r++) {
		const struct rank_state *rs = &j->ranks[r];

		ranks[r] = (struct detect_rank){ .node = rs->node,
		    .running = rs->phase == RANK_RUNNING, .paused = rs->paused,
		    .last_seen = rs->last_seen, .kill_sent = rs->kill_sent,
		    .absent_since = rs->absent_since,
		    .compute_ms = &rs->h_compute_ms, .step_ms = &rs->h_step_ms,
		    .comm_ms = &rs->h_comm_ms, .rss = &rs->h_rss,
		    .step = &rs->h_step };
	}
	*s = (struct detect_job){ .name = j->name, .spec = &j->spec,
	    .world = j->world, .generation = j->generation, .ranks = ranks,
	    .nodes = nodes, .nnodes = b->fleet.n,
	    /* Autotune trials are not watched: they end by themselves. */
	    .paused = j->phase == JOB_PAUSED || program_tune_active(j),
	    .reforming = job_reforming(j), .reform_since = j->restart.since,
	    .fail_since = j->fail_since, .grace_until = j->grace_until,
	    .now = now };
}

/* Where j's ranks are now, to re-form from (the caller frees it). */
static int *
placement_now(const struct job_state *j)
{
	int	*node_of = xcalloc((size_t)j->world, sizeof *node_of);

	for (int i = 0; i < j->world; i++)
		node_of[i] = j->ranks[i].node;
	return node_of;
}

static void
apply(struct backend *b, struct job_state *j, const struct detect_decision *d,
    double now)
{
	struct rank_state *rs = d->rank >= 0 ? &j->ranks[d->rank] : NULL;
	const char	*node = rs ? b->cluster->nodes[rs->node].name : NULL;
	int		*node_of;

	switch (d->kind) {
	case DETECT_KILL:
		if (d->reason[0] != '\0')
			backend_event(b, j->name, EV_FAILOVER, d->rank, node, "%s",
			    d->reason);
		kill_rank(b, j, d->rank);
		rs->kill_sent = now;
		break;
	case DETECT_LOST:
		/* A node cut off hears the kill once it is back (frames to it
		 * wait in its link's queue, in order): the rank stops then. */
		if (rs->kill_sent == 0) {
			kill_rank(b, j, d->rank);
			rs->kill_sent = now;
		}
		if (rs->phase == RANK_RUNNING)
			job_rank_failed(b, j, d->rank, 9, d->reason);
		/* FALLTHROUGH */
	case DETECT_FAILOVER:
		job_failover(b, j);
		job_settle(b, j);
		break;
	case DETECT_MIGRATE:
		if (d->node < 0)
			break;		/* nowhere better to go */
		node_of = placement_now(j);
		node_of[d->rank] = d->node;
		job_reform(b, j, node_of, EV_MIGRATED, "rank %d: %s -> %s (%s)",
		    d->rank, node, b->cluster->nodes[d->node].name, d->reason);
		free(node_of);
		break;
	case DETECT_RESTART:
		node_of = placement_now(j);
		job_reform(b, j, node_of, EV_RESTARTED, "%s", d->reason);
		free(node_of);
		break;
	case DETECT_LEAVE:
		backend_event(b, j->name, EV_FAILOVER, d->rank, node, "%s",
		    d->reason);
		rank_set_phase(b, j, d->rank, RANK_LEFT, "%s", d->reason);
		break;
	}
}

static void
detect_job(struct backend *b, struct job_state *j, double now)
{
	struct detect_node *nodes = xcalloc((size_t)b->fleet.n + 1, sizeof *nodes);
	struct detect_rank *ranks = xcalloc((size_t)j->world, sizeof *ranks);
	int		 max = j->world + 1, n;
	struct detect_decision *d = xcalloc((size_t)max, sizeof *d);
	struct detect_job s;

	snapshot(b, j, now, &s, nodes, ranks);
	n = detect_run(&s, d, max);
	for (int i = 0; i < n; i++)
		apply(b, j, &d[i], now);
	/* A re-formation ends when the old group is gone, which a rank left
	 * behind may have just made so. */
	if (s.reforming)
		job_settle(b, j);
	free(d);
	free(ranks);
	free(nodes);
}

void
backend_node_ping(struct backend *b, int n, double now)
{
	struct fleet_node *fn = &b->fleet.nodes[n];
	json_t		*m;

	if (now - fn->ping_sent < 1)
		return;
	fn->ping_sent = now;
	m = json_pack("{s:s, s:s, s:I}", "t", MSG_CMD, "cmd", "ping", "seq",
	    (json_int_t)(now * 1000));
	fleet_send(fn, m);
	json_decref(m);
}

bool
backend_node_heard(const struct backend *b, int n, double s)
{
	const struct fleet_node *fn;

	if (b->fleet.nodes == NULL)	/* the simulated backend's: no links */
		return true;
	fn = &b->fleet.nodes[n];
	return fn->fd >= 0 && clock_mono() - fn->last_seen <= s;
}

void
detect_tick(struct backend *b, double now)
{
	for (int i = 0; i < b->njobs; i++) {
		if (!job_done(&b->jobs[i]))
			detect_job(b, &b->jobs[i], now);
		if (!job_done(&b->jobs[i]))
			backend_program_tick(b, &b->jobs[i], now);
	}
}

/*
 * The loop itself was held up (the console stopped with Ctrl-Z, a
 * debugger, a host that froze): the silence of the ranks over that time
 * is the backend's own, not theirs.  Their heartbeats count from now,
 * so that the detectors judge them on what they send from here on.
 */
void
backend_after_stall(struct backend *b, double now, int timeout_ms)
{
	double	 gap = now - b->loop_at - timeout_ms / 1000.0;

	if (b->loop_at > 0 && gap > BACKEND_STALL_S) {
		for (int n = 0; n < b->fleet.n; n++)
			b->fleet.nodes[n].last_seen = now;
		for (int i = 0; i < b->njobs; i++) {
			struct job_state *j = &b->jobs[i];

			for (int r = 0; !job_done(j) && r < j->world; r++) {
				if (j->ranks[r].last_seen > 0)
					j->ranks[r].last_seen = now;
				if (j->ranks[r].kill_sent > 0)
					j->ranks[r].kill_sent = now;
			}
		}
		evloop_timer_set(b->detect_timer, 1.0, 1.0);
	}
	b->loop_at = now;
}
