/*
 * backend-prom.c: the state model as the Prometheus text exposition,
 * format 0.0.4 (hunter(1), METRICS): node and GPU series from their
 * tables (backend-prom-node.c), rank series from RANK_METRICS
 * (backend/proto/metrics.h), so a new row there is a new series here,
 * and the job series of job_rows below.  An unknown value is left out, never written as 0.  Rendered by
 * the loop under the backend's lock when a scrape asks for it; the
 * server (metrics-http.c) serves the text.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/promtext.h"
#include "backend/core/backend-internal.h"
#include "backend/core/metrics-http.h"

double
prom_value(const struct metric_field *fd, const void *base, size_t at)
{
	double	 d;
	long	 l;

	if (fd->type == METRIC_INT) {
		memcpy(&l, (const char *)base + at, sizeof l);
		return (double)l * fd->scale;
	}
	memcpy(&d, (const char *)base + at, sizeof d);
	return d * fd->scale;
}

bool
node_heard(const struct node_view *nv, double now)
{
	return nv->up && nv->sampled > 0 && now - nv->sampled < NODE_STALE_S;
}

/* The job series, beside its state.  The rows with a field are the
 * job's last evaluation, read from its frames (eval_value). */
enum job_row { JR_PAUSED, JR_GENERATION, JR_RANKS, JR_FAILOVERS,
	JR_CHECKPOINTS, JR_REFORMATIONS, JR_SENT, JR_DENSE, JR_VAL_LOSS,
	JR_PERPLEXITY, JR_TEST_LOSS, JR_TEST_ACC, JR_GOODPUT, JR_ATTAINED,
	JR_COUNT };

static const struct {
	const char	*name, *help;
	enum metric_kind kind;
	const char	*field;		/* of the eval, epoch and summary frames */
} job_rows[JR_COUNT] = {
	[JR_PAUSED] = { "paused", "1 while the job is paused", METRIC_GAUGE },
	[JR_GENERATION] = { "generation", "re-formations so far: the "
	    "generation running", METRIC_GAUGE },
	[JR_RANKS] = { "ranks", "the job's world size", METRIC_GAUGE },
	[JR_FAILOVERS] = { "failovers_total", "ranks that died and were "
	    "moved", METRIC_COUNTER },
	[JR_CHECKPOINTS] = { "checkpoints_total", "checkpoints written",
	    METRIC_COUNTER },
	[JR_REFORMATIONS] = { "reformations_total", "failovers, migrations "
	    "and restarts", METRIC_COUNTER },
	[JR_SENT] = { "sent_bytes_total", "gradient bytes every rank sent",
	    METRIC_COUNTER },
	[JR_DENSE] = { "dense_bytes_total", "the same exchanges uncompressed",
	    METRIC_COUNTER },
	[JR_VAL_LOSS] = { "validation_loss", "a language model's last "
	    "validation loss, nats a token", METRIC_GAUGE, "val_loss" },
	[JR_PERPLEXITY] = { "validation_perplexity", "e to its validation "
	    "loss", METRIC_GAUGE, "perplexity" },
	[JR_TEST_LOSS] = { "test_loss", "an image model's last loss on its "
	    "test set", METRIC_GAUGE, "test_loss" },
	[JR_TEST_ACC] = { "test_accuracy_ratio", "its last accuracy on the "
	    "test set", METRIC_GAUGE, "test_acc" },
	[JR_GOODPUT] = { "goodput_samples_per_second", "samples a second at "
	    "its batch's statistical efficiency, as the scheduler measures it",
	    METRIC_GAUGE },
	[JR_ATTAINED] = { "attained_slot_seconds_total", "slot-seconds of service "
	    "it has had (the scheduler's)", METRIC_COUNTER },
};

/* The step of an eval or epoch frame. */
static double
eval_step(const json_t *m)
{
	return json_number_value(json_object_get(m, "step"));
}

/* Field k of the job's newest frame that says it: the last eval, the
 * last epoch or the summary (a stopped job's has none). */
