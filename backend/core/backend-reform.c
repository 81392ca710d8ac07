/*
 * backend-reform.c: re-forming a job.  Failover (a rank died: move it to
 * a free spare, or give up when it cannot help), migration (the operator
 * or the straggler detector moves a rank) and restarts (the leak
 * detector) all stop every rank at one agreed step and relaunch the whole
 * group as the next generation from the newest checkpoint
 * (backend_relaunch in backend-jobs.c, once every rank has exited).  Each
 * decision goes to the journal with its reason.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/utf8.h"
#include "lib/xmalloc.h"
#include "backend/proto/proto.h"
#include "backend/core/backend-internal.h"
#include "backend/core/backend-program.h"

/* Slots of node n a job may take: spares count, for migration and
 * failover. */
static int
node_free(struct backend *b, const struct job_state *j, int n)
{
	const struct node_spec *ns = &backend_placing(b)->nodes[n];
	int	 slots = j->spec.resources.device == DEVICE_CUDA ?
	    ns->cuda_slots : ns->cpu_slots;

	return slots - b->used[n];
}

int
backend_restart(struct backend *b, struct job_state *j, const int *node_of,
    const char *kind, const char *fmt, ...)
{
	va_list	 ap;
	json_t	*rec;
	char	 err[128];

	if (j->done || j->restart.pending)
		return -1;
	j->restart.pending = true;
	j->restart.since = clock_mono();
	j->restart.node_of = xcalloc((size_t)j->world, sizeof(int));
	memcpy(j->restart.node_of, node_of, sizeof(int) * (size_t)j->world);
	snprintf(j->restart.kind, sizeof j->restart.kind, "%s", kind);
	j->total.failovers += strcmp(kind, "failover") == 0;
	va_start(ap, fmt);
	vsnprintf(j->restart.reason, sizeof j->restart.reason, fmt, ap);
	va_end(ap);
	utf8_fix(j->restart.reason, sizeof j->restart.reason);
	rec = proto_pack(err, sizeof err, "{s:s, s:s, s:s, s:s, s:i}", "t",
	    MSG_DECISION, "job", j->name, "kind", kind, "reason",
	    j->restart.reason, "generation", j->generation);
	if (rec == NULL || journal_append(b->journal, rec) != 0)
		backend_event(b, j->name, "refused", -1, NULL, "the journal "
		    "did not take the decision (%s): %s", kind, rec == NULL ?
		    err : strerror(errno));
	json_decref(rec);
	backend_send_cmd(b, j, JOB_CMD_STOP);
	return 0;
}

/* Of the failed ranks, the one to move: one killed by a signal if there
 * is one (the others died of its death), else the first. */
void
backend_choose_failover(struct backend *b, struct job_state *j)
{
	int	 victim = -1;

	if (j->restart.pending || b->preempting || (j->prog != NULL &&
	    (j->prog->giving_up || j->prog->tune.active)))
		return;
	for (int r = 0; r < j->world; r++) {
		if (j->ranks[r].status != RANK_FAILED)
			continue;
		if (victim < 0 || (j->ranks[r].exit_signal != 0 &&
		    j->ranks[victim].exit_signal == 0))
			victim = r;
	}
	if (victim < 0)
		return;
	j->fail_since = 0;
	backend_failover(b, j, victim, j->ranks[victim].exit_reason);
}

/* A rank died (not as part of a re-formation): move it to a free spare
 * if there is one, and re-form from the newest checkpoint. */
