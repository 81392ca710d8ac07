/*
 * policy-las.c: Tiresias's discretised two-dimensional least attained
 * service (Gu et al., "Tiresias: A GPU Cluster Manager for Distributed
 * Deep Learning", NSDI '19), as Pollux's comparison ran it: two queues,
 * the second for jobs that have attained POLICY_QUEUE_S slot-seconds,
 * first come within each; jobs are admitted in that order while their
 * size fits the slots left, the rest are preempted or wait; an admitted
 * job keeps its nodes, a new one is placed.  Each job runs at one fixed
 * size; no starvation guard (Pollux ran it without).
 */
#include "backend/sched/policy-internal.h"

static void
las_decide(const struct policy_request *req, struct policy_reply *rep)
{
	struct policy_state st;
	int	 room;

	pst_init(&st, req, rep);
	for (int j = 0; j < req->njobs; j++) {
		if (pst_pinned(&st, j) && pst_current_fits(&st, j))
			pst_keep(&st, j);
	}
	room = st.left;
	pst_order_las(&st, NULL);
	/* Admit by count, keeping the nodes of those that run; mark the
	 * others -1 to place them once every kept job holds its nodes. */
	for (int k = 0; k < req->njobs; k++) {
		int	 j = st.order[k], size = pst_fixed_size(&st, j);

		if (rep->n[j] > 0 || size == 0 || size > room)
			continue;
		room -= size;
		if (pst_current_fits(&st, j) && req->jobs[j].ncurrent == size)
			pst_keep(&st, j);
		else
			rep->n[j] = -1;		/* admitted, to be placed */
	}
	for (int k = 0; k < req->njobs; k++) {
		int	 j = st.order[k];

		if (rep->n[j] != -1)
			continue;
		rep->n[j] = 0;
		(void)pst_place(&st, j, pst_fixed_size(&st, j));
	}
	pst_free(&st);
}

const struct policy policy_las = {
	.name = "las",
	.summary = "Tiresias's two-queue least attained service at one size "
	    "each, preemptive",
	.elastic = false,
	.decide = las_decide,
};
