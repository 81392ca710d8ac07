/*
 * detect-heartbeat.c: a running rank whose last metrics are older than
 * policy.failover.heartbeat_timeout is killed, which makes it a dead
 * rank and brings the failover.  When its agent does not act on the kill
 * within the timeout either, the node is lost (stopped, cut off): the
 * rank is marked lost and the job goes on without it.  When its node has
 * been silent as long (nothing from its agent, whose node metrics come
 * every second: a partition, a stopped agent), no kill can reach it and
 * none is waited for: it is lost at once.  One rank a round.
 */
#include "backend/sched/detect-internal.h"

static int
heartbeat_run(const struct detect_job *job, struct detect_decision *out,
    int max)
{
	double	 hb = job->spec->policy.heartbeat_timeout_s, now = job->now;

	if (max < 1)
		return 0;
	for (int r = 0; r < job->world; r++) {
		const struct detect_rank *rk = &job->ranks[r];
		const struct detect_node *nd = &job->nodes[rk->node];

		if (!detect_rank_silent(job, r))
			continue;
		if (detect_node_silent(job, rk->node)) {
			if (nd->up)
				detect_decide(&out[0], DETECT_LOST, r, -1, "lost: "
				    "no heartbeat for %.0f s, and nothing from the "
				    "agent of %s for %.0f s", now - rk->last_seen,
				    nd->name, now - nd->heard);
			else
				detect_decide(&out[0], DETECT_LOST, r, -1, "lost: "
				    "no heartbeat for %.0f s, and no link to the "
				    "agent of %s", now - rk->last_seen, nd->name);
			return 1;
		}
		if (rk->kill_sent == 0) {
			detect_decide(&out[0], DETECT_KILL, r, -1, "rank %d: no "
			    "heartbeat for %.0f s (timeout %.0f s); killing it",
			    r, now - rk->last_seen, hb);
			return 1;
		}
		if (now - rk->kill_sent > hb) {
			detect_decide(&out[0], DETECT_LOST, r, -1, "lost: no "
			    "heartbeat and no answer from the agent of %s",
			    nd->name);
			return 1;
		}
	}
	return 0;
}

const struct detector detect_heartbeat = {
	.name = "heartbeat",
	.run = heartbeat_run,
};
