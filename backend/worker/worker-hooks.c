/*
 * worker-hooks.c: the train loop's hooks of a worker (train.h): what the
 * rank reports to its agent -- metrics at most once a second (struct
 * rank_report, put by the table in backend/proto/metrics.h), the first
 * steps' losses when traced, epoch lines, events, the autotune trace and
 * the summary -- the controls it asks for and agrees on, with the pause
 * that holds it at a step boundary, and the collectives it runs.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/xmalloc.h"
#include "backend/proto/metrics.h"
#include "backend/proto/proto.h"
#include "backend/comm/comm.h"
#include "backend/worker/worker-internal.h"

static long
worker_rss(void)
{
	FILE	*f = fopen("/proc/self/statm", "r");
	long	 pages = 0, rss = 0;

	if (f != NULL) {
		if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
			rss = 0;
		fclose(f);
	}
	return rss * sysconf(_SC_PAGESIZE);
}

json_t *
worker_metrics(struct worker *w, const struct rank_report *rr)
{
	json_t	*m = json_pack("{s:s, s:s, s:s, s:i}", "t", MSG_METRICS,
	    "scope", "rank", "job", w->job.name, "rank", w->rank);

	rank_report_put(rr, m);
	return m;
}

void
worker_on_step(void *ctx, const struct step_report *r)
{
	struct worker		*w = ctx;
	double			 now = clock_mono();
	struct rank_report	 rr;

	if (r->step <= w->trace_steps && w->rank == 0)
		worker_send(w, json_pack("{s:s, s:s, s:I, s:f}", "t", MSG_STEP,
		    "job", w->job.name, "step", (json_int_t)r->step,
		    "loss", r->loss));
	if (now - w->last_metrics < 1.0)
		return;
	w->last_metrics = now;
	atomic_store(&w->last_sent, now);
	atomic_store(&w->last_step, r->step);
	rr = (struct rank_report){ .step = r->step, .epoch = r->epoch,
	    .loss = r->loss, .lr = r->lr, .step_ms = r->step_ms,
	    .compute_ms = r->compute_ms, .comm_ms = r->comm_ms,
	    .data_wait_ms = r->data_wait_ms, .bytes_sent = (long)r->bytes_sent,
	    .micro_batch = r->micro_batch, .accum = r->accum,
	    .rss = worker_rss(), .heartbeat = (double)time(NULL),
	    .pid = (long)getpid(), .density = r->density,
	    .lr_gain = r->lr_gain, .noise_scale = r->noise_scale,
	    .grad_norm = r->grad_norm,
	    .valid = RM_ALL & ~RM_BIT(BYTES_DENSE) };
	/* Unknown is absent, never a number that looks like one. */
	if (r->step_ms > 0)
		rr.samples_per_s = 1000.0 * w->job.train.batch.global /
		    r->step_ms;
	else
		rr.valid &= ~RM_BIT(SAMPLES_PER_S);
	if (r->noise_scale < 0)
		rr.valid &= ~RM_BIT(NOISE_SCALE);
	if (r->tokens > 0 && r->step_ms > 0)
		rr.tokens_per_s = rr.samples_per_s * r->tokens;
	else
		rr.valid &= ~RM_BIT(TOKENS_PER_S);
	if (r->grad_norm <= 0)
		rr.valid &= ~RM_BIT(GRAD_NORM);
	worker_send(w, worker_metrics(w, &rr));
}

void
worker_on_autotune(void *ctx, const struct autotune_trial *tr, int n,
    int micro, int accum, double seconds)
{
	struct worker	*w = ctx;
	json_t		*trials = json_array();

	for (int i = 0; i < n; i++)
		json_array_append_new(trials, json_pack("{s:i, s:b, s:I, s:f, "
		    "s:f}", "size", tr[i].size, "fit", tr[i].fit, "peak_bytes",
		    (json_int_t)tr[i].peak_bytes, "samples_per_s",
		    tr[i].samples_per_s, "steps", tr[i].steps));
	worker_send(w, json_pack("{s:s, s:s, s:i, s:i, s:f, s:I, s:o}", "t",
	    MSG_AUTOTUNE, "job", w->job.name, "micro_batch", micro, "accum",
	    accum, "seconds", seconds, "budget",
	    (json_int_t)w->job.resources.memory_per_rank, "trials", trials));
}

void
worker_on_epoch(void *ctx, const struct epoch_report *r)
{
	struct worker	*w = ctx;
	json_t		*m;

	m = json_pack("{s:s, s:s, s:i, s:i, s:I, s:f, s:f, s:f, s:f}", "t",
	    MSG_EPOCH, "job", r->job, "epoch", r->epoch, "epochs", r->epochs,
	    "step", (json_int_t)r->step, "loss", r->loss, "samples_per_s",
	    r->samples_per_s, "data_wait_pct", r->data_wait_pct, "lr", r->lr);
	/* A token model has no accuracy: its validation loss (nats a
	 * token) and perplexity stand in. */
	if (r->has_acc) {
		json_object_set_new(m, "test_acc", json_real(r->test_acc));
		json_object_set_new(m, "test_loss", json_real(r->test_loss));
	} else {
		json_object_set_new(m, "val_loss", json_real(r->test_loss));
		json_object_set_new(m, "perplexity",
		    json_real(exp(r->test_loss)));
		json_object_set_new(m, "tokens_per_s",
		    json_real(r->samples_per_s * r->tokens));
	}
	worker_send(w, m);
}

