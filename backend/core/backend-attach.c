/*
 * backend-attach.c: re-attaching to a running job: the journal's "job"
 * and "job_end" records rebuild the jobs, and the newest one still
 * running (or the one named) is followed again, its heartbeats counted
 * from now.
 */
#include <stdio.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/xmalloc.h"
#include "backend/core/backend-internal.h"
#include "backend/core/backend-program.h"

/* Rebuild jobs from the journal: the last "job" record of each name that
 * has no "job_end" after it is still running. */
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
		if ((j = backend_job(b, name)) != NULL)
			j->done = true;
		return;
	}
	if (kind != PK_JOB) {
		backend_program_replay(b, rec);	/* a program's checkpoints */
		return;
	}
	j = backend_new_job(b, name);
	j->yaml = xstrdup(json_string_value(json_object_get(rec, "yaml")) ?: "");
	snprintf(j->spec_file, sizeof j->spec_file, "%s",
	    json_string_value(json_object_get(rec, "spec_file")) ?: "");
	if (spec_parse_job(j->spec_file, j->yaml, strlen(j->yaml), &j->spec,
	    &errs) != 0)
		spec_job_defaults(&j->spec);
	spec_errors_free(&errs);
	j->world = (int)json_integer_value(json_object_get(rec, "world"));
	j->generation = (int)json_integer_value(json_object_get(rec, "generation"));
	j->run = json_integer_value(json_object_get(rec, "run"));
	if (j->world <= 0 || j->world > 65536)
		j->world = 1;
	j->ranks = xcalloc((size_t)j->world, sizeof *j->ranks);
	pl = json_object_get(rec, "placement");
	json_array_foreach(pl, i, v) {
		struct fleet_node *fn = fleet_find(&b->fleet, json_string_value(v) ?: "");

		if (i < (size_t)j->world && fn != NULL) {
			j->ranks[i].node = (int)(fn - b->fleet.nodes);
			j->ranks[i].status = RANK_RUNNING;
			/* Heartbeats are counted from the re-attach. */
			j->ranks[i].last_seen = clock_mono();
		}
	}
	backend_program_replay(b, rec);
}

int
backend_attach(struct backend *b, const char *name, char *err, size_t errlen)
{
	char		 path[PATH_MAX + 32], why[512] = "";
	int		 bad;
	struct job_state *j;

	snprintf(path, sizeof path, "%s/journal.jsonl", b->dir);
	if (journal_replay(path, backend_replay_record, b, &bad, why,
	    sizeof why) < 0) {
		snprintf(err, errlen, "%s", why);
		return -1;
	}
	if (bad > 0)
		backend_event(b, NULL, "restarted", -1, NULL, "%s (%d line%s)",
		    why, bad, bad == 1 ? "" : "s");
	for (int i = b->njobs - 1; i >= 0; i--) {
		j = &b->jobs[i];
		if (!j->done && (name == NULL || strcmp(j->name, name) == 0)) {
			/* Older records of the same name are history. */
			for (int k = 0; k < i; k++) {
				if (strcmp(b->jobs[k].name, j->name) == 0)
					b->jobs[k].done = true;
			}
			j->grace_until = clock_mono() + 5;
			for (int r = 0; r < j->world; r++)
				b->used[j->ranks[r].node]++;
			backend_event(b, j->name, "restarted", -1, NULL,
			    "re-attached to %s (%d ranks)", j->name, j->world);
			return 0;
		}
	}
	snprintf(err, errlen, "no running job%s%s in %s", name ? " named " : "",
	    name ? name : "", b->dir);
	return -1;
}
