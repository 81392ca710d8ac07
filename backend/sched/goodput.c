/*
 * goodput.c: the throughput model's predictions, statistical efficiency,
 * the batch choice, the speedup table and the learning rate rule
 * (goodput.h), the global batch of an adaptive job (goodput_batch).  The
 * fit is goodput-fit.c.
 */
#include <math.h>

#include "backend/sched/goodput.h"

/* Global batches an adaptive job is tried at between its min and max,
 * spaced geometrically (Pollux samples 50; the step time is smooth in
 * the batch and this many land within a few percent of its best). */
#define GOODPUT_BATCHES	24

double
goodput_compute_s(const struct goodput_model *m, int micro)
{
	return m->alpha_c + m->beta_c * micro;
}

double
goodput_exchange_s(const struct goodput_model *m, int nodes, int ranks)
{
	double	 past = ranks > 2 ? ranks - 2 : 0;

	if (ranks < 2)
		return 0;
	if (nodes > 1)
		return m->alpha_n + m->beta_n * past;
	return m->alpha_r + m->beta_r * past;
}

double
goodput_step_s(const struct goodput_model *m, int nodes, int ranks, int micro,
    int accum)
{
	double	 c = goodput_compute_s(m, micro);
	double	 x = goodput_exchange_s(m, nodes, ranks), last;

	if (m->gamma <= 1 || x <= 0)
		last = c + x;
	else
		last = pow(pow(c, m->gamma) + pow(x, m->gamma), 1 / m->gamma);
	return (accum - 1) * c + last;
}

double
goodput_efficiency(double noise_scale, double batch0, double batch)
{
	double	 phi = noise_scale > 0 ? noise_scale : 0;

	return (phi + batch0) / (phi + batch);
}

/* Evaluate one configuration into c; its goodput. */
static double
eval(const struct goodput_job *job, int nodes, int ranks, int micro,
    int accum, struct goodput_choice *c)
{
	double	 batch = (double)ranks * micro * accum;

	c->micro = micro;
	c->accum = accum;
	c->batch = ranks * micro * accum;
	c->step_s = goodput_step_s(&job->model, nodes, ranks, micro, accum);
	c->throughput = c->step_s > 0 ? batch / c->step_s : 0;
	c->efficiency = goodput_efficiency(job->noise_scale, job->batch0, batch);
	return c->goodput = c->throughput * c->efficiency;
}

/* A fixed batch: each rank's share cut into the fewest micro-batches of
 * at most micro_max that divide it. */
static double
best_fixed(const struct goodput_job *job, int nodes, int ranks,
    struct goodput_choice *best)
{
	int	 share = job->batch0 / ranks;
	int	 cap = job->micro_max > 0 ? job->micro_max : share;

	if (ranks > job->batch0 || job->batch0 % ranks != 0)
		return 0;
	if (job->micro_fixed > 0)
		return share % job->micro_fixed != 0 ? 0 : eval(job, nodes,
		    ranks, job->micro_fixed, share / job->micro_fixed, best);
	for (int accum = 1; accum <= share; accum++) {
		if (share % accum == 0 && share / accum <= cap)
			return eval(job, nodes, ranks, share / accum, accum, best);
	}
	return 0;
}

/* A rank's share cut into micro-batches: of micro_fixed each when the
 * job fixes it (the nearest count of them), else of at most cap, rounded
 * so the batch stays at least batch0. */
static void
adaptive_cut(const struct goodput_job *job, int ranks, double share,
    int cap, int *micro, int *accum)
{
	if (job->micro_fixed > 0) {
		*micro = job->micro_fixed;
		*accum = (int)floor(share / *micro + 0.5);
		if ((double)*micro * *accum * ranks < job->batch0)
			(*accum)++;
		return;
	}
	*accum = (int)ceil(share / cap);
	*micro = (int)floor(share / *accum);
	if ((double)*micro * *accum * ranks < job->batch0)
		*micro = (int)ceil(share / *accum);
}

/* An adaptive batch: per-rank shares from batch0 / ranks to
 * batch_max / ranks, each cut into micro-batches (adaptive_cut), the
 * batch within [batch0, batch_max]. */
static double
best_adaptive(const struct goodput_job *job, int nodes, int ranks,
    struct goodput_choice *best)
{
	double	 lo = ceil((double)job->batch0 / ranks);
	double	 hi = floor((double)job->batch_max / ranks), g = 0;
	int	 cap = job->micro_fixed > 0 ? job->micro_fixed :
	    job->micro_max > 0 ? job->micro_max : (int)hi;

