/*
 * policy.h: the cluster's scheduling policy, as a pure function
 * (docs/scheduling.md).  A request goes in: the nodes with their slots
 * and racks; the jobs with their speedup tables ([nodes, ranks, speedup]
 * rows: a (nodes, ranks) pair that is not a row is not offered), age,
 * attained service, restarts, min and max ranks and whether they may be
 * preempted; and the current allocations.  Out comes an allocation for
 * every job: a node for each of its ranks, none for a job that waits.
 *
 * The members are a const table (policy.c), one policy-NAME.c each:
 * goodput (Pollux's objective with Tiresias's order), and the baselines
 * fifo (hunter's queue: first come, backfilled, never preempted) and las
 * (Tiresias's two-queue least attained service).  Every member keeps
 * what policy_verify checks: no node given more ranks than its slots, no
 * node shared by two jobs that each span several nodes, min and max
 * kept, only offered rows used, a job that may not be preempted left
 * where it runs.  `hunter sched decide` reads and writes requests as JSON
 * lines (policy-json.c); `hunter sim` and the backend call policy_decide
 * on the structs.
 */
#ifndef HUNTER_POLICY_H
#define HUNTER_POLICY_H

#include <stdbool.h>
#include <stddef.h>

/* Bounds of a request, so that a hostile one is refused, not served:
 * far beyond a cluster hunter runs (1024 nodes x 200 jobs is the
 * benchmark), small enough that a request is parsed in well under a
 * second and a few hundred MB. */
#define POLICY_MAX_NODES	65536
#define POLICY_MAX_JOBS		65536
#define POLICY_MAX_SLOTS	65536		/* on one node */
#define POLICY_MAX_TOTAL	(1 << 24)	/* slots of the cluster */
#define POLICY_MAX_ROWS		65536		/* in one job's table */
#define POLICY_MAX_NAME		256		/* bytes of a name */

struct policy_row {
	int	 nodes, ranks;		/* 1 <= nodes <= ranks */
	double	 speedup;		/* finite, >= 0 */
};

struct policy_node {
	const char	*name;
	int		 slots;		/* >= 0 */
	int		 rack;		/* index into policy_request.racks */
};

struct policy_job {
	const char	*name;
	double		 submitted;	/* seconds, any origin */
	double		 age;		/* seconds since submission */
	double		 attained;	/* slot-seconds of service so far */
	int		 restarts;	/* re-allocations so far */
	int		 min_ranks;	/* the least it runs on (0 counts as 1) */
	int		 max_ranks;	/* the most */
	bool		 preemptible;	/* false: once running, left as it is */
	const struct policy_row *rows;
	int		 nrows;
	const int	*current;	/* a node index per rank; may be NULL */
	int		 ncurrent;
};

struct policy_request {
	double		 time;		/* now, on the jobs' clock */
	double		 interval_s;	/* until the next decision */
	double		 restart_s;	/* what a re-allocation costs a job */
	const struct policy_node *nodes;
	int		 nnodes;
	const char *const *racks;
	int		 nracks;
	const struct policy_job *jobs;
	int		 njobs;
};

/* Job j's allocation: n[j] ranks on node_of[j][0 .. n[j]). */
struct policy_reply {
	int		 njobs;
	int		*n;
	int		**node_of;
};

struct policy {
	const char	*name;
	const char	*summary;	/* a line for --help and the docs */
	/* Whether it sizes jobs within min..max; the baselines run each
	 * job at one size, the largest of its table within max (as a user
	 * who asked for a fixed count). */
	bool		 elastic;
	/* Fill reply (allocated, every n 0) for a request that
	 * policy_check passed. */
	void		(*decide)(const struct policy_request *,
			    struct policy_reply *);
};

extern const struct policy *const policy_table[];

/* The member called name, or NULL. */
const struct policy *policy_find(const char *name);

/* Whether a request is one a policy may be given (bounds, names unique,
 * rows well formed, current allocations on known nodes within their
 * slots).  0, or -1 with the reason, naming the job, node or row. */
int	policy_check(const struct policy_request *, char *err, size_t errlen);

/* Whether a reply keeps the rules above.  0, or -1 with the first broken. */
int	policy_verify(const struct policy_request *, const struct policy_reply *,
	    char *err, size_t errlen);

/* Check the request, decide, verify the reply.  0 with reply filled (free
 * it with policy_reply_free), or -1 with the reason and reply empty; what
 * reply held before is overwritten, not freed. */
int	policy_decide(const struct policy *, const struct policy_request *,
	    struct policy_reply *, char *err, size_t errlen);

void	policy_reply_free(struct policy_reply *);

#endif
