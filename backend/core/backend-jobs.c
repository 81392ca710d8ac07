/*
 * backend-jobs.c: jobs: submit (place, journal, launch), re-attach from
 * the journal, the end of a job, and the commands front ends post.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/core/backend-internal.h"
#include "backend/core/xmalloc.h"
#include "backend/proto/proto.h"
#include "backend/sched/place.h"

/* Milliseconds since the epoch: unique enough for launches that the same
 * state directory's lock already serialises. */
static long long
backend_run_id(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct job_state *
backend_new_job(struct backend *b, const char *name)
{
	struct job_state *j;

	b->jobs = xreallocarray(b->jobs, (size_t)b->njobs + 1, sizeof *b->jobs);
	j = &b->jobs[b->njobs++];
	memset(j, 0, sizeof *j);
	snprintf(j->name, sizeof j->name, "%s", name);
	snprintf(j->state, sizeof j->state, "running");
	return j;
}

static char *
read_text(const char *path, char *err, size_t errlen)
{
	FILE	*f = fopen(path, "r");
	char	*buf;
	long	 n;

	if (f == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	if (n < 0 || n > (1 << 20)) {
		snprintf(err, errlen, "%s: not a job file (%ld bytes)", path, n);
		fclose(f);
		return NULL;
	}
	buf = xmalloc((size_t)n + 1);
	n = (long)fread(buf, 1, (size_t)n, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void
backend_launch_rank(struct backend *b, struct job_state *j, int r,
    const struct submit_opts *so)
{
	struct fleet_node *fn = &b->fleet.nodes[j->ranks[r].node];
	char		 ckdir[PATH_MAX + 64];
	json_t		*m;

	if (j->spec.checkpoint.dir[0] != '\0')
		snprintf(ckdir, sizeof ckdir, "%s", j->spec.checkpoint.dir);
	else
		snprintf(ckdir, sizeof ckdir, "%s/checkpoints/%s", b->dir, j->name);
	m = json_pack("{s:s, s:s, s:s, s:i, s:i, s:i, s:s, s:s, s:s, s:s, "
	    "s:b, s:i, s:i, s:i, s:i}", "t", MSG_CMD, "cmd", "launch",
	    "job", j->name, "rank", r, "world", j->world,
	    "generation", j->generation, "node", fn->spec->name,
	    "addr", fn->addr, "spec_file", j->spec_file, "spec_yaml", j->yaml,
	    "resume", so->resume, "stop_after_epochs", so->stop_after_epochs,
	    "trace_steps", so->trace_steps, "slow_data_ms", so->slow_data_ms,
	    "timeout_ms", (int)(j->spec.policy.heartbeat_timeout_s * 1000));
	json_object_set_new(m, "checkpoint_dir", json_string(ckdir));
	json_object_set_new(m, "run", json_integer(j->run));
	if (fleet_send(fn, m) != 0) {
		j->ranks[r].status = RANK_FAILED;
		backend_event(b, j->name, "failed", r, fn->spec->name,
		    "cannot reach the agent of %s", fn->spec->name);
	} else
		j->ranks[r].status = RANK_RUNNING;
	json_decref(m);
}

int
backend_submit(struct backend *b, const char *spec_file,
    const struct submit_opts *so, char *err, size_t errlen)
{
	struct spec_errors errs = { 0 };
	struct job_state *j, *old;
	struct job_spec	 spec;
	int		*node_of;
	char		*yaml;
	json_t		*rec, *placement;

	if ((yaml = read_text(spec_file, err, errlen)) == NULL)
		return -1;
	if (spec_parse_job(spec_file, yaml, strlen(yaml), &spec, &errs) != 0) {
		snprintf(err, errlen, "%s:%d:%d: %s%s", errs.v[0].file,
		    errs.v[0].line, errs.v[0].col, errs.v[0].msg, errs.n > 1 ?
		    " (and more: hunter validate lists them all)" : "");
		spec_errors_free(&errs);
		free(yaml);
		return -1;
	}
	if ((old = backend_job(b, spec.name)) != NULL && !old->done) {
		snprintf(err, errlen, "job %s is already running; `hunter run "
		    "--attach` follows it", spec.name);
		free(yaml);
		return -1;
	}
	node_of = xcalloc((size_t)spec.resources.ranks, sizeof *node_of);
	if (place_job(b->cluster, &spec, b->used, node_of, err, errlen) != 0) {
		backend_event(b, spec.name, "refused", -1, NULL, "%s", err);
		free(node_of);
		free(yaml);
		return -1;
	}
	j = backend_new_job(b, spec.name);
	j->spec = spec;
	j->yaml = yaml;
	snprintf(j->spec_file, sizeof j->spec_file, "%s", spec_file);
	j->world = spec.resources.ranks;
	j->run = backend_run_id();
	j->ranks = xcalloc((size_t)j->world, sizeof *j->ranks);
	placement = json_array();
	for (int r = 0; r < j->world; r++) {
		j->ranks[r].node = node_of[r];
		json_array_append_new(placement,
		    json_string(b->cluster->nodes[node_of[r]].name));
	}
	free(node_of);
	rec = json_pack("{s:s, s:s, s:s, s:s, s:i, s:i, s:I, s:O}", "t", "job",
	    "job", j->name, "spec_file", spec_file, "yaml", yaml,
	    "world", j->world, "generation", j->generation,
	    "run", (json_int_t)j->run, "placement", placement);
	journal_append(b->journal, rec);
	json_decref(rec);
	{
		char	*names = json_dumps(placement, JSON_COMPACT);
		backend_event(b, j->name, "placed", -1, NULL, "%d ranks on %s",
		    j->world, names);
		free(names);
	}
	json_decref(placement);
	for (int r = 0; r < j->world; r++)
		backend_launch_rank(b, j, r, so);
	return 0;
}

/* Rebuild jobs from the journal: the last "job" record of each name that
 * has no "job_end" after it is still running. */
static void
backend_replay_record(void *ctx, json_t *rec)
{
	struct backend	*b = ctx;
	const char	*t = json_string_value(json_object_get(rec, "t"));
	const char	*name = json_string_value(json_object_get(rec, "job"));
	struct job_state *j;
	struct spec_errors errs = { 0 };
	json_t		*pl, *v;
	size_t		 i;

	if (t == NULL || name == NULL)
		return;
	if (strcmp(t, "job_end") == 0) {
		if ((j = backend_job(b, name)) != NULL)
			j->done = true;
		return;
	}
	if (strcmp(t, "job") != 0)
		return;
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
		}
	}
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
			backend_event(b, j->name, "restarted", -1, NULL,
			    "re-attached to %s (%d ranks)", j->name, j->world);
			return 0;
		}
	}
	snprintf(err, errlen, "no running job%s%s in %s", name ? " named " : "",
	    name ? name : "", b->dir);
	return -1;
}

