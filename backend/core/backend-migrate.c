/*
 * backend-migrate.c: the operator's migrate command (a console key,
 * `hunter ctl JOB migrate R NODE`): checked here, then a re-formation
 * (job_reform in job.c), which stops every rank at one agreed step and
 * relaunches the group as the next generation with rank R on NODE.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xmalloc.h"
#include "backend/core/backend-internal.h"

/* The nodes rank r of j could move to now (up, a free slot, not its
 * own), for a refusal to list: "local1, local3", or "none". */
static const char *
migrate_targets(struct backend *b, const struct job_state *j, int r,
    char *buf, size_t size)
{
	size_t	 o = 0;

	buf[0] = '\0';
	for (int n = 0; n < b->fleet.n && o + 1 < size; n++) {
		if (!b->fleet.nodes[n].up || job_node_free(b, j, n) <= 0 ||
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

	/* A queued job's ranks are on no node yet; a job that is stopping
	 * or re-forming already will not move a rank. */
	if (j->phase != JOB_RUNNING && j->phase != JOB_PAUSED &&
	    j->phase != JOB_PLACING) {
		backend_event(b, j->name, EV_REFUSED, r, node, "migrate: %s is "
		    "%s, not running", j->name, job_phase_name(j->phase));
		return -1;
	}
	/* Name the argument that is wrong, and where the rank could go. */
	if (r < 0 || r >= j->world) {
		backend_event(b, j->name, EV_REFUSED, r, node, "migrate: %s has "
		    "no rank %d (its ranks are 0..%d)", j->name, r,
		    j->world - 1);
		return -1;
	}
	if (fn == NULL) {
		backend_event(b, j->name, EV_REFUSED, r, node, "migrate: no node "
		    "'%s' in the cluster; rank %d of %s could move to: %s",
		    node != NULL ? node : "", r, j->name,
		    migrate_targets(b, j, r, targets, sizeof targets));
		return -1;
	}
	to = (int)(fn - b->fleet.nodes);
	if (!fn->up) {		/* never onto a dead node */
		backend_event(b, j->name, EV_REFUSED, r, node, "rank %d cannot "
		    "move to %s: its agent is unreachable%s%s", r, node,
		    fn->why[0] != '\0' ? ": " : "", fn->why);
		return -1;
	}
	if (to == j->ranks[r].node || job_node_free(b, j, to) <= 0) {
		backend_event(b, j->name, EV_REFUSED, r, node, "rank %d cannot "
		    "move to %s: %s; it could move to: %s", r, node,
		    to == j->ranks[r].node ? "it is there already" :
		    "no free slot", migrate_targets(b, j, r, targets,
		    sizeof targets));
		return -1;
	}
	node_of = xcalloc((size_t)j->world, sizeof *node_of);
	for (int i = 0; i < j->world; i++)
		node_of[i] = j->ranks[i].node;
	node_of[r] = to;
	if (job_reform(b, j, node_of, EV_MIGRATED, "rank %d: %s -> %s (%s)",
	    r, b->cluster->nodes[j->ranks[r].node].name, node,
	    json_string_value(json_object_get(cmd, "reason")) ?: "operator") != 0) {
		backend_event(b, j->name, EV_REFUSED, r, node, "a re-formation "
		    "is already under way");
		free(node_of);
		return -1;
	}
	free(node_of);
	return 0;
}