static bool
eval_value(const struct job_state *j, const char *k, double *v)
{
	const json_t	*c[2] = { json_array_get(j->evals,
	    json_array_size(j->evals) - 1), json_array_get(j->epochs,
	    json_array_size(j->epochs) - 1) };
	double		 best = -INFINITY;

	for (int i = 0; i < 2; i++) {
		const json_t *x = json_object_get(c[i], k);

		if (json_is_number(x) && eval_step(c[i]) >= best) {
			best = eval_step(c[i]);
			*v = json_number_value(x);
		}
	}
	if (summary_number(&j->sum, k, v))	/* it comes after all */
		best = INFINITY;
	return best > -INFINITY && isfinite(*v);
}

/* Row r of job j into *v; whether it is known. */
static bool
job_value(const struct job_state *j, enum job_row r, double *v)
{
	if (job_rows[r].field != NULL)
		return eval_value(j, job_rows[r].field, v);
	switch (r) {
	case JR_PAUSED: *v = j->phase == JOB_PAUSED; return !job_done(j);
	case JR_GENERATION: *v = j->generation; break;
	case JR_RANKS: *v = j->world; break;
	case JR_FAILOVERS: *v = (double)j->total.failovers; break;
	case JR_CHECKPOINTS: *v = (double)j->total.checkpoints; break;
	case JR_REFORMATIONS: *v = j->restarts; break;
	case JR_SENT: *v = (double)j->total.bytes_sent;
		return j->total.bytes_known;
	case JR_DENSE: *v = (double)j->total.bytes_dense;
		return j->total.bytes_known;
	case JR_GOODPUT: *v = j->gp.goodput; return j->gp.known && !job_done(j);
	case JR_ATTAINED: *v = j->gp.attained; break;
	default: return false;
	}
	return true;
}

/* The newest job of each name, unless it is only history the journal
 * replayed (over before this backend opened). */
static bool
job_exported(struct backend *b, const struct job_state *j)
{
	if (backend_job(b, j->name) != j)
		return false;
	return !job_done(j) || j->started > 0 || job_has_summary(j);
}

static void
prom_jobs(FILE *f, struct backend *b)
{
	struct prom_family fm;
	char		 lab[256], sl[320];
	double		 v;

	prom_family(&fm, "hunter_job_", "state", false, "1 for the phase "
	    "the job is in (its state label), 0 for the others");
	for (int i = 0; i < b->njobs; i++) {
		const struct job_state *j = &b->jobs[i];

		if (!job_exported(b, j))
			continue;
		for (int p = 0; p < JOB_PHASE_COUNT; p++) {
			const char *k[] = { "job", "state" };
			const char *val[] = { j->name, job_phase_name(p) };

			prom_labels(sl, sizeof sl, 2, k, val);
			prom_sample(f, &fm, sl, (int)j->phase == p);
		}
	}
	prom_family(&fm, "hunter_job_", "events_total", true, "the job's "
	    "events by kind (its kind label) since the submit or attach");
	for (int i = 0; i < b->njobs; i++) {
		const struct job_state *j = &b->jobs[i];

		for (int e = EV_UNKNOWN + 1; job_exported(b, j) && e < EV_COUNT;
		    e++) {
			const char *k[] = { "job", "kind" };
			const char *val[] = { j->name, event_kind_name(e) };

			if (j->total.events[e] == 0)
				continue;
			prom_labels(sl, sizeof sl, 2, k, val);
			prom_sample(f, &fm, sl, (double)j->total.events[e]);
		}
	}
	for (int r = 0; r < JR_COUNT; r++) {
		prom_family(&fm, "hunter_job_", job_rows[r].name,
		    job_rows[r].kind == METRIC_COUNTER, job_rows[r].help);
		for (int i = 0; i < b->njobs; i++) {
			const struct job_state *j = &b->jobs[i];
			const char *k[] = { "job" };

			if (!job_exported(b, j) || !job_value(j, r, &v))
				continue;
			prom_labels(lab, sizeof lab, 1, k, &(const char *){
			    j->name });
			prom_sample(f, &fm, lab, v);
		}
	}
}