void
worker_on_eval(void *ctx, long step, const double *loss, const double *acc)
{
	struct worker	*w = ctx;
	json_t		*m = json_pack("{s:s, s:s, s:I}", "t", MSG_EVAL, "job",
	    w->job.name, "step", (json_int_t)step);

	if (acc != NULL)
		json_object_set_new(m, "test_acc", json_real(*acc));
	json_object_set_new(m, acc != NULL ? "test_loss" : "val_loss",
	    json_real(*loss));
	if (acc == NULL)
		json_object_set_new(m, "perplexity", json_real(exp(*loss)));
	worker_send(w, m);
}

void
worker_on_event(void *ctx, const char *kind, const char *reason)
{
	struct worker	*w = ctx;

	worker_send(w, json_pack("{s:s, s:s, s:s, s:i, s:s, s:s}", "t",
	    MSG_EVENT, "job", w->job.name, "kind", kind, "rank", w->rank,
	    "node", w->node, "reason", reason));
}

unsigned
worker_requests(void *ctx)
{
	struct worker	*w = ctx;
	unsigned	 bits = 0;

	for (int c = 0; c < CTL_COUNT; c++) {
		if (atomic_load(&w->seq[c]) > w->done[c])
			bits |= 1u << c;
	}
	if (atomic_load(&w->stop))
		bits |= 1u << CTL_STOP;
	return bits;
}

void
worker_agreed(void *ctx, unsigned bits)
{
	struct worker	*w = ctx;

	for (int c = 0; c < CTL_COUNT; c++) {
		if (bits & (1u << c))
			w->done[c]++;
	}
}

/* Hold at the step boundary until a resume (0) or a stop (1) arrives. */
int
worker_paused(void *ctx)
{
	struct worker	*w = ctx;
	int		 stop = 0;

	worker_on_event(w, "paused", "holding at the step boundary");
	/* The heartbeat thread reports the rank as paused meanwhile. */
	atomic_store(&w->paused, 1);
	for (;;) {
		if (atomic_load(&w->stop) ||
		    atomic_load(&w->seq[CTL_STOP]) > w->done[CTL_STOP]) {
			stop = 1;
			break;
		}
		if (atomic_load(&w->seq[CMD_RESUME]) > w->done[CMD_RESUME]) {
			w->done[CMD_RESUME]++;
			break;
		}
		nanosleep(&(struct timespec){ 0, 50 * 1000000L }, NULL);
	}
	atomic_store(&w->paused, 0);
	if (!stop)
		worker_on_event(w, "resumed", "continuing");
	return stop;
}

void
worker_summary(struct worker *w, const struct train_summary *s)
{
	json_t	*m = json_pack("{s:s, s:s, s:s, s:i, s:I, s:f, s:I, "
	    "s:I, s:f, s:i, s:i, s:f, s:s, s:i}", "t", MSG_SUMMARY,
	    "job", w->job.name, "state", s->state, "epochs", s->epochs,
	    "steps", (json_int_t)s->steps,
	    "samples_per_s", s->samples_per_s,
	    "bytes_sent", (json_int_t)s->bytes_sent,
	    "bytes_dense", (json_int_t)s->bytes_dense, "wall_s", s->wall_s,
	    "micro_batch", s->micro_batch, "accum", s->accum,
	    "data_wait_pct", s->data_wait_pct, "checkpoint", s->checkpoint,
	    "world", w->world);

	/* What was not measured is left out: a stopped job is not
	 * evaluated. */
	if (s->tokens > 0) {
		if (s->evaluated) {
			json_object_set_new(m, "val_loss",
			    json_real(s->val_loss));
			json_object_set_new(m, "perplexity",
			    json_real(exp(s->val_loss)));
		}
		json_object_set_new(m, "tokens_per_s",
		    json_real(s->samples_per_s * s->tokens));
	} else
		json_object_set_new(m, "test_acc", json_real(s->test_acc));
	worker_send(w, m);
}

/* The collectives, over the group comm_init formed. */
int
worker_allreduce(void *ctx, float *buf, size_t n, char *err, size_t errlen)
{
	return comm_allreduce_f32(((struct worker *)ctx)->comm, buf, n, err,
	    errlen);
}

int
worker_broadcast(void *ctx, void *buf, size_t len, char *err, size_t errlen)
{
	return comm_broadcast(((struct worker *)ctx)->comm, buf, len, 0, err,
	    errlen);
}

int
worker_allgatherv(void *ctx, const void *in, void *out, const size_t *lens,
    char *err, size_t errlen)
{
	return comm_allgatherv(((struct worker *)ctx)->comm, in, out, lens, err,
	    errlen);
}

int
worker_sum_u64(void *ctx, uint64_t *v, int n, char *err, size_t errlen)
{
	struct worker	*w = ctx;
	size_t		*lens = xcalloc((size_t)w->world, sizeof *lens);
	uint64_t	*all = xcalloc((size_t)w->world * n, sizeof *all);
	int		 rc;

	for (int r = 0; r < w->world; r++)
		lens[r] = (size_t)n * sizeof *v;
	rc = comm_allgatherv(w->comm, v, all, lens, err, errlen);
	if (rc == 0) {
		for (int i = 0; i < n; i++) {
			v[i] = 0;
			for (int r = 0; r < w->world; r++)
				v[i] += all[r * n + i];
		}
	}
	free(lens);
	free(all);
	return rc;
}
