/*
 * backend-detect.c: the detectors.  Once a second they read the state model and,
 * following each job's policy, act without the operator:
 *
 *  - a rank whose heartbeat is older than policy.failover.heartbeat_timeout
 *    is killed, which makes it a dead rank: failover;
 *  - a straggler, whose compute time per step over the window
 *    (policy.failover.for) is more than twice the median of the others', or
 *    a rank whose compute share of the time it does not spend waiting on
 *    peers stays under policy.failover.low_util while the others' median
 *    does not, is migrated to a free spare node;
 *  - a rank whose memory (RSS) grows steadily -- the least-squares slope
 *    over the last policy.leak.check_every steps, times check_every, over
 *    policy.leak.growth_limit -- is checkpointed and restarted;
 *  - the ranks of a re-formation that do not exit in time are killed.
 *
 * Each decision goes to the journal and the events with its reason.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xmalloc.h"
#include "backend/proto/proto.h"
#include "backend/core/backend-internal.h"

static int
cmp_double(const void *a, const void *b)
{
	double	 x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The mean of the last n values of a series (n clamped to its length). */
static double
series_mean(const struct series *s, int n)
{
	double	 sum = 0;

	if (n > s->len)
		n = s->len;
	if (n <= 0)
		return 0;
	for (int i = s->len - n; i < s->len; i++)
		sum += series_get(s, i);
	return sum / n;
}

static void
kill_rank(struct backend *b, struct job_state *j, int r)
{
	json_t	*m = json_pack("{s:s, s:s, s:s, s:i}", "t", MSG_CMD, "cmd",
	    "kill", "job", j->name, "rank", r);

	fleet_send(&b->fleet.nodes[j->ranks[r].node], m);
	json_decref(m);
}

static int
free_spare(struct backend *b, const struct job_state *j)
{
	for (int n = 0; n < b->fleet.n; n++) {
		const struct node_spec *ns = &b->cluster->nodes[n];

		if (ns->spare && b->fleet.nodes[n].fd >= 0 &&
		    ns->cpu_slots - b->used[n] > 0 &&
		    j->spec.resources.device == DEVICE_CPU)
			return n;
	}
	return -1;
}

static void
migrate_to_spare(struct backend *b, struct job_state *j, int r,
    const char *why)
{
	int	 spare = free_spare(b, j), *node_of;

	if (spare < 0)
		return;		/* nowhere better to go */
	node_of = xcalloc((size_t)j->world, sizeof *node_of);
	for (int i = 0; i < j->world; i++)
		node_of[i] = j->ranks[i].node;
	node_of[r] = spare;
	backend_restart(b, j, node_of, "migrated", "rank %d: %s -> %s (%s)", r,
	    b->cluster->nodes[j->ranks[r].node].name,
	    b->cluster->nodes[spare].name, why);
	free(node_of);
}

/*
 * Least-squares slope of RSS against step over the samples of the last
 * `steps` steps, in bytes per step.  Only a full window is judged: the
 * samples must reach back `steps` steps.  A rank's first steps touch its
 * buffers for the first time (the model at its micro-batch, the prefetch
 * queue), and a short history made of little else would read that
 * warm-up as a leak.
 */
static int
rss_slope(const struct rank_state *rs, long steps, double *slope)
{
	double	 sx = 0, sy = 0, sxx = 0, sxy = 0, n = 0;
	long	 newest;
	int	 full = 0;

	if (rs->h_step.len < 4)
		return -1;
	newest = (long)series_get(&rs->h_step, rs->h_step.len - 1);
	for (int i = rs->h_step.len - 1; i >= 0; i--) {
		double x = series_get(&rs->h_step, i);
		double y = series_get(&rs->h_rss, i);

		if (x < newest - steps) {
			full = 1;
			break;
		}
		sx += x;
		sy += y;
		sxx += x * x;
		sxy += x * y;
		n++;
	}
	if (!full || n < 4 || n * sxx - sx * sx <= 0)
		return -1;
	*slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
	return 0;
}

/* The median of v[0..n) without v[skip]. */
static double
median_others(const double *v, int n, int skip)
{
	double	 tmp[1024];
	int	 k = 0;

	for (int i = 0; i < n; i++) {
		if (i != skip)
			tmp[k++] = v[i];
	}
	if (k == 0)
		return 0;
	qsort(tmp, (size_t)k, sizeof *tmp, cmp_double);
	return k % 2 ? tmp[k / 2] : (tmp[k / 2 - 1] + tmp[k / 2]) / 2;
}

/* A straggler (compute per step over twice the others' median), else a
 * rank busy under the utilisation threshold while the others' median is
 * not: migrate it.  Utilisation is compute over the step less the time
 * spent waiting on peers, so a rank that waits for a straggler is not
 * blamed.  Returns whether it acted. */
