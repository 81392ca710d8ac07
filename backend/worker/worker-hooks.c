/*
 * worker-hooks.c: the train loop's hooks of a worker (train.h): what the
 * rank reports to its agent -- metrics at most once a second (struct
 * rank_report, put by the table in backend/proto/metrics.h), the first
 * steps' losses when traced, epoch lines, events, the autotune trace and
 * the summary -- the controls it asks for and agrees on, with the pause
 * that holds it at a step boundary, and the collectives it runs.  All of
 * it goes through worker_send, into the link's queue (worker.c's reader
 * thread flushes it), which never waits for the agent.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
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

void
worker_send(struct worker *w, json_t *msg)
{
	size_t	 waiting;
	int	 rc;

	if (msg == NULL) {	/* a json_pack refused a string */
		fprintf(stderr, "worker: a frame could not be encoded\n");
		return;
	}
	pthread_mutex_lock(&w->send_lock);
	rc = proto_queue_send(&w->q, msg);
	if (rc < 0 && !w->link_down)
		fprintf(stderr, "worker: link to agent: %s\n", strerror(errno));
	waiting = proto_queue_waiting(&w->q);
	pthread_mutex_unlock(&w->send_lock);
	json_decref(msg);
	/* The reader thread polls for POLLOUT only while bytes wait. */
	if (waiting > 0)
		evloop_wake(w->loop);
}

/* Send what waits, as long as the agent lives: a rank's last frames (its
 * summary, its exit's cause) must reach it. */
void
worker_drain(struct worker *w)
{
	pthread_mutex_lock(&w->send_lock);
	if (proto_queue_drain(&w->q, -1) != 0 && !w->link_down)
		fprintf(stderr, "worker: link to agent: %s\n", strerror(errno));
	pthread_mutex_unlock(&w->send_lock);
}

/* Once the agent reads again, say what it missed. */
void
worker_report_drops(struct worker *w)
{
	char	 link[64];
	json_t	*ev;

	snprintf(link, sizeof link, "rank %d -> agent", w->rank);
	pthread_mutex_lock(&w->send_lock);
	ev = proto_queue_drop_event(&w->q, link);
	pthread_mutex_unlock(&w->send_lock);
	if (ev == NULL)
		return;
	json_object_set_new(ev, "job", json_string(w->job.name));
	json_object_set_new(ev, "rank", json_integer(w->rank));
	json_object_set_new(ev, "node", json_string(w->node));
	worker_send(w, ev);
}

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

/*
 * --inject log-flood=N: print N lines a second on stderr from the train
 * loop itself, as a rank with a print in its loop would, each naming the
 * step and the wall clock time, so a test can read the step rate off the
 * rank's log file.  They are written at step boundaries, as many as are
 * due; a full pipe holds the loop up, as it would the real rank's.
 */
static void
worker_log_flood(struct worker *w, long step, double now)
{
	struct timespec	 ts;
	char		 buf[16384];
	size_t		 len = 0;
	long		 due;
	ssize_t		 n;

	if (w->flood_t0 == 0)
		w->flood_t0 = now;
	due = (long)((now - w->flood_t0) * w->log_flood) - w->flood_n;
	clock_gettime(CLOCK_REALTIME, &ts);
	for (; due > 0 && len + 160 < sizeof buf; due--) {
		/* About 120 bytes a line: the filler makes the lines weigh. */
		len += (size_t)snprintf(buf + len, sizeof buf - len,
		    "log-flood %ld: rank %d step %ld at %lld.%06ld "
		    "................................................\n",
		    ++w->flood_n, w->rank, step, (long long)ts.tv_sec,
		    ts.tv_nsec / 1000);
	}
	if (due > 0)			/* behind by more than a buffer: skip */
		w->flood_n += due;
	for (size_t off = 0; off < len; off += (size_t)n) {
		if ((n = write(2, buf + off, len - off)) < 0) {
			if (errno == EINTR) {
				n = 0;
				continue;
			}
			break;
		}
	}
}

