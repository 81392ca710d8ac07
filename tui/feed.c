/*
 * feed.c: the console's observer.  Every frame the backend sees passes
 * through here on the backend's thread, with its lock held: rank
 * metrics (read by the table, backend/proto/metrics.h) add the figures
 * the console shows per rank, events and log
 * lines go to a ring that the event pane and the logs screen read, and
 * each kind of frame bumps the counter of the panels it changes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/xmalloc.h"
#include "backend/proto/event.h"
#include "backend/proto/metrics.h"
#include "backend/proto/proto.h"
#include "backend/core/job.h"
#include "tui/feed.h"
#include "tui/sanitize.h"

#define FEED_RANKS_MAX	4096

static const char *
feed_str(const json_t *m, const char *k)
{
	const char *s = json_string_value(json_object_get(m, k));

	return s != NULL ? s : "";
}

static double
feed_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void
feed_add(struct feed *f, const char *job, int rank, const char *node,
    const char *kind, int severity, const char *text)
{
	struct logline	*l;
	char		 clean[1024];

	if (f->len == FEED_LOG_MAX) {
		l = &f->log[f->head];
		free(l->text);
		f->head = (f->head + 1) % FEED_LOG_MAX;
		f->len--;
	}
	l = &f->log[(f->head + f->len++) % FEED_LOG_MAX];
	l->t = feed_now();
	sanitize(l->job, sizeof l->job, job);
	sanitize(l->node, sizeof l->node, node);
	sanitize(l->kind, sizeof l->kind, kind);
	l->severity = severity;
	l->rank = rank;
	sanitize(clean, sizeof clean, text);
	l->text = xstrdup(clean);
	f->gen_events++;
}

const struct logline *
feed_line(const struct feed *f, int i)
{
	return i >= 0 && i < f->len ? &f->log[(f->head + i) % FEED_LOG_MAX] :
	    NULL;
}

struct feed_job *
feed_job(struct feed *f, const char *name)
{
	for (int i = 0; i < f->njobs; i++) {
		if (strcmp(f->jobs[i].name, name) == 0)
			return &f->jobs[i];
	}
	return NULL;
}

static struct feed_job *
feed_job_make(struct feed *f, const char *name)
{
	struct feed_job *j = feed_job(f, name);

	if (j != NULL)
		return j;
	f->jobs = xreallocarray(f->jobs, (size_t)f->njobs + 1, sizeof *f->jobs);
	j = &f->jobs[f->njobs++];
	memset(j, 0, sizeof *j);
	snprintf(j->name, sizeof j->name, "%s", name);
	return j;
}

/* Rank r of job j, grown as needed; NULL for a rank out of range. */
static struct feed_rank *
feed_rank_make(struct feed_job *j, int r)
{
	if (r < 0 || r >= FEED_RANKS_MAX)
		return NULL;
	if (r >= j->nranks) {
		j->ranks = xreallocarray(j->ranks, (size_t)r + 1, sizeof *j->ranks);
		memset(j->ranks + j->nranks, 0,
		    (size_t)(r + 1 - j->nranks) * sizeof *j->ranks);
		j->nranks = r + 1;
	}
	return &j->ranks[r];
}

const struct feed_rank *
feed_rank(struct feed *f, const char *job, int r)
{
	struct feed_job *j = feed_job(f, job);

	return j != NULL && r >= 0 && r < j->nranks && j->ranks[r].has ?
	    &j->ranks[r] : NULL;
}

bool
feed_paused(struct feed *f, const char *job)
{
	struct feed_job *j = feed_job(f, job);

	for (int r = 0; j != NULL && r < j->nranks; r++) {
		if (j->ranks[r].paused)
			return true;
	}
	return false;
}

/* The numbers a program reports beyond the rank metrics ("extra"), as
 * "name value" pairs for the job screen, sanitized. */
