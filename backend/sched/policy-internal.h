/*
 * policy-internal.h: what the policy members share with policy.c and
 * policy-state.c: the free slots of the nodes while a decision is made,
 * each job's table sorted for look-ups, keeping a current allocation,
 * placing a count of ranks, and the orders the members start from.
 */
#ifndef HUNTER_POLICY_INTERNAL_H
#define HUNTER_POLICY_INTERNAL_H

#include "backend/sched/policy.h"

/* Tiresias's queue threshold as Pollux's comparison ran it: a job that
 * has attained 16 slot-hours drops to the second queue. */
#define POLICY_QUEUE_S		(16 * 3600.0)

/* One job's table, sorted by ranks, then speedup (best first), then
 * nodes (fewest first): the first row of a count is the one to try. */
struct policy_ix {
	struct policy_row *rows;
	int		 nrows;
	int		*sizes;		/* the counts it may run at, ascending:
					 * in [max(min, 1), max] with a row */
	int		 nsizes;
};

struct policy_state {
	const struct policy_request *req;
	struct policy_reply *reply;
	struct policy_ix *ix;		/* per job */
	int		*free;		/* per node: slots not yet given */
	int		*multi;		/* per node: the job on it that spans
					 * several nodes, or -1 */
	int		 total;		/* slots of the cluster */
	int		 left;		/* of them, not yet given */
	int		*count;		/* per node: the placed job's current
					 * ranks there (0 between calls) */
	int		*order;		/* per job: the order a member takes
					 * them in (pst_order_*) */
	int		*nodes;		/* scratch: nnodes */
};

void	pst_init(struct policy_state *, const struct policy_request *,
	    struct policy_reply *);
void	pst_free(struct policy_state *);

/* The first row of job j at ranks (best speedup, then fewest nodes), or
 * -1 when it is not offered. */
int	pst_row(const struct policy_state *, int j, int ranks);
/* Job j's best speedup at ranks; 0 when not offered. */
double	pst_speedup(const struct policy_state *, int j, int ranks);
/* Whether ranks is a count job j may be given (0 always is). */
bool	pst_size_ok(const struct policy_state *, int j, int ranks);
/* The distinct nodes of n node indices. */
int	pst_distinct(const int *node_of, int n);

/* Whether job j's current allocation may stand now: every node with
 * room, no second multi-node job on one, a row for it unless pinned. */
bool	pst_current_fits(const struct policy_state *, int j);
/* Give job j its current allocation (pst_current_fits said yes). */
void	pst_keep(struct policy_state *, int j);
/* Give job j ranks on the nodes the rows of that count allow, in row
 * order: its current nodes first, then as few racks as hold it, a
 * single node by best fit; 0, or -1 when no row of the count fits now
 * (nothing given). */
int	pst_place(struct policy_state *, int j, int ranks);
/* Take back what job j was given. */
void	pst_release(struct policy_state *, int j);

/* Jobs that are running and may not be preempted keep their place. */
bool	pst_pinned(const struct policy_state *, int j);

/* The size a baseline runs job j at: the largest count it may take. */
int	pst_fixed_size(const struct policy_state *, int j);

/* Order st->order[0 .. njobs) by first come (submitted, then request
 * order), or by Tiresias's queues (attained below POLICY_QUEUE_S first,
 * or promoted by promote(), then first come). */
void	pst_order_fifo(struct policy_state *);
void	pst_order_las(struct policy_state *,
	    bool (*promote)(const struct policy_state *, int j));

extern const struct policy policy_goodput;
extern const struct policy policy_fifo;
extern const struct policy policy_las;

#endif
