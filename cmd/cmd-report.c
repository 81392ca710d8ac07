/*
 * cmd-report.c: `hunter report JOB`: one self-contained HTML page about a
 * job, for a ticket the morning after: loss and throughput over steps,
 * each rank's step time and where it went, the bytes on the wire, the
 * autotune trace, the epochs, what moved on its nodes and the timeline
 * of events with their reasons.  The series come from the job's saved series
 * (backend/core/series-file.h), the events from the journal, rotated
 * files (journal.jsonl.N) included, read through journal.h.  Charts are
 * inline SVG (report-svg.c); the page loads nothing.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "lib/files.h"
#include "lib/statedir.h"
#include "lib/xmalloc.h"
#include "backend/proto/event.h"
#include "backend/proto/proto.h"
#include "backend/core/journal.h"
#include "backend/core/series-file.h"
#include "cmd/cmd.h"
#include "cmd/report.h"

const enum rank_metric report_cols[NCOLS] = { RM_STEP, RM_LOSS,
	RM_SAMPLES_PER_S, RM_STEP_MS, RM_COMPUTE_MS, RM_COMM_MS,
	RM_DATA_WAIT_MS, RM_BYTES_SENT_TOTAL, RM_BYTES_DENSE_TOTAL,
	RM_TOKENS_PER_S, RM_GRAD_NORM };

static void
rank_push(struct report *rp, int r, const json_t *m)
{
	struct rank_data *rd;

	if (r < 0 || r >= 65536)
		return;
	if (r >= rp->nranks) {
		rp->ranks = xreallocarray(rp->ranks, (size_t)r + 1,
		    sizeof *rp->ranks);
		memset(rp->ranks + rp->nranks, 0, sizeof *rp->ranks *
		    (size_t)(r + 1 - rp->nranks));
		rp->nranks = r + 1;
	}
	rd = &rp->ranks[r];
	if (rd->n == rd->cap) {
		rd->cap = rd->cap ? rd->cap * 2 : 256;
		for (int c = 0; c < C_ALL; c++)
			rd->v[c] = xreallocarray(rd->v[c], (size_t)rd->cap,
			    sizeof(double));
	}
	for (int c = 0; c < NCOLS; c++) {
		json_t	*v = json_object_get(m,
		    rank_metrics[report_cols[c]].name);

		rd->v[c][rd->n] = json_is_number(v) ? json_number_value(v) : NAN;
	}
	rd->v[C_TS][rd->n] = json_number_value(json_object_get(m, "ts"));
	rd->n++;
}

static void
series_rec(void *ctx, json_t *rec)
{
	struct report	*rp = ctx;
	const char	*t = json_string_value(json_object_get(rec, "t"));

	if (t == NULL)
		return;
	if (strcmp(t, "series") == 0 && rp->header == NULL) {
		rp->header = json_incref(rec);
		rp->t0 = json_number_value(json_object_get(rec, "ts"));
	} else if (strcmp(t, MSG_METRICS) == 0)
		rank_push(rp, (int)json_integer_value(json_object_get(rec,
		    "rank")), rec);
	else if (strcmp(t, "node") == 0)
		json_array_append(rp->nodes, rec);
	else if (strcmp(t, MSG_EPOCH) == 0)
		json_array_append(rp->epochs, rec);
	else if (strcmp(t, MSG_EVAL) == 0)
		json_array_append(rp->evals, rec);
	else if (strcmp(t, MSG_AUTOTUNE) == 0) {
		json_decref(rp->autotune);
		rp->autotune = json_incref(rec);
	} else if (strcmp(t, MSG_SUMMARY) == 0) {
		json_decref(rp->summary);
		rp->summary = json_incref(rec);
	}
}

/* The journal's records of this run, from the series' start: its job's
 * (a --resume after its end goes on with the story), and the nodes'
 * link failovers while it ran. */
static void
journal_rec(void *ctx, json_t *rec)
{
	struct report	*rp = ctx;
	const char	*job = json_string_value(json_object_get(rec, "job"));
	const char	*kind = json_string_value(json_object_get(rec, "kind"));
	double		 ts = json_number_value(json_object_get(rec, "ts"));
	enum event_kind	 k;

	/* A second of slack for the events just before the series opened
	 * (checkpoints of a previous run moved aside). */
	if (ts < rp->t0 - 1 || job == NULL)
		return;
	switch (proto_kind(rec, NULL, 0)) {
	case PK_JOB:
		if (strcmp(job, rp->job) == 0) {
			json_array_append(rp->jobs, rec);
			rp->ended = false;
		}
		break;
	case PK_JOB_END:
		if (strcmp(job, rp->job) != 0)
			break;
		snprintf(rp->end_state, sizeof rp->end_state, "%s",
		    json_string_value(json_object_get(rec, "state")) ?: "?");
		rp->ended = true;
		rp->t1 = ts;
		break;
	case PK_EVENT:
		k = event_kind_named(kind);
		/* A rank's phase moves are as many as its ranks, and their own
		 * events say more: the job's are kept. */
		if (k == EV_PHASE && json_integer_value(json_object_get(rec,
		    "rank")) >= 0)
			break;
		if (strcmp(job, rp->job) == 0 || (*job == '\0' && !rp->ended &&
		    (k == EV_FAILOVER || k == EV_REFUSED)))
			json_array_append(rp->events, rec);
		break;
	default:
		break;
	}
}

/* Every journal file, oldest first: journal.jsonl.N ... .1, then
 * journal.jsonl (the rotation keeps the newest lowest). */