void
backend_stop_job(struct backend *b, const char *name)
{
	struct job_state *j = backend_job(b, name);
	json_t		*m;

	if (j == NULL || j->done)
		return;
	m = json_pack("{s:s, s:s, s:s}", "t", MSG_CMD, "cmd", "stop", "job",
	    j->name);
	for (int i = 0; i < b->fleet.n; i++)
		fleet_send(&b->fleet.nodes[i], m);
	json_decref(m);
	backend_event(b, j->name, "checkpoint", -1, NULL,
	    "stop requested: every rank checkpoints at the same step and ends");
}

/* A command from a front end (posted, or from console.sock). */
void
backend_command(struct backend *b, const json_t *cmd)
{
	const char	*c = json_string_value(json_object_get(cmd, "cmd"));
	const char	*job = json_string_value(json_object_get(cmd, "job"));

	if (c == NULL)
		return;
	if (strcmp(c, "stop") == 0)
		backend_stop_job(b, job);
	else if (strcmp(c, "detach") == 0)
		b->detach = true;
	else
		backend_event(b, job, "refused", -1, NULL,
		    "unknown command '%s'", c);
}

void
backend_job_done(struct backend *b, struct job_state *j)
{
	const char	*st = "failed";
	json_t		*rec;

	for (int r = 0; r < j->world; r++) {
		if (j->ranks[r].status == RANK_RUNNING ||
		    j->ranks[r].status == RANK_PENDING)
			return;
	}
	if (j->summary != NULL && json_string_value(json_object_get(j->summary,
	    "state")) != NULL)
		st = json_string_value(json_object_get(j->summary, "state"));
	for (int r = 0; r < j->world; r++) {
		if (j->ranks[r].status == RANK_FAILED)
			st = "failed";
	}
	snprintf(j->state, sizeof j->state, "%s", st);
	j->done = true;
	for (int r = 0; r < j->world; r++) {
		if (b->used[j->ranks[r].node] > 0)
			b->used[j->ranks[r].node]--;
	}
	rec = json_pack("{s:s, s:s, s:s}", "t", "job_end", "job", j->name,
	    "state", j->state);
	journal_append(b->journal, rec);
	json_decref(rec);
}

