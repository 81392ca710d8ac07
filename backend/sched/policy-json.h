/*
 * policy-json.h: the policy's requests and replies as JSON lines, the
 * protocol of `hunter sched decide` (docs/scheduling.md):
 *
 *   {"time": 3600, "interval_s": 60, "restart_s": 30,
 *    "nodes": [{"name": "n0", "slots": 4, "rack": "r0"}, ...],
 *    "jobs": [{"name": "j1", "submitted": 0, "age": 3600,
 *              "attained": 7200, "restarts": 1, "min_ranks": 0,
 *              "max_ranks": 16, "preemptible": true,
 *              "speedup": [[1, 1, 1.0], [1, 2, 1.9], ...]}, ...],
 *    "current": {"j1": ["n0", "n0", "n1"]}}
 *   {"allocations": {"j1": ["n0", "n0", "n0", "n0"], "j2": []}}
 *
 * or {"error": "..."} for a request that cannot be served.
 */
#ifndef HUNTER_POLICY_JSON_H
#define HUNTER_POLICY_JSON_H

#include <stddef.h>

#include "backend/sched/policy.h"

/* The longest request line; a longer one is refused unread. */
#define POLICY_LINE_MAX		(16 << 20)
/* The most JSON arrays a request may hold (speedup rows are arrays):
 * what bounds the memory a parse takes. */
#define POLICY_MAX_ARRAYS	(1 << 20)

/* A parsed request and what it owns. */
struct policy_doc {
	struct policy_request req;
	void		*root;		/* the JSON; names point into it */
	struct policy_node *nodes;
	struct policy_job *jobs;
	struct policy_row *rows;
	int		*current;
	const char	**racks;
};

/* Parse one request line (len bytes, no newline needed).  0, or -1 with
 * the reason in err and nothing to free. */
int	policy_json_read(struct policy_doc *, const char *line, size_t len,
	    char *err, size_t errlen);
void	policy_json_free(struct policy_doc *);

/* A request as its line, without the newline (what a client of the
 * protocol writes; the benchmark times the round trip); free() it. */
char	*policy_json_request(const struct policy_request *);

/* The reply line, or an error line, without the newline; free() it. */
char	*policy_json_reply(const struct policy_request *,
	    const struct policy_reply *);
char	*policy_json_error(const char *msg);

#endif
