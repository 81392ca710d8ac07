/*
 * goodput.h: a job's goodput, as pure functions (Pollux: Qiao et al.,
 * "Pollux: Co-adaptive Cluster Scheduling for Goodput-Optimized Deep
 * Learning", OSDI '21, section 3; docs/scheduling.md).
 *
 * Throughput.  A step of K ranks on N nodes, each rank running accum
 * micro-batches of m samples, takes
 *
 *   T_c(m)    = alpha_c + beta_c m                  one micro-batch's compute
 *   T_x(N, K) = 0                                   K = 1
 *             = alpha_r + beta_r max(K - 2, 0)      N = 1 (within a node)
 *             = alpha_n + beta_n max(K - 2, 0)      N > 1 (across nodes)
 *   T_step    = (accum - 1) T_c + (T_c^g + T_x^g)^(1/g)
 *
 * where g in [1, 10] is how far the exchange overlaps the last backward
 * (1: not at all, hunter's default; 10: about fully).  The parameters
 * are fitted from observations of steps (goodput_fit).
 *
 * Statistical efficiency.  With the gradient noise scale phi (in
 * samples: tr(Sigma) / |G|^2, what backend/worker/adaptive.c estimates
 * from each rank's own gradient norm against the aggregate's), a step at
 * global batch M makes the progress of (phi + M0) / (phi + M) steps at
 * M0 samples a sample, M0 being the batch the job was written for.
 *
 * Goodput = throughput (samples/s) x efficiency: samples at M0 a second.
 * A job's speedup at (N, K) is its best goodput there, over the
 * micro-batch, the accumulation and (for an adaptive batch) the global
 * batch, against its best on one rank of one node.
 */
#ifndef HUNTER_GOODPUT_H
#define HUNTER_GOODPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "backend/spec/spec.h"
#include "backend/sched/policy.h"

/* One configuration's measured steps: what the ranks report (rank
 * metrics step_ms and comm_ms, micro_batch, accum) and where they ran. */
struct goodput_obs {
	int	 nodes;		/* hosts, as the exchange crosses them */
	int	 ranks;
	int	 micro;		/* samples a micro-batch, a rank */
	int	 accum;		/* micro-batches a step */
	double	 step_s;	/* a whole step */
	double	 exchange_s;	/* of it, the exchange */
};

struct goodput_model {
	double	 alpha_c, beta_c;	/* seconds; seconds a sample */
	double	 alpha_r, beta_r;	/* within a node: seconds; a rank past 2 */
	double	 alpha_n, beta_n;	/* across nodes, likewise */
	double	 gamma;			/* overlap, [1, 10] */
	int	 max_ranks;		/* the most ranks observed */
};

/* What the batch choice of one job may use. */
struct goodput_job {
	struct goodput_model model;
	double	 noise_scale;	/* phi, samples; < 0 unknown: a larger
				 * batch is assumed to buy nothing */
	int	 batch0;	/* M0: the fixed batch, an adaptive one's min */
	int	 batch_max;	/* == batch0 for a fixed batch */
	int	 micro_max;	/* the largest micro-batch a rank fits */
	int	 micro_fixed;	/* train.batch.micro; 0: auto (any that
				 * divides a rank's share) */
	int	 min_ranks;	/* > 0: an adaptive batch whose noise scale
				 * is unknown runs at goodput_batch_rule's
				 * batch, efficiency 1, in the speedups */
};

struct goodput_choice {
	int	 micro, accum, batch;	/* batch = ranks x micro x accum */
	double	 step_s;
	double	 throughput;		/* samples/s */
	double	 efficiency;
	double	 goodput;		/* throughput x efficiency */
};

/*
 * Fit the model to n observations (n >= 1): g by a search over [1, 10];
 * for each g the compute times the steps imply, a least-squares line in
 * the micro-batch, and lines for the exchange within and across nodes in
 * the ranks; the g whose predicted step times are nearest in log wins,
 * the smaller on a tie.  What was never observed is assumed as Pollux
 * does, optimistically: a single micro-batch size splits its compute time
 * half fixed and half per sample; no exchange within a node seen, none;
 * none across nodes, the same as within.  0, or -1 with the reason.
 */
int	goodput_fit(const struct goodput_obs *, int n, struct goodput_model *,
	    char *err, size_t errlen);

double	goodput_compute_s(const struct goodput_model *, int micro);
double	goodput_exchange_s(const struct goodput_model *, int nodes, int ranks);
double	goodput_step_s(const struct goodput_model *, int nodes, int ranks,
	    int micro, int accum);

/* (phi + batch0) / (phi + batch); phi < 0 reads as 0. */
double	goodput_efficiency(double noise_scale, double batch0, double batch);

/*
 * The best goodput at (nodes, ranks), with the configuration in choice
 * (may be NULL).  A fixed batch must split evenly over the ranks and
 * into micro-batches of at most micro_max; an adaptive one is searched
 * between batch0 and batch_max.  0 when nothing fits (ranks > batch).
 */
double	goodput_best(const struct goodput_job *, int nodes, int ranks,
	    struct goodput_choice *);

/*
 * The rule for an adaptive batch without a fitted model or a noise
 * scale: each rank keeps the share of batch0 it had at min_ranks
 * (batch0 x ranks / min_ranks), clipped to batch_max and rounded down
 * to a multiple of ranks x micro_fixed (ranks with micro auto), but
 * never below batch0 rounded up to one.  0 when no such multiple lies
 * in [batch0, batch_max].
 */
int	goodput_batch_rule(const struct goodput_job *, int ranks);

/*
 * The global batch of an adaptive job on (nodes, ranks): with a fitted
 * model (fitted) and a known noise scale, goodput_best's there; else
 * goodput_batch_rule's.  A fixed batch: batch0 when ranks split it, else
 * 0.  0 when nothing in [batch0, batch_max] splits over the ranks.
 */
int	goodput_batch(const struct goodput_job *, bool fitted, int nodes,
	    int ranks);

/*
 * The speedup table: a row for each ranks in [1, max_ranks] that fits,
 * on each node count from ceil(ranks / slots_per_node) to
 * min(ranks, max_nodes), relative to goodput_best at (1, 1) (with
 * min_ranks set and the noise unknown, at each count's rule batch).  Rows
 * into out, at most max; returns how many (0 when even one rank fits
 * nothing).
 */
int	goodput_speedups(const struct goodput_job *, int max_ranks,
	    int slots_per_node, int max_nodes, struct policy_row *out, int max);

/*
 * The learning rate for an adaptive batch of batch samples, from lr.base
 * given for train.batch.global.min (hunter(1), Elastic jobs): AdamW by
 * the square-root rule, base sqrt(batch / min); SGD by AdaScale's gain,
 * base (batch / min) (phi + min) / (phi + batch), which is 1 at min and
 * grows to the linear rule as the noise dominates; the square-root rule
 * while phi is unknown (< 0).  A fixed batch keeps lr.base.
 */
double	goodput_lr(const struct job_spec *, int batch, double noise_scale);

#endif
