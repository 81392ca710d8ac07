/*
 * backend-attach.c: re-attaching to a job: the journal's "job", "phase"
 * and "job_end" records rebuild the jobs, and the newest (or the one
 * named) is followed again, its heartbeats counted from now; one that
 * has ended says how, from the journal and its saved series.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/xmalloc.h"
#include "backend/core/backend-internal.h"
#include "backend/core/series-file.h"
#include "backend/core/backend-program.h"

/* The newest job called name that the journal rebuilt; the jobs this
 * backend had before it replayed are its own, and no record moves them. */
static struct job_state *
replayed_job(struct backend *b, const char *name)
{
	for (int i = b->njobs - 1; name != NULL && i >= b->replay_from; i--) {
		if (strcmp(b->jobs[i].name, name) == 0)
			return &b->jobs[i];
	}
	return NULL;
}

/*
 * Rebuild jobs from the journal: the last "job" record of each name that
 * has no "job_end" after it is still live.  Its phase is what the
 * journal's phase events left it in, where a re-attached backend can
 * carry on from there (paused, stopping, a re-formation or a resize
 * whose decision it has), else running; a job_end record's is final.
 */
static void
backend_replay_phase(struct backend *b, const json_t *rec)
{
	struct job_state *j = replayed_job(b, json_string_value(
	    json_object_get(rec, "job")));
	enum job_phase	 p;

	if (j == NULL || job_done(j) || json_integer_value(json_object_get(rec,
	    "rank")) >= 0 || job_phase_named(json_string_value(
	    json_object_get(rec, "to")), &p) != 0)
		return;
	if ((p == JOB_REFORMING || p == JOB_RESIZING) &&
	    j->restart.node_of != NULL)
		job_restore_phase(j, p);
	else if (p == JOB_PAUSED || p == JOB_STOPPING)
		job_restore_phase(j, p);
	else if (!job_phase_final(p))
		job_restore_phase(j, JOB_RUNNING);
}

/* A re-formation's decision (job_regroup): its placement, so that the
 * backend that re-attaches mid-way starts the next generation there. */
static void
backend_replay_decision(struct backend *b, const json_t *rec)
{
	struct job_state *j = replayed_job(b, json_string_value(
	    json_object_get(rec, "job")));
	const json_t	*pl = json_object_get(rec, "placement");
	int		 world = (int)json_integer_value(json_object_get(rec,
	    "world"));
	enum event_kind	 k = event_kind_of(rec);
	const json_t	*v;
	size_t		 i;

	if (j == NULL || job_done(j) || json_integer_value(json_object_get(rec,
	    "run")) != j->run || !json_is_array(pl) || world < 1 ||
	    world > 65536 || json_array_size(pl) != (size_t)world ||
	    (k != EV_MIGRATED && k != EV_FAILOVER && k != EV_RESTARTED &&
	    k != EV_RESIZED))
		return;
	free(j->restart.node_of);
	j->restart.node_of = xcalloc((size_t)world, sizeof(int));
	json_array_foreach(pl, i, v) {
		struct fleet_node *fn = fleet_find(&b->fleet,
		    json_string_value(v) ?: "");

		if (fn == NULL) {	/* a node this cluster lacks */
			free(j->restart.node_of);
			j->restart.node_of = NULL;
			return;
		}
		j->restart.node_of[i] = (int)(fn - b->fleet.nodes);
	}
	j->restart.world = world;
	j->restart.kind = k;
	j->restart.since = clock_mono();
	snprintf(j->restart.reason, sizeof j->restart.reason, "%s",
	    json_string_value(json_object_get(rec, "reason")) ?: "");
	/* The decision was taken: the phase it moves to (job_regroup's),
	 * whether or not its phase event made it to the journal (after a
	 * rotation, only the decision is written again). */
	job_restore_phase(j, world != j->world ? JOB_RESIZING : JOB_REFORMING);
}

/* The submit options a launch record kept (backend_journal_job), each
 * within what `hunter run` takes; a journal of an older build has none. */
static void
attach_opts(struct job_state *j, const json_t *o)
{
	struct submit_opts *so = &j->opts;
	json_int_t	 v;

	*so = (struct submit_opts){ .slow_rank = -1, .leak_rank = -1,
	    .crash_rank = -1, .log_flood_rank = -1 };
	if (!json_is_object(o))
		return;
	so->resume = json_is_true(json_object_get(o, "resume"));
	if ((v = json_integer_value(json_object_get(o, "stop_after_epochs"))) >
	    0 && v <= 1000000)
		so->stop_after_epochs = (int)v;
	if ((v = json_integer_value(json_object_get(o, "trace_steps"))) > 0 &&
	    v <= 1000000)
		so->trace_steps = (int)v;
	if ((v = json_integer_value(json_object_get(o, "slow_data_ms"))) > 0 &&
	    v <= 1000000000)
		so->slow_data_ms = (int)v;
	if ((v = json_integer_value(json_object_get(o, "slow_sample_us"))) > 0 &&
	    v <= 1000000000)
		so->slow_sample_us = (int)v;
}

