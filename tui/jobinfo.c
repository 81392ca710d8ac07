/*
 * jobinfo.c: a job's figures for the screens.  The state model holds
 * placement and status; the feed holds what the state model leaves out
 * (micro-batch, accumulation, bytes per step, paused) and keeps the last
 * step's figures through a pause; the epoch frames hold accuracy.  Each
 * figure comes with a flag, so the screens draw a dash for what is not
 * known yet rather than a zero.
 */
#include <stdlib.h>
#include <string.h>

#include "tui/console.h"

long
job_rank_step(struct console *c, const struct job_state *j, int r)
{
	const struct feed_rank *fr = feed_rank(&c->feed, j->name, r);

	return fr != NULL ? fr->step : j->ranks[r].step;
}

static int
job_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double
job_median_step_ms(struct console *c, const struct job_state *j)
{
	double	*v = calloc((size_t)j->world + 1, sizeof *v), med = 0;
	int	 n = 0;

	if (v == NULL)
		abort();
	for (int r = 0; r < j->world; r++) {
		const struct feed_rank *fr = feed_rank(&c->feed, j->name, r);

		if (fr != NULL && fr->step_ms > 0 &&
		    j->ranks[r].phase == RANK_RUNNING)
			v[n++] = fr->step_ms;
	}
	if (n > 0) {
		qsort(v, (size_t)n, sizeof *v, job_cmp_double);
		med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	}
	free(v);
	return med;
}

static void
job_info_summary(const struct job_summary *s, struct job_info *ji)
{
	double	 sent = SUMMARY_HAS(s, bytes_sent) ? (double)s->bytes_sent : 0;
	double	 dense = SUMMARY_HAS(s, bytes_dense) ? (double)s->bytes_dense : 0;
	double	 steps = (double)s->steps;

	if (!ji->has_tune && SUMMARY_HAS(s, micro_batch) &&
	    SUMMARY_HAS(s, accum)) {
		ji->has_tune = true;
		ji->micro = s->micro_batch;
		ji->accum = s->accum;
	}
	if (!ji->has_ratio && sent > 0 && dense > 0) {
		ji->has_ratio = true;
		ji->ratio = dense / sent;
	}
	if (!ji->has_bytes && sent > 0 && steps > 0) {
		ji->has_bytes = true;
		ji->bytes_step = sent / steps;
	}
}

/*
 * A token model's figures: the newest validation loss (an eval frame or
 * an epoch's, whichever is later), tokens/s, and MFU: the mean of the
 * ranks' own, each against the cached sgemm peak of the kernel and
 * threads that rank runs (backend/worker/worker-blas.c), so never
 * against another kernel's; unknown while a rank has none.
 */
static void
job_info_tokens(const struct job_state *j, struct job_info *ji)
{
	json_t	*lists[2] = { j->evals, j->epochs };
	long	 best = -1;
	double	 mfu = 0;
	int	 known = 0;

	ji->tokens = true;
	for (int i = 0; i < 2; i++) {
		size_t	 n = json_array_size(lists[i]);
		json_t	*e = n > 0 ? json_array_get(lists[i], n - 1) : NULL;
		json_t	*v = json_object_get(e, "val_loss");
		long	 st = (long)json_integer_value(json_object_get(e, "step"));

		if (json_is_number(v) && st > best) {
			best = st;
			ji->has_val = true;
			ji->val_loss = json_number_value(v);
		}
	}
	if (!ji->has_samples)
		return;
	ji->tokens_per_s = ji->samples_per_s * j->spec.model.context;
	for (int r = 0; r < j->world; r++) {
		if (!(j->ranks[r].known & RM_BIT(MFU)))
			return;
		mfu += j->ranks[r].mfu;
		known++;
	}
	if (known > 0) {
		ji->has_mfu = true;
		ji->mfu = mfu / known;
	}
}

void
job_info(struct console *c, const struct job_state *j, struct job_info *ji)
{
	size_t	 ne = json_array_size(j->epochs);

	memset(ji, 0, sizeof *ji);
	ji->epochs = j->spec.kind == JOB_PROGRAM ? 0 : j->spec.train.epochs;
	for (int r = 0; r < j->world; r++) {
		const struct feed_rank *fr = feed_rank(&c->feed, j->name, r);

		ji->running += j->ranks[r].phase == RANK_RUNNING;
		if (fr == NULL)
			continue;
		if (!ji->has_step || fr->step > ji->step)
			ji->step = fr->step;
		ji->has_step = true;
		if (r == 0 || !ji->has_loss) {
			ji->has_loss = ji->has_samples = true;
			ji->loss = fr->loss;
			ji->samples_per_s = fr->samples_per_s;
			ji->epoch = fr->epoch;
		}
		if (fr->has_tune && !ji->has_tune) {
			ji->has_tune = true;
			ji->micro = fr->micro;
			ji->accum = fr->accum;
		}
		if (fr->has_bytes && !ji->has_bytes) {
			ji->has_bytes = true;
			ji->bytes_step = fr->bytes_sent;
		}
		if (fr->has_density && !ji->has_density) {
			ji->has_density = true;
			ji->density = fr->density;
		}
		if (fr->has_ratio && !ji->has_ratio) {
			ji->has_ratio = true;
			ji->ratio = fr->ratio;
		}
	}
	if (ne > 0) {
		json_t *e = json_array_get(j->epochs, ne - 1);

		/* A program says its epochs in its epoch lines. */
		if (j->spec.kind == JOB_PROGRAM && json_is_integer(
		    json_object_get(e, "epochs")))
			ji->epochs = (int)json_integer_value(json_object_get(e,
			    "epochs"));
		ji->epoch = (int)json_integer_value(json_object_get(e, "epoch"));
		ji->has_acc = json_is_number(json_object_get(e, "test_acc"));
		ji->acc = json_number_value(json_object_get(e, "test_acc"));
	}
	if (j->spec.data.format != FORMAT_IMAGES)
		job_info_tokens(j, ji);
	if (job_has_summary(j)) {
		job_info_summary(&j->sum, ji);
		if (j->sum.steps > ji->step) {
			ji->step = (long)j->sum.steps;
			ji->has_step = true;
		}
	}
	/* The phase, as the backend has it; a pause the ranks reported
	 * before the backend moved shows at once. */
	ji->state = job_phase_name(j->phase);
	switch (j->phase) {
	case JOB_FINISHED:
		ji->state_e = EL_TEXT_DIM;
		break;
	case JOB_FAILED:
		ji->state_e = EL_EVENT_ERROR;
		break;
	case JOB_STOPPED:
	case JOB_REFORMING:
	case JOB_RESIZING:
	case JOB_STOPPING:
		ji->state_e = EL_EVENT_WARN;
		break;
	case JOB_QUEUED:
	case JOB_PLACING:
		ji->state_e = EL_TEXT;
		break;
	default:
		if (j->phase == JOB_PAUSED || feed_paused(&c->feed, j->name)) {
			ji->state = job_phase_name(JOB_PAUSED);
			ji->state_e = EL_PAUSED;
		} else
			ji->state_e = EL_BAR_LOW;
		break;
	}
}