	if (hi < 1 || hi < lo)
		return 0;
	for (int i = 0; i < GOODPUT_BATCHES; i++) {
		double	 share = i == GOODPUT_BATCHES - 1 ? hi :
		    floor(lo * pow(hi / lo, (double)i / (GOODPUT_BATCHES - 1)));
		int	 accum, micro;
		struct goodput_choice c;
		double	 v, batch;

		if (share < lo)
			share = lo;
		adaptive_cut(job, ranks, share, cap, &micro, &accum);
		batch = (double)micro * accum * ranks;
		if (micro < 1 || accum < 1 || micro > cap ||
		    batch < job->batch0 || batch > job->batch_max)
			continue;
		v = eval(job, nodes, ranks, micro, accum, &c);
		if (v > g) {
			g = v;
			*best = c;
		}
	}
	return g;
}

double
goodput_best(const struct goodput_job *job, int nodes, int ranks,
    struct goodput_choice *choice)
{
	struct goodput_choice c = { 0 };
	double	 g;

	if (ranks < 1 || nodes < 1 || nodes > ranks || job->batch0 < 1)
		return 0;
	if (job->batch_max > job->batch0)
		g = best_adaptive(job, nodes, ranks, &c);
	else
		g = best_fixed(job, nodes, ranks, &c);
	if (choice != NULL)
		*choice = c;
	return g;
}

int
goodput_batch_rule(const struct goodput_job *job, int ranks)
{
	long	 unit = (long)ranks * (job->micro_fixed > 0 ?
	    job->micro_fixed : 1);
	long	 lo, hi, want;
	int	 min = job->min_ranks > 0 ? job->min_ranks : 1;

	if (ranks < 1)
		return 0;
	lo = (job->batch0 + unit - 1) / unit * unit;
	hi = job->batch_max / unit * unit;
	want = (long)job->batch0 * ranks / min / unit * unit;
	if (hi < lo)
		return 0;
	return (int)(want < lo ? lo : want > hi ? hi : want);
}

int
goodput_batch(const struct goodput_job *job, bool fitted, int nodes,
    int ranks)
{
	struct goodput_choice c;

	if (job->batch_max <= job->batch0) {
		if (ranks < 1 || job->batch0 % ranks != 0 ||
		    (job->micro_fixed > 0 &&
		    job->batch0 / ranks % job->micro_fixed != 0))
			return 0;
		return job->batch0;
	}
	if (fitted && job->noise_scale >= 0 &&
	    goodput_best(job, nodes, ranks, &c) > 0)
		return c.batch;
	return goodput_batch_rule(job, ranks);
}

/* The best goodput at (nodes, ranks) as the speedup table counts it:
 * an adaptive batch of unknown noise, with min_ranks set, at the rule's
 * batch for the count, whose efficiency is then 1 (the rule assumes
 * the larger batch costs nothing, as the linear guess of a new job). */
static double
speedup_best(const struct goodput_job *job, int nodes, int ranks)
{
	struct goodput_job at;

	if (job->min_ranks <= 0 || job->noise_scale >= 0 ||
	    job->batch_max <= job->batch0)
		return goodput_best(job, nodes, ranks, NULL);
	at = *job;
	at.batch0 = at.batch_max = goodput_batch_rule(job, ranks);
	return at.batch0 > 0 ? goodput_best(&at, nodes, ranks, NULL) : 0;
}

int
goodput_speedups(const struct goodput_job *job, int max_ranks,
    int slots_per_node, int max_nodes, struct policy_row *out, int max)
{
	double	 base = speedup_best(job, 1, 1);
	int	 n = 0;

	if (!(base > 0) || slots_per_node < 1)
		return 0;
	for (int k = 1; k <= max_ranks; k++) {
		int	 lo = (k + slots_per_node - 1) / slots_per_node;
		int	 hi = k < max_nodes ? k : max_nodes;
		/* The model tells one node from several, not how many. */
		double	 one = lo == 1 ? speedup_best(job, 1, k) : 0;
		double	 many = hi > 1 ? speedup_best(job, 2, k) : 0;

		for (int nodes = lo; nodes <= hi && n < max; nodes++) {
			double	 g = nodes == 1 ? one : many;

			if (g > 0)
				out[n++] = (struct policy_row){ nodes, k,
				    g / base };
		}
	}
	return n;
}

double
goodput_lr(const struct job_spec *j, int batch, double noise_scale)
{
	double	 base = j->train.lr.base, b0 = j->train.batch.global_min;
	double	 s = batch / b0;

	if (!j->train.batch.adaptive || batch <= 0)
		return base;
	if (j->train.optimizer.type == OPTIM_ADAMW || noise_scale < 0)
		return base * sqrt(s);
	return base * s * goodput_efficiency(noise_scale, b0, batch);
}