static void
backend_replay_record(void *ctx, json_t *rec)
{
	struct backend	*b = ctx;
	const char	*name = json_string_value(json_object_get(rec, "job"));
	enum proto_kind	 kind = proto_kind(rec, NULL, 0);
	struct job_state *j;
	struct spec_errors errs = { 0 };
	json_t		*pl, *v;
	size_t		 i;

	if (name == NULL)
		return;
	if (kind == PK_JOB_END) {
		enum job_phase	 p = JOB_STOPPED;

		job_phase_named(json_string_value(json_object_get(rec,
		    "state")), &p);
		if ((j = replayed_job(b, name)) != NULL && !job_done(j)) {
			job_restore_phase(j, job_phase_final(p) ? p : JOB_STOPPED);
			j->end_ts = json_number_value(json_object_get(rec,
			    "ts"));
			snprintf(j->reason, sizeof j->reason, "%s",
			    json_string_value(json_object_get(rec, "reason")) ?:
			    "");
		}
		return;
	}
	if (kind == PK_EVENT && event_kind_of(rec) == EV_PHASE) {
		backend_replay_phase(b, rec);
		return;
	}
	if (kind == PK_DECISION) {
		backend_replay_decision(b, rec);
		return;
	}
	if (kind != PK_JOB) {
		backend_program_replay(b, rec);	/* a program's checkpoints */
		return;
	}
	/* The next generation of the same run is the same job, placed
	 * anew; another run of the name makes the older one history (it
	 * ended, or its backend died before it could say so). */
	if ((j = replayed_job(b, name)) != NULL && j->run ==
	    json_integer_value(json_object_get(rec, "run"))) {
		free(j->yaml);
		free(j->ranks);
		free(j->restart.node_of);	/* carried out: this record */
		j->yaml = NULL;
		j->ranks = NULL;
		j->restart.node_of = NULL;
		/* The relaunch was under way: a backend killed before its
		 * phase event left the job placing, not re-forming. */
		if (job_reforming(j))
			job_restore_phase(j, JOB_RUNNING);
	} else {
		if (j != NULL && !job_done(j))
			job_restore_phase(j, JOB_STOPPED);
		j = backend_new_job(b, name, JOB_RUNNING);
	}
	j->yaml = xstrdup(json_string_value(json_object_get(rec, "yaml")) ?: "");
	snprintf(j->spec_file, sizeof j->spec_file, "%s",
	    json_string_value(json_object_get(rec, "spec_file")) ?: "");
	if (spec_parse_job(j->spec_file, j->yaml, strlen(j->yaml), &j->spec,
	    &errs) != 0)
		spec_job_defaults(&j->spec);
	spec_errors_free(&errs);
	attach_opts(j, json_object_get(rec, "opts"));
	j->world = (int)json_integer_value(json_object_get(rec, "world"));
	j->generation = (int)json_integer_value(json_object_get(rec, "generation"));
	j->run = json_integer_value(json_object_get(rec, "run"));
	/* The first launch's time; a journal of a release before it had
	 * none, and its first record of the run stands in. */
	if ((v = json_object_get(rec, "first_ts")) != NULL &&
	    json_number_value(v) > 0)
		j->first_ts = json_number_value(v);
	else if (j->first_ts == 0)
		j->first_ts = json_number_value(json_object_get(rec, "ts"));
	if (j->world <= 0 || j->world > 65536)
		j->world = 1;
	j->ranks = xcalloc((size_t)j->world, sizeof *j->ranks);
	pl = json_object_get(rec, "placement");
	json_array_foreach(pl, i, v) {
		struct fleet_node *fn = fleet_find(&b->fleet, json_string_value(v) ?: "");

		if (i < (size_t)j->world && fn != NULL) {
			j->ranks[i].node = (int)(fn - b->fleet.nodes);
			rank_restore_phase(j, (int)i, RANK_RUNNING);
			/* Heartbeats are counted from the re-attach; its
			 * agent's hello says whether it is there at all. */
			j->ranks[i].last_seen = clock_mono();
			j->ranks[i].replayed = true;
		}
	}
	backend_program_replay(b, rec);
}