static void
read_journal(const char *dir, struct report *rp)
{
	char		 path[PATH_MAX + 40], err[512];
	struct stat	 st;
	int		 top = 0, bad;

	for (int k = 1; k < 1000; k++) {
		snprintf(path, sizeof path, "%s/journal.jsonl.%d", dir, k);
		if (stat(path, &st) != 0)
			break;
		top = k;
	}
	for (int k = top; k >= 0; k--) {
		if (k > 0)
			snprintf(path, sizeof path, "%s/journal.jsonl.%d", dir,
			    k);
		else
			snprintf(path, sizeof path, "%s/journal.jsonl", dir);
		if (journal_replay(path, journal_rec, rp, &bad, err,
		    sizeof err) < 0)
			fprintf(stderr, "hunter report: %s\n", err);
	}
}


static void
report_free(struct report *rp)
{
	for (int r = 0; r < rp->nranks; r++) {
		for (int c = 0; c < C_ALL; c++)
			free(rp->ranks[r].v[c]);
	}
	free(rp->ranks);
	json_decref(rp->header);
	json_decref(rp->summary);
	json_decref(rp->autotune);
	json_decref(rp->epochs);
	json_decref(rp->evals);
	json_decref(rp->events);
	json_decref(rp->jobs);
	json_decref(rp->nodes);
}

/* A fresh temporary file beside out (lib/files.h), with the mode a
 * plain fopen would give the page.  The fd, or -1 with errno. */
static int
report_tmp(const char *out, char *tmp, size_t len)
{
	char		 dir[PATH_MAX], stem[PATH_MAX + 2];
	const char	*slash = strrchr(out, '/');

	if (slash == NULL)
		snprintf(dir, sizeof dir, ".");
	else
		snprintf(dir, sizeof dir, "%.*s", slash == out ? 1 :
		    (int)(slash - out), out);
	snprintf(stem, sizeof stem, ".%s", slash != NULL ? slash + 1 : out);
	return file_tmp_open(dir, stem, 0666, tmp, len);
}

static const struct cmd_option report_options[] = {
	{ "output", 'o', "FILE.html", "where the page goes (default: "
	    "JOB-report.html)" },
	{ NULL }
};

static int
cmd_report(const struct cmd_args *a)
{
	struct report	 rp = { 0 };
	char		 dir[PATH_MAX], series[PATH_MAX + 80], out[PATH_MAX];
	char		 tmp[PATH_MAX + 64], err[512];
	const char	*output = cmd_get(a, "output");
	struct stat	 st;
	FILE		*f;
	int		 bad, rc, fd;

	rp.job = a->argv[0];
	if (strchr(rp.job, '/') != NULL || rp.job[0] == '.' ||
	    rp.job[0] == '\0') {
		fprintf(stderr, "hunter report: '%s' is not a job name\n",
		    rp.job);
		return 2;
	}
	if (statedir_path(dir, sizeof dir) != 0) {
		fprintf(stderr, "hunter report: no state directory: set "
		    "HUNTER_STATE_DIR\n");
		return 1;
	}
	series_file_path(dir, rp.job, series, sizeof series);
	rp.series_path = series;
	rp.state_dir = dir;
	rp.epochs = json_array();
	rp.evals = json_array();
	rp.events = json_array();
	rp.jobs = json_array();
	rp.nodes = json_array();
	if ((rc = journal_replay(series, series_rec, &rp, &bad, err,
	    sizeof err)) <= 0 || rp.header == NULL) {
		fprintf(stderr, "hunter report: no saved series of job %s in "
		    "%s/series (%s)\n", rp.job, dir, rc < 0 ? err :
		    stat(series, &st) != 0 ? "the job has not run with this "
		    "state directory" : "the file has no header");
		report_free(&rp);
		return 1;
	}
	if (bad > 0)
		fprintf(stderr, "hunter report: %s (%d line%s)\n", err, bad,
		    bad == 1 ? "" : "s");
	read_journal(dir, &rp);
	if (!rp.ended) {
		rp.t1 = rp.t0;
		for (int r = 0; r < rp.nranks; r++) {
			if (rp.ranks[r].n > 0)
				rp.t1 = fmax(rp.t1, rp.ranks[r].v[C_TS][
				    rp.ranks[r].n - 1]);
		}
	}
	if (output == NULL)
		snprintf(out, sizeof out, "%s-report.html", rp.job);
	else
		snprintf(out, sizeof out, "%s", output);
	/* Written aside and renamed: a reader never sees half a page.  The
	 * directory may be shared (the current one, by default): the
	 * temporary file's name is one nobody can plant a link under. */
	if ((fd = report_tmp(out, tmp, sizeof tmp)) < 0 ||
	    (f = fdopen(fd, "w")) == NULL) {
		fprintf(stderr, "hunter report: a temporary file beside %s: "
		    "%s\n", out, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		report_free(&rp);
		return 1;
	}
	report_page(f, &rp);
	if (fclose(f) != 0 || rename(tmp, out) != 0) {
		fprintf(stderr, "hunter report: %s: %s\n", out, strerror(errno));
		unlink(tmp);
		report_free(&rp);
		return 1;
	}
	stat(out, &st);
	printf("hunter report: wrote %s (%lld KiB; %d ranks, %zu events)\n",
	    out, (long long)st.st_size / 1024, rp.nranks,
	    json_array_size(rp.events));
	report_free(&rp);
	return 0;
}

const struct cmd_entry cmd_report_entry = {
	.name = "report",
	.usage = "JOB-NAME",
	.summary = "write one self-contained HTML page about a job: charts, "
	    "the autotune trace and its events (JOB-report.html)",
	.options = report_options,
	.args_min = 1,
	.args_max = 1,
	.exec = cmd_report,
};