/* The step's metrics; late (the flush after the loop) the memory is no
 * longer the step's, so it is left unknown. */
static void
worker_send_step(struct worker *w, const struct rank_report *r, bool late)
{
	struct rank_report	 rr = *r;

	w->last_metrics = clock_mono();
	w->report_unsent = false;
	atomic_store(&w->last_sent, w->last_metrics);
	atomic_store(&w->last_step, r->step);
	/* The process's own figures; late, the memory is no longer the
	 * step's. */
	rr.heartbeat = (double)time(NULL);
	rr.pid = (long)getpid();
	rr.valid |= RM_BIT(HEARTBEAT) | RM_BIT(PID);
	if (!late) {
		rr.rss = worker_rss();
		rr.valid |= RM_BIT(RSS);
	}
	worker_blas_report(w, &rr);
	worker_send(w, worker_metrics(w, &rr));
}

void
worker_on_step(void *ctx, const struct rank_report *r)
{
	struct worker		*w = ctx;

	if (w->log_flood > 0)
		worker_log_flood(w, r->step, clock_mono());
	if (r->step <= w->trace_steps && w->rank == 0)
		worker_send(w, json_pack("{s:s, s:s, s:I, s:f}", "t", MSG_STEP,
		    "job", w->job.name, "step", (json_int_t)r->step,
		    "loss", r->loss));
	if (clock_mono() - w->last_metrics < 1.0) {
		w->last_report = *r;
		w->report_unsent = true;
		return;
	}
	worker_send_step(w, r, false);
}

void
worker_flush_metrics(struct worker *w)
{
	if (w->report_unsent)
		worker_send_step(w, &w->last_report, true);
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
worker_on_event(void *ctx, enum event_kind kind, const char *reason)
{
	struct worker	*w = ctx;
	json_t		*ev = json_pack("{s:s, s:s, s:s, s:i, s:s, s:s}", "t",
	    MSG_EVENT, "job", w->job.name, "kind", event_kind_name(kind),
	    "rank", w->rank, "node", w->node, "reason", reason);

	if (kind == EV_STARTED)
		ev = worker_blas_started(w, ev, reason);
	worker_send(w, ev);
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

	/* The step it holds at, before it says it holds: what the console,
	 * the exporter and `hunter jobs` show until it resumes. */
	worker_flush_metrics(w);
	worker_on_event(w, EV_PAUSED, "holding at the step boundary");
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
		worker_on_event(w, EV_RESUMED, "continuing");
	return stop;
}

void
worker_summary(struct worker *w, const struct train_summary *s)
{
	struct job_summary f = s->f;
	json_t	*m = json_pack("{s:s}", "t", MSG_SUMMARY);
	char	 err[128];

	snprintf(f.job, sizeof f.job, "%s", w->job.name);
	if (summary_pack(&f, m, err, sizeof err) != 0) {
		/* A checkpoint path that is not UTF-8: said without it. */
		f.have &= ~((uint64_t)1 << SUMMARY_F_checkpoint);
		json_decref(m);
		m = json_pack("{s:s}", "t", MSG_SUMMARY);
		summary_pack(&f, m, err, sizeof err);
	}
	worker_send(w, m);
}

/* The collectives, over the group comm_init formed. */
int
worker_reduce_scatter(void *ctx, float *buf, size_t n, const size_t *counts,
    char *err, size_t errlen)
{
	return comm_reduce_scatter_f32(((struct worker *)ctx)->comm, buf, n,
	    counts, err, errlen);
}

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

void *
worker_xfer_start(void *ctx, void *buf, size_t len, int peer, int send,
    uint32_t tag, char *err, size_t errlen)
{
	return comm_xfer_start(((struct worker *)ctx)->comm, buf, len, peer,
	    send, tag, err, errlen);
}

int
worker_xfer_wait(void *ctx, void *xfer, char *err, size_t errlen)
{
	return comm_xfer_wait(((struct worker *)ctx)->comm, xfer, err, errlen);
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