/*
 * A frame of j's saved series into the state model, as it was when it
 * came: of a job that ended, its summary; of a live one, each rank's
 * metrics of the generation that runs.  The agents send their history
 * again (epochs, evals, events, exits) and the last metrics of each
 * worker they still run, but not of one that ended while no backend was
 * attached: without the series, its rank's exit said "step 0, epoch 0".
 */
static void
attach_frame(struct job_state *j, json_t *o)
{
	const json_t	*gen = json_object_get(o, "generation");
	const json_t	*rank = json_object_get(o, "rank");
	char		 err[64];

	/* The file leaves out what its header says (series-file.c): put
	 * back what proto_kind checks a frame of a job for. */
	json_object_set_new(o, "job", json_string(j->name));
	if (strcmp(json_string_value(json_object_get(o, "t")) ?: "",
	    "metrics") == 0)
		json_object_set_new(o, "scope", json_string("rank"));
	switch (proto_kind(o, NULL, 0)) {
	case PK_SUMMARY:
		if (job_done(j))
			summary_unpack(o, &j->sum, err, sizeof err);
		return;
	case PK_METRICS:
		if (job_done(j) || json_is_true(json_object_get(o, "beat")) ||
		    !json_is_integer(rank) || json_integer_value(rank) < 0 ||
		    json_integer_value(rank) >= j->world ||
		    (json_is_integer(gen) && json_integer_value(gen) !=
		    j->generation))
			return;
		backend_series_count(j, (int)json_integer_value(rank), o);
		backend_rank_metrics(j, (int)json_integer_value(rank), o);
		return;
	default:
		return;
	}
}

/* j's run in its saved series, frame by frame (attach_frame): the
 * frames under a header of its run, or that name it. */
static void
attach_series(struct backend *b, struct job_state *j)
{
	char		 path[PATH_MAX + 128], *line = NULL;
	size_t		 cap = 0;
	FILE		*f;
	json_t		*o, *run;
	long long	 in = -1;	/* the run of the header above */

	series_file_path(b->dir, j->name, path, sizeof path);
	if ((f = fopen(path, "r")) == NULL)
		return;
	while (getline(&line, &cap, f) > 0) {
		if ((o = json_loads(line, 0, NULL)) == NULL)
			continue;	/* a line cut short by a crash */
		run = json_object_get(o, "run");
		if (strcmp(json_string_value(json_object_get(o, "t")) ?: "",
		    "series") == 0)
			in = json_is_integer(run) ? json_integer_value(run) : -1;
		else if ((json_is_integer(run) ? json_integer_value(run) :
		    in) == j->run)
			attach_frame(j, o);
		json_decref(o);
	}
	free(line);
	fclose(f);
}

int
backend_attach(struct backend *b, const char *name, char *err, size_t errlen)
{
	char		 path[PATH_MAX + 32], why[512] = "";
	int		 bad;
	struct job_state *j;

	/* Once: the jobs it rebuilds are this backend's from then on. */
	snprintf(path, sizeof path, "%s/journal.jsonl", b->dir);
	if (!b->replayed)
		b->replay_from = b->njobs;	/* before them, its own */
	if (!b->replayed && journal_replay(path, backend_replay_record, b,
	    &bad, why, sizeof why) < 0) {
		snprintf(err, errlen, "%s", why);
		return -1;
	}
	if (!b->replayed && bad > 0)
		backend_event(b, NULL, EV_RESTARTED, -1, NULL, "%s (%d line%s)",
		    why, bad, bad == 1 ? "" : "s");
	b->replayed = true;
	if ((j = backend_job(b, name)) == NULL) {
		snprintf(err, errlen, "no job%s%s in the journal of %s", name ?
		    " named " : "", name ? name : "", b->dir);
		return -1;
	}
	/* Once: a job this backend attached to before has its frames. */
	if (!j->owned)
		attach_series(b, j);
	j->owned = true;
	if (job_done(j)) {
		/* It ended before this attach: its end, as the journal and its
		 * saved series have it. */
		backend_event(b, j->name, EV_RESTARTED, -1, NULL, "%s had "
		    "ended before this attach: %s%s%s", j->name,
		    job_phase_name(j->phase), j->reason[0] != '\0' ? ": " : "",
		    j->reason);
		return 0;
	}
	j->grace_until = clock_mono() + 5;
	for (int r = 0; r < j->world; r++)
		b->used[j->ranks[r].node]++;
	backend_event(b, j->name, EV_RESTARTED, -1, NULL, "re-attached to %s "
	    "(%d ranks)", j->name, j->world);
	return 0;
}
