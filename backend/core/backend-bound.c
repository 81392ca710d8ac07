/*
 * backend-bound.c: nodes whose agent lives only as long as its link, as
 * an agent in an srun step does (fleet_node.bound).  Such a node is down
 * while it has no link: placement gives it no slot, and the console and
 * the events say why, in the launcher's words (srun's).  A link that
 * ends takes the node's ranks with it, so they are lost at once, as a
 * dead agent's are, and the job fails over without waiting for their
 * heartbeats to time out.  Its next hello brings the node back.
 */
#include <stdio.h>
#include <string.h>

#include "backend/core/backend-internal.h"

void
backend_node_down(struct backend *b, int n, const char *why)
{
	struct node_view *nv = &b->nodes[n];
	struct node_spec *pn = &b->placing.nodes[n];
	const char	*name = b->cluster->nodes[n].name;

	nv->up = false;
	pn->cpu_slots = 0;
	pn->cuda_slots = 0;
	/* Said once, not at every retry. */
	if (strcmp(nv->down, why) == 0)
		return;
	snprintf(nv->down, sizeof nv->down, "%s", why);
	backend_event(b, NULL, EV_DOWN, -1, name, "node %s is down: %s; "
	    "placement leaves it out until it answers again", name, why);
}

void
backend_node_back(struct backend *b, int n)
{
	const struct node_spec *ns = &b->cluster->nodes[n];

	if (!b->fleet.nodes[n].bound)
		return;
	b->placing.nodes[n].cpu_slots = ns->cpu_slots;
	b->placing.nodes[n].cuda_slots = ns->cuda_slots;
	if (b->nodes[n].down[0] != '\0')
		backend_event(b, NULL, EV_UP, -1, ns->name, "node %s is back",
		    ns->name);
	b->nodes[n].down[0] = '\0';
}

/* The ranks j had on node n are gone with its link. */
static void
backend_lose_ranks(struct backend *b, struct job_state *j, int n,
    const char *why)
{
	const char	*name = b->cluster->nodes[n].name;
	char		 lost[160];
	bool		 any = false;

	for (int r = 0; r < j->world; r++) {
		struct rank_state *rs = &j->ranks[r];

		if (rs->node != n || rs->phase != RANK_RUNNING)
			continue;
		/* A re-formation or a preemption was stopping it anyway. */
		if (job_reforming(j) || b->preempting) {
			rank_set_phase(b, j, r, RANK_EXITED, "gone with the link "
			    "to %s, which was stopping it", name);
			continue;
		}
		snprintf(lost, sizeof lost, "lost with the link to %s", name);
		job_rank_failed(b, j, r, 9, lost);
		backend_event(b, j->name, EV_FAILED, r, name, "rank %d on %s is "
		    "lost with its node's link (%s)", r, name, why);
		any = true;
	}
	if (any)
		job_failover(b, j);
	job_settle(b, j);
}

void
backend_link_lost(struct backend *b, struct fleet_node *fn)
{
	int	 n = (int)(fn - b->fleet.nodes);
	char	 why[512];

	if (!fn->bound)
		return;
	fleet_link_why(fn, why, sizeof why);
	if (why[0] == '\0')
		snprintf(why, sizeof why, "its link closed");
	else
		fleet_set_why(fn, why);	/* srun's words, for the queue */
	backend_node_down(b, n, why);
	for (int i = 0; i < b->njobs; i++) {
		if (!job_done(&b->jobs[i]) && b->jobs[i].phase != JOB_QUEUED)
			backend_lose_ranks(b, &b->jobs[i], n, why);
	}
}