static int
detect_slow(struct backend *b, struct job_state *j, const double *compute,
    const double *share, int nr, int window)
{
	char	 why[256];
	double	 med;

	for (int r = 0; r < nr; r++) {
		med = median_others(compute, nr, r);
		if (med > 0 && compute[r] > 2 * med) {
			snprintf(why, sizeof why, "straggler: %.1f ms of compute "
			    "per step against a median of %.1f ms over %d s",
			    compute[r], med, window);
			migrate_to_spare(b, j, r, why);
			return 1;
		}
	}
	for (int r = 0; r < nr; r++) {
		med = median_others(share, nr, r);
		if (share[r] < j->spec.policy.low_util &&
		    med >= j->spec.policy.low_util) {
			snprintf(why, sizeof why, "utilisation %.0f%% under %.0f%% "
			    "for %d s (the others: %.0f%%)", 100 * share[r],
			    100 * j->spec.policy.low_util, window, 100 * med);
			migrate_to_spare(b, j, r, why);
			return 1;
		}
	}
	return 0;
}

/*
 * A re-formation waits for the old group to exit.  Ranks that linger past
 * the timeout are killed; ranks whose agent does not answer even that are
 * left behind (they fail on their own once they run again, and their
 * frames belong to an old generation, which the backend ignores).
 */
static void
detect_lingering(struct backend *b, struct job_state *j, double now)
{
	double	 hb = j->spec.policy.heartbeat_timeout_s, t = now - j->restart.since;

	for (int r = 0; r < j->world; r++) {
		struct rank_state *rs = &j->ranks[r];

		if (rs->status != RANK_RUNNING)
			continue;
		if (t > hb + 5 && rs->kill_sent == 0) {
			kill_rank(b, j, r);
			rs->kill_sent = now;
		} else if (t > 2 * hb + 10) {
			backend_event(b, j->name, "failover", r,
			    b->cluster->nodes[rs->node].name, "rank %d of "
			    "generation %d does not exit; leaving it behind", r,
			    j->generation);
			rs->status = RANK_EXITED;
		}
	}
	backend_job_done(b, j);
}

static void
detect_job(struct backend *b, struct job_state *j, double now)
{
	const struct job_spec *sp = &j->spec;
	int	 window = (int)sp->policy.low_util_for_s, nr = 0;
	double	 compute[1024], share[1024];

	double	 hb = sp->policy.heartbeat_timeout_s;

	if (j->restart.pending) {
		detect_lingering(b, j, now);
		return;
	}
	if (j->fail_since > 0 && now - j->fail_since >= 2) {
		backend_choose_failover(b, j);	/* no signalled rank showed up */
		backend_job_done(b, j);
		return;
	}
	if (now < j->grace_until || j->paused)
		return;
	for (int r = 0; r < j->world; r++) {
		struct rank_state *rs = &j->ranks[r];
		const char *node = b->cluster->nodes[rs->node].name;

		if (rs->status != RANK_RUNNING || rs->paused ||
		    now - rs->last_seen <= hb)
			continue;
		if (rs->kill_sent == 0) {
			backend_event(b, j->name, "failover", r, node, "rank %d: "
			    "no heartbeat for %.0f s (timeout %.0f s); killing it",
			    r, now - rs->last_seen, hb);
			kill_rank(b, j, r);
			rs->kill_sent = now;
			return;
		}
		if (now - rs->kill_sent > hb) {
			/* Its agent did not act on the kill: the node is lost
			 * (stopped, cut off).  Go on without it. */
			rs->status = RANK_FAILED;
			rs->exit_signal = 9;
			snprintf(rs->exit_reason, sizeof rs->exit_reason,
			    "lost: no heartbeat and no answer from the agent "
			    "of %s", node);
			backend_choose_failover(b, j);
			backend_job_done(b, j);
			return;
		}
	}
	/* Stragglers and low utilisation need a full window of samples. */
	if (window < 1)
		window = 1;
	for (int r = 0; r < j->world && r < 1024; r++) {
		const struct rank_state *rs = &j->ranks[r];
		double	 busy = series_mean(&rs->h_step_ms, window) -
		    series_mean(&rs->h_comm_ms, window);

		if (rs->h_compute_ms.len < window) {
			nr = 0;
			break;
		}
		compute[r] = series_mean(&rs->h_compute_ms, window);
		share[r] = busy > 0 ? compute[r] / busy : 1;
		nr++;
	}
	if (nr >= 2 && detect_slow(b, j, compute, share, nr, window))
		return;
	for (int r = 0; r < j->world; r++) {
		double	 slope;
		long	 every = sp->policy.leak_check_every;

		if (rss_slope(&j->ranks[r], every, &slope) != 0 ||
		    slope * every <= (double)sp->policy.leak_growth_limit)
			continue;
		{
			int *node_of = xcalloc((size_t)j->world, sizeof *node_of);

			for (int i = 0; i < j->world; i++)
				node_of[i] = j->ranks[i].node;
			backend_restart(b, j, node_of, "restarted", "rank %d: "
			    "memory grows %.1f MiB per %ld steps (limit %.1f "
			    "MiB); checkpoint and restart", r,
			    slope * every / 1048576.0, every,
			    sp->policy.leak_growth_limit / 1048576.0);
			free(node_of);
		}
		return;
	}
}

void
detect_tick(struct backend *b, double now)
{
	for (int i = 0; i < b->njobs; i++) {
		if (!b->jobs[i].done)
			detect_job(b, &b->jobs[i], now);
	}
}
