/*
 * backend-series.c: what a job's frames leave besides the state model:
 * the counters of its Prometheus series (checkpoints and bytes here; the
 * failovers where they are decided, job.c) and its saved
 * series for `hunter report` (series-file.h): metrics, epochs, evals, the
 * autotune trace and the summary.  Every frame of a job
 * passes here before the state model takes it.
 */
#include <stdio.h>
#include <string.h>

#include "backend/proto/proto.h"
#include "backend/core/backend-internal.h"
#include "backend/core/series-file.h"

void
backend_series_open(struct backend *b, struct job_state *j, bool fresh)
{
	char	 err[512];

	if (j->series != NULL)
		return;
	if ((j->series = series_file_open(b->dir, j->name, j->run, fresh, err,
	    sizeof err)) == NULL)
		backend_event(b, j->name, EV_REFUSED, -1, NULL, "no saved series "
		    "for hunter report: %s", err);
}

void
backend_series_close(struct job_state *j)
{
	series_file_close(j->series);
	j->series = NULL;
}

/* A per-generation byte count of rank r into the job's total: what it
 * grew by since the rank's last report, all of it after a relaunch. */
static void
count_bytes(struct job_state *j, const struct rank_state *rs,
    enum rank_metric m, long now_v, long long *total)
{
	long	 old = 0;

	if ((rs->known >> m) & 1)
		memcpy(&old, m == RM_BYTES_SENT_TOTAL ? &rs->bytes_sent_total :
		    &rs->bytes_dense_total, sizeof old);
	*total += now_v >= old ? now_v - old : now_v;
	j->total.bytes_known = true;
}

/* Whether an event says a checkpoint was written: "step N: PATH", or
 * "saved step N after the group failed" (backend/worker/train-ckpt.c);
 * the other checkpoint events are failures and skips. */
static bool
checkpoint_written(const json_t *ev)
{
	const char	*kind = json_string_value(json_object_get(ev, "kind"));
	const char	*why = json_string_value(json_object_get(ev, "reason"));

	return kind != NULL && why != NULL && strcmp(kind, "checkpoint") == 0 &&
	    (strncmp(why, "step ", 5) == 0 ||
	    strncmp(why, "saved step ", 11) == 0);
}

void
backend_series_count(struct job_state *j, int r, const json_t *msg)
{
	json_t	*v;

	v = json_object_get(msg, rank_metrics[RM_BYTES_SENT_TOTAL].name);
	if (json_is_integer(v))
		count_bytes(j, &j->ranks[r], RM_BYTES_SENT_TOTAL,
		    (long)json_integer_value(v), &j->total.bytes_sent);
	v = json_object_get(msg, rank_metrics[RM_BYTES_DENSE_TOTAL].name);
	if (json_is_integer(v))
		count_bytes(j, &j->ranks[r], RM_BYTES_DENSE_TOTAL,
		    (long)json_integer_value(v), &j->total.bytes_dense);
}

void
backend_series_frame(struct backend *b, struct job_state *j, int r,
    enum proto_kind k, const json_t *msg)
{
	switch (k) {
	case PK_METRICS:
		if (r < 0 || json_is_true(json_object_get(msg, "beat")))
			return;
		backend_series_count(j, r, msg);
		break;
	case PK_EVENT:
		j->total.checkpoints += checkpoint_written(msg);
		return;
	case PK_EPOCH:
	case PK_EVAL:
	case PK_AUTOTUNE:
	case PK_SUMMARY:
		break;
	default:
		return;
	}
	/* A job attached to after a restart of the front end goes on in the
	 * file it had. */
	if (j->series == NULL)
		backend_series_open(b, j, false);
	series_file_append(j->series, msg);
}