static void
feed_extra(struct feed_rank *fr, const json_t *extra)
{
	const char	*k;
	json_t		*v;
	char		 raw[sizeof fr->extra];
	size_t		 off = 0;

	fr->extra[0] = '\0';
	if (!json_is_object(extra))
		return;
	raw[0] = '\0';
	json_object_foreach((json_t *)extra, k, v) {
		int	 n;

		if (!json_is_number(v) || off >= sizeof raw - 1)
			continue;
		n = snprintf(raw + off, sizeof raw - off, "%s%s %.4g",
		    off > 0 ? "  " : "", k, json_number_value(v));
		if (n < 0 || (size_t)n >= sizeof raw - off)
			break;
		off += (size_t)n;
	}
	sanitize(fr->extra, sizeof fr->extra, raw);
}

/* A rank's metrics frame.  A heartbeat (a paused rank's, or one busy
 * outside the train loop) has no figures of a step: keep those of the
 * last one. */
static void
feed_rank_metrics(struct feed *f, const json_t *m)
{
	struct feed_job	*j = feed_job_make(f, feed_str(m, "job"));
	json_t		*run = json_object_get(m, "run");
	struct feed_rank *fr;
	struct rank_report rr;
	char		 err[1];

	if (json_is_integer(run) && json_integer_value(run) != j->run) {
		free(j->ranks);
		j->ranks = NULL;
		j->nranks = 0;
		j->run = json_integer_value(run);
	}
	if ((fr = feed_rank_make(j, (int)json_integer_value(
	    json_object_get(m, "rank")))) == NULL)
		return;
	if (json_is_true(json_object_get(m, "beat"))) {
		fr->paused = json_is_true(json_object_get(m, "paused"));
		return;
	}
	if (rank_report_read(m, &rr, err, sizeof err) != 0 ||
	    !(rr.valid & RM_BIT(STEP)))
		return;
	fr->has = true;
	fr->paused = false;
	fr->step = rr.step;
	fr->epoch = (int)rr.epoch;
	fr->loss = rr.loss;
	fr->samples_per_s = rr.samples_per_s;
	fr->step_ms = rr.step_ms;
	fr->comm_ms = rr.comm_ms;
	fr->data_wait_ms = rr.data_wait_ms;
	if ((fr->has_tune = (rr.valid & RM_BIT(MICRO_BATCH)) != 0)) {
		fr->micro = (int)rr.micro_batch;
		fr->accum = (int)rr.accum;
	}
	if ((fr->has_bytes = (rr.valid & RM_BIT(BYTES_SENT)) != 0))
		fr->bytes_sent = (double)rr.bytes_sent;
	if ((fr->has_density = (rr.valid & RM_BIT(DENSITY)) != 0))
		fr->density = rr.density;
	feed_extra(fr, json_object_get(m, "extra"));
	fr->has_ratio = fr->has_bytes && (rr.valid & RM_BIT(BYTES_DENSE)) &&
	    rr.bytes_sent > 0;
	if (fr->has_ratio)
		fr->ratio = (double)rr.bytes_dense / (double)rr.bytes_sent;
}

/*
 * An event into the lines, coloured by its kind's severity.  A move of a
 * job's phase is said as "running -> failed: why", coloured by where it
 * went; a rank's moves stay in the journal and the JSON stream (there
 * are as many as the ranks, and the ranks' own events say more).
 */
static void
feed_event(struct feed *f, const json_t *m)
{
	enum event_kind	 k = event_kind_of(m);
	json_t		*rv = json_object_get(m, "rank");
	int		 r = json_is_integer(rv) ? (int)json_integer_value(rv) : -1;
	int		 sev = event_kind_severity(k);
	struct feed_job	*j;
	enum job_phase	 to;
	char		 line[700];

	if (k == EV_PHASE) {
		if (r >= 0)
			return;
		if (job_phase_named(feed_str(m, "to"), &to) == 0)
			sev = job_phase_severity(to);
		snprintf(line, sizeof line, "%s -> %s: %s", feed_str(m, "from"),
		    feed_str(m, "to"), feed_str(m, "reason"));
		feed_add(f, feed_str(m, "job"), r, feed_str(m, "node"), "phase",
		    sev, line);
		return;
	}
	feed_add(f, feed_str(m, "job"), r, feed_str(m, "node"),
	    feed_str(m, "kind"), sev, feed_str(m, "reason"));
	if (k != EV_PAUSED && k != EV_RESUMED)
		return;
	j = feed_job_make(f, feed_str(m, "job"));
	if (r >= 0) {
		struct feed_rank *fr = feed_rank_make(j, r);

		if (fr != NULL)
			fr->paused = k == EV_PAUSED;
	} else {
		for (int i = 0; i < j->nranks; i++)
			j->ranks[i].paused = k == EV_PAUSED;
	}
}