void
backend_failover(struct backend *b, struct job_state *j, int rank,
    const char *why)
{
	int	*node_of, from = j->ranks[rank].node, to = from;

	if (j->restarts >= j->spec.policy.max_restarts) {
		snprintf(j->reason, sizeof j->reason, "rank %d: %s; %d "
		    "re-formations already, giving up", rank, why, j->restarts);
		backend_event(b, j->name, "failed", rank, NULL, "%s", j->reason);
		if (j->prog != NULL)
			backend_program_give_up(b, j);
		return;
	}
	for (int n = 0; n < b->fleet.n; n++) {
		if (b->cluster->nodes[n].spare && node_free(b, j, n) > 0 &&
		    b->fleet.nodes[n].fd >= 0) {
			to = n;
			break;
		}
	}
	/* A rank that exited by itself before its first step (no CUDA
	 * device, an unreadable data path) fails the same way again on the
	 * same node: with no spare to try, the job fails now. */
	if (to == from && j->ranks[rank].step == 0 &&
	    j->ranks[rank].exit_signal == 0) {
		snprintf(j->reason, sizeof j->reason, "rank %d on %s: %s "
		    "before its first step, and no spare node is free to try; "
		    "not restarting", rank, b->cluster->nodes[from].name, why);
		backend_event(b, j->name, "failed", rank, NULL, "%s", j->reason);
		if (j->prog != NULL)
			backend_program_give_up(b, j);
		return;
	}
	node_of = xcalloc((size_t)j->world, sizeof *node_of);
	for (int r = 0; r < j->world; r++)
		node_of[r] = j->ranks[r].node;
	node_of[rank] = to;
	backend_restart(b, j, node_of, "failover", "rank %d on %s: %s; rank %d "
	    "moves to %s", rank, b->cluster->nodes[from].name, why, rank,
	    b->cluster->nodes[to].name);
	free(node_of);
}

/* The nodes rank r of j could move to now (up, a free slot, not its
 * own), for a refusal to list: "local1, local3", or "none". */
static const char *
migrate_targets(struct backend *b, const struct job_state *j, int r,
    char *buf, size_t size)
{
	size_t	 o = 0;

	buf[0] = '\0';
	for (int n = 0; n < b->fleet.n && o + 1 < size; n++) {
		if (!b->fleet.nodes[n].up || node_free(b, j, n) <= 0 ||
		    (r >= 0 && r < j->world && n == j->ranks[r].node))
			continue;
		o += (size_t)snprintf(buf + o, size - o, "%s%s", o > 0 ? ", " :
		    "", b->cluster->nodes[n].name);
	}
	if (o >= size)
		buf[size - 1] = '\0';
	return buf[0] != '\0' ? buf : "none";
}

int
backend_migrate(struct backend *b, struct job_state *j, const json_t *cmd)
{
	json_t		*rj = json_object_get(cmd, "rank");
	const char	*node = json_string_value(json_object_get(cmd, "node"));
	struct fleet_node *fn = node != NULL ? fleet_find(&b->fleet, node) : NULL;
	int		 r = json_is_integer(rj) ? (int)json_integer_value(rj) : -1;
	int		*node_of, to;
	char		 targets[512];

	/* Name the argument that is wrong, and where the rank could go. */
	if (r < 0 || r >= j->world) {
		backend_event(b, j->name, "refused", r, node, "migrate: %s has "
		    "no rank %d (its ranks are 0..%d)", j->name, r,
		    j->world - 1);
		return -1;
	}
	if (fn == NULL) {
		backend_event(b, j->name, "refused", r, node, "migrate: no node "
		    "'%s' in the cluster; rank %d of %s could move to: %s",
		    node != NULL ? node : "", r, j->name,
		    migrate_targets(b, j, r, targets, sizeof targets));
		return -1;
	}
	to = (int)(fn - b->fleet.nodes);
	if (!fn->up) {		/* never onto a dead node */
		backend_event(b, j->name, "refused", r, node, "rank %d cannot "
		    "move to %s: its agent is unreachable%s%s", r, node,
		    fn->why[0] != '\0' ? ": " : "", fn->why);
		return -1;
	}
	if (to == j->ranks[r].node || node_free(b, j, to) <= 0) {
		backend_event(b, j->name, "refused", r, node, "rank %d cannot "
		    "move to %s: %s; it could move to: %s", r, node,
		    to == j->ranks[r].node ? "it is there already" :
		    "no free slot", migrate_targets(b, j, r, targets, sizeof targets));
		return -1;
	}
	node_of = xcalloc((size_t)j->world, sizeof *node_of);
	for (int i = 0; i < j->world; i++)
		node_of[i] = j->ranks[i].node;
	node_of[r] = to;
	if (backend_restart(b, j, node_of, "migrated", "rank %d: %s -> %s (%s)",
	    r, b->cluster->nodes[j->ranks[r].node].name, node,
	    json_string_value(json_object_get(cmd, "reason")) ?: "operator") != 0) {
		backend_event(b, j->name, "refused", r, node, "a re-formation "
		    "is already under way");
		free(node_of);
		return -1;
	}
	free(node_of);
	return 0;
}