/* Where each rank metric lives in struct rank_state. */
#define RANK_AT(id, field, ...) [RM_##id] = offsetof(struct rank_state, field),
static const size_t rank_at[RM_COUNT] = { RANK_METRICS(RANK_AT) };
#undef RANK_AT

static void
prom_rank_labels(struct backend *b, const struct job_state *j, int r,
    char *buf, size_t len)
{
	char		 rank[16];
	const char	*k[] = { "job", "rank", "node" };
	const char	*v[] = { j->name, rank,
	    b->nodes[j->ranks[r].node].spec->name };

	snprintf(rank, sizeof rank, "%d", r);
	prom_labels(buf, len, 3, k, v);
}

static bool
rank_up(struct backend *b, const struct rank_state *rs, double now)
{
	return rs->phase == RANK_RUNNING && node_heard(&b->nodes[rs->node],
	    now);
}

/*
 * A running rank is up while its node is heard from; its series go with
 * its node and come back with it.  A rank that has exited keeps its last
 * values (the job's outcome) until the job is replaced or relaunched.
 */
static void
prom_ranks(FILE *f, struct backend *b, double now)
{
	struct prom_family fm, fp;
	char		 lab[512];

	prom_family(&fm, "hunter_rank_", "up", false, "1 while the rank "
	    "runs and its node is heard from");
	prom_family(&fp, "hunter_rank_", "paused", false, "1 while the "
	    "rank holds at a step boundary (its values stay those of its "
	    "last step)");
	/* Family by family: each one's samples stay together. */
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < b->njobs; i++) {
			const struct job_state *j = &b->jobs[i];

			for (int r = 0; job_exported(b, j) && r < j->world;
			    r++) {
				const struct rank_state *rs = &j->ranks[r];
				bool up = rank_up(b, rs, now);

				if (rs->phase == RANK_PENDING || (pass && !up))
					continue;
				prom_rank_labels(b, j, r, lab, sizeof lab);
				if (pass == 0)
					prom_sample(f, &fm, lab, up);
				else
					prom_sample(f, &fp, lab, rs->paused ||
					    j->phase == JOB_PAUSED);
			}
		}
	}
	for (int m = 0; m < RM_COUNT; m++) {
		const struct metric_field *fd = &rank_metrics[m];

		if (fd->prom == NULL)
			continue;
		prom_family(&fm, "hunter_rank_", fd->prom,
		    fd->kind == METRIC_COUNTER, fd->help);
		for (int i = 0; i < b->njobs; i++) {
			const struct job_state *j = &b->jobs[i];

			for (int r = 0; job_exported(b, j) && r < j->world;
			    r++) {
				const struct rank_state *rs = &j->ranks[r];

				if (!((rs->known >> m) & 1) ||
				    rs->phase == RANK_PENDING ||
				    (rs->phase == RANK_RUNNING &&
				    !node_heard(&b->nodes[rs->node], now)))
					continue;
				prom_rank_labels(b, j, r, lab, sizeof lab);
				prom_sample(f, &fm, lab,
				    prom_value(fd, rs, rank_at[m]));
			}
		}
	}
}

char *
backend_metrics_text(struct backend *b, size_t *len)
{
	char	*text = NULL;
	FILE	*f = open_memstream(&text, len);
	double	 now = clock_mono();

	if (f == NULL)
		abort();
	prom_nodes(f, b, now);
	prom_jobs(f, b);
	prom_ranks(f, b, now);
	fclose(f);
	return text;
}

void
backend_prom_publish(struct backend *b)
{
	size_t	 len;
	char	*text;

	if (b->metrics == NULL)
		return;
	text = backend_metrics_text(b, &len);
	metrics_http_publish(b->metrics, text, len);
}

void
backend_export_tick(struct backend *b)
{
	if (b->metrics != NULL && metrics_http_wanted(b->metrics))
		backend_prom_publish(b);
	for (int i = 0; i < b->njobs; i++) {
		if (job_done(&b->jobs[i]) && b->jobs[i].series != NULL)
			backend_series_close(&b->jobs[i]);
	}
}