void
feed_on_frame(void *ctx, const json_t *m)
{
	struct feed	*f = ctx;
	char		 line[512];
	json_t		*r, *acc;

	switch (proto_kind(m, NULL, 0)) {
	case PK_METRICS:
		if (json_object_get(m, "job") == NULL)
			f->gen_nodes++;
		else {
			feed_rank_metrics(f, m);
			f->gen_jobs++;
		}
		break;
	case PK_EVENT:
		feed_event(f, m);
		f->gen_jobs++;
		break;
	case PK_LOG:
		r = json_object_get(m, "rank");
		feed_add(f, feed_str(m, "job"), json_is_integer(r) ?
		    (int)json_integer_value(r) : -1, feed_str(m, "node"), "log",
		    EV_INFO, feed_str(m, "line"));
		break;
	case PK_EPOCH:
		snprintf(line, sizeof line, "epoch %lld/%lld  loss %.4f  ",
		    (long long)json_integer_value(json_object_get(m, "epoch")),
		    (long long)json_integer_value(json_object_get(m, "epochs")),
		    json_number_value(json_object_get(m, "loss")));
		/* A token model: validation loss and tokens/s. */
		if (json_object_get(m, "val_loss") != NULL)
			snprintf(line + strlen(line), sizeof line - strlen(line),
			    "val_loss %.4f  tokens/s %.0f", json_number_value(
			    json_object_get(m, "val_loss")), json_number_value(
			    json_object_get(m, "tokens_per_s")));
		else
			snprintf(line + strlen(line), sizeof line - strlen(line),
			    "test_acc %.4f  samples/s %.0f", json_number_value(
			    json_object_get(m, "test_acc")), json_number_value(
			    json_object_get(m, "samples_per_s")));
		feed_add(f, feed_str(m, "job"), 0, feed_str(m, "node"), "epoch",
		    EV_INFO, line);
		f->gen_jobs++;
		break;
	case PK_SUMMARY:
		acc = json_object_get(m, "test_acc");
		/* The job's phase is the backend's to say (a phase event);
		 * this is rank 0's account. */
		snprintf(line, sizeof line, "rank 0 %s after %lld steps",
		    feed_str(m, "state"), (long long)json_integer_value(
		    json_object_get(m, "steps")));
		if (json_is_number(acc) && json_number_value(acc) > 0)
			snprintf(line + strlen(line), sizeof line - strlen(line),
			    ", test_acc %.4f", json_number_value(acc));
		if (json_is_number(json_object_get(m, "val_loss")))
			snprintf(line + strlen(line), sizeof line - strlen(line),
			    ", val_loss %.4f", json_number_value(
			    json_object_get(m, "val_loss")));
		feed_add(f, feed_str(m, "job"), -1, "", "summary", EV_INFO, line);
		f->gen_jobs++;
		break;
	default:
		f->gen_jobs++;
		break;
	}
}

enum elem
feed_line_elem(const struct logline *l)
{
	return l->severity == EV_ERROR ? EL_EVENT_ERROR :
	    l->severity == EV_WARN ? EL_EVENT_WARN : EL_EVENT_INFO;
}

void
feed_free(struct feed *f)
{
	for (int i = 0; i < f->len; i++)
		free(f->log[(f->head + i) % FEED_LOG_MAX].text);
	for (int i = 0; i < f->njobs; i++)
		free(f->jobs[i].ranks);
	free(f->jobs);
	memset(f, 0, sizeof *f);
}
