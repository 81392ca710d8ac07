/*
 * policy-fifo.c: the first-come baseline, hunter's queue as it was
 * before the scheduler (backend/sched/queue.c): a running job keeps its
 * allocation until it ends; waiting jobs are taken in the order they were
 * submitted, each at one fixed size, and one that does not fit now lets
 * the smaller ones behind it go first (backfill).
 */
#include "backend/sched/policy-internal.h"

static void
fifo_decide(const struct policy_request *req, struct policy_reply *rep)
{
	struct policy_state st;

	pst_init(&st, req, rep);
	pst_order_fifo(&st);
	for (int k = 0; k < req->njobs; k++) {
		int	 j = st.order[k];

		if (pst_current_fits(&st, j))
			pst_keep(&st, j);
	}
	for (int k = 0; k < req->njobs; k++) {
		int	 j = st.order[k], size = pst_fixed_size(&st, j);

		if (rep->n[j] == 0 && size > 0)
			(void)pst_place(&st, j, size);
	}
	pst_free(&st);
}

const struct policy policy_fifo = {
	.name = "fifo",
	.summary = "first come, first served at one size each, backfilled, "
	    "never preempted (hunter's queue)",
	.elastic = false,
	.decide = fifo_decide,
};
