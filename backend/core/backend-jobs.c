/*
 * backend-jobs.c: a job's life: submit (read and check the job file,
 * queue, place, journal, launch each rank), the re-formation's relaunch
 * as the next generation, and the end of a job, which frees its slots
 * for the queue.  Re-attaching from the journal is backend-attach.c;
 * the commands front ends post are backend-command.c.
 */
#include <errno.h>
#include <dirent.h>
#include <sys/stat.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/clock.h"
#include "lib/xmalloc.h"
#include "backend/proto/proto.h"
#include "backend/sched/queue.h"
#include "backend/core/backend-internal.h"
#include "backend/core/backend-program.h"

/* "local0, local0, local2, local2" for events (a static buffer). */
const char *
placement_text(struct backend *b, const struct job_state *j)
{
	static char	 buf[1024];
	size_t		 off = 0;

	buf[0] = '\0';
	for (int r = 0; r < j->world && off < sizeof buf - 80; r++)
		off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s",
		    r ? ", " : "", b->cluster->nodes[j->ranks[r].node].name);
	return buf;
}

/* Milliseconds since the epoch: unique enough for launches that the same
 * state directory's lock already serialises. */
static long long
backend_run_id(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct job_state *
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
job_ckdir(const struct backend *b, const struct job_state *j, char *buf,
    size_t len)
{
	if (j->spec.checkpoint.dir[0] != '\0')
		snprintf(buf, len, "%s", j->spec.checkpoint.dir);
	else
		snprintf(buf, len, "%s/checkpoints/%s", b->dir, j->name);
}

/* A fresh run (not --resume) of a name used before must not find the old
 * run's checkpoints: pruning would drop its own lower-numbered ones and a
 * failover would resume from the old weights.  They are moved aside, not
 * deleted. */
static void
job_fresh_checkpoints(struct backend *b, struct job_state *j)
{
	char	 dir[PATH_MAX + 64], aside[PATH_MAX + 128];
	struct stat st;

	DIR		*d;
	struct dirent	*de;
	int		 moved = 0;

	job_ckdir(b, j, dir, sizeof dir);
	if (j->opts.resume || j->generation > 0 || stat(dir, &st) != 0 ||
	    (d = opendir(dir)) == NULL)
		return;
	/* Into a folder inside: the directory itself may be a mount point. */
	snprintf(aside, sizeof aside, "%s/previous-%lld", dir, j->run);
	while ((de = readdir(d)) != NULL) {
		char from[PATH_MAX + 320], to[PATH_MAX + 400];

		if (strncmp(de->d_name, "step-", 5) != 0)
			continue;
		if (moved == 0 && mkdir(aside, 0700) != 0)
			break;
		snprintf(from, sizeof from, "%s/%s", dir, de->d_name);
		snprintf(to, sizeof to, "%s/%s", aside, de->d_name);
		moved += rename(from, to) == 0;
	}
	closedir(d);
	if (moved > 0)
		backend_event(b, j->name, "checkpoint", -1, NULL, "a fresh run: "
		    "%d checkpoints of the previous run of %s are now in %s",
		    moved, j->name, aside);
}

/* An injected fault applies to its rank in the first launch only, so a
 * relaunch after it does not meet it again. */
static int
inject_for(const struct job_state *j, int r, int rank, long value)
{
	return j->generation == 0 && (rank < 0 || rank == r) ? (int)value : 0;
}

static void
backend_launch_rank(struct backend *b, struct job_state *j, int r)
{
	struct fleet_node *fn = &b->fleet.nodes[j->ranks[r].node];
	const struct submit_opts *so = &j->opts;
	char		 ckdir[PATH_MAX + 64];
	json_t		*m;
	int		 local = 0;

	/* Ranks launch in order: the earlier ones' nodes are set, and this
	 * rank's index among those on its node picks its CUDA device. */
	for (int i = 0; i < r; i++)
		local += j->ranks[i].node == (int)(fn - b->fleet.nodes);
	job_ckdir(b, j, ckdir, sizeof ckdir);
	m = json_pack("{s:s, s:s, s:s, s:i, s:i, s:i, s:s, s:s, s:s, s:s, "
	    "s:b, s:i, s:i, s:i, s:i}", "t", MSG_CMD, "cmd", "launch",
	    "job", j->name, "rank", r, "world", j->world,
	    "generation", j->generation, "node", fn->spec->name,
	    "addr", fn->addr, "spec_file", j->spec_file, "spec_yaml", j->yaml,
	    "resume", so->resume || j->generation > 0,
	    "stop_after_epochs", so->stop_after_epochs,
	    "trace_steps", so->trace_steps, "slow_data_ms", so->slow_data_ms,
	    "timeout_ms", (int)(j->spec.policy.heartbeat_timeout_s * 1000));
	json_object_set_new(m, "checkpoint_dir", json_string(ckdir));
	json_object_set_new(m, "run", json_integer(j->run));
	json_object_set_new(m, "local_rank", json_integer(local));
	json_object_set_new(m, "slow_ms", json_integer(inject_for(j, r,
	    so->slow_rank, so->slow_ms)));
	json_object_set_new(m, "leak_bytes", json_integer(j->generation == 0 &&
	    (so->leak_rank < 0 || so->leak_rank == r) ? so->leak_bytes : 0));
	json_object_set_new(m, "crash_at", json_integer(j->generation == 0 &&
	    (so->crash_rank < 0 || so->crash_rank == r) ? so->crash_at : 0));
	if (j->prog != NULL)
		backend_program_launch(b, j, r, m);
	memset(&j->ranks[r], 0, offsetof(struct rank_state, h_loss));
	j->ranks[r].node = (int)(fn - b->fleet.nodes);
	j->ranks[r].last_seen = clock_mono();
	if (fleet_send(fn, m) != 0) {
		j->ranks[r].status = RANK_FAILED;
		backend_event(b, j->name, "failed", r, fn->spec->name,
		    "cannot reach the agent of %s", fn->spec->name);
	} else
		j->ranks[r].status = RANK_RUNNING;
	json_decref(m);
}

/* Journal the job's launch (or re-formation) with its placement. */
static void
backend_journal_job(struct backend *b, struct job_state *j)
{
	json_t	*placement = json_array(), *rec;

	for (int r = 0; r < j->world; r++)
		json_array_append_new(placement,
		    json_string(b->cluster->nodes[j->ranks[r].node].name));
	rec = json_pack("{s:s, s:s, s:s, s:s, s:i, s:i, s:I, s:o}", "t", MSG_JOB,
	    "job", j->name, "spec_file", j->spec_file, "yaml", j->yaml,
	    "world", j->world, "generation", j->generation,
	    "run", (json_int_t)j->run, "placement", placement);
	journal_append(b->journal, rec);
	json_decref(rec);
}

/* Versions must agree across the nodes and this console before a launch
 * (docs/architecture.md, "Scheduler").  Waits up to 5 s for hellos still on their way
 * when called from outside the loop with no loop thread running. */
static int
backend_versions_agree(struct backend *b, char *err, size_t errlen)
{
	json_t	*own;
	int	 rc;

	for (int waited = 0; !b->threaded && !b->in_loop && waited < 5000;
	    waited += 50) {
		bool	 missing = false;

		for (int i = 0; i < b->fleet.n; i++)
			missing |= b->fleet.nodes[i].fd >= 0 &&
			    b->fleet.nodes[i].hello == NULL;
		if (!missing)
			break;
		backend_poll_locked(b, 50);
	}
	own = proto_hello("backend", NULL);
	rc = fleet_check_versions(&b->fleet, own, err, errlen);
	json_decref(own);
	return rc;
}

int
backend_submit(struct backend *b, const char *spec_file,
    const struct submit_opts *so, char *err, size_t errlen)
{
	struct spec_errors errs = { 0 };
	struct job_state *j, *old;
	struct job_spec	 spec;
	char		*yaml;

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
	if (backend_versions_agree(b, err, errlen) != 0) {
		backend_event(b, spec.name, "refused", -1, NULL, "%s", err);
		free(yaml);
		return -1;
	}
	if (queue_admissible(backend_placing(b), &spec, err, errlen) != 0) {
		backend_event(b, spec.name, "refused", -1, NULL, "%s", err);
		free(yaml);
		return -1;
	}
	j = backend_new_job(b, spec.name);
	j->opts = *so;
	j->spec = spec;
	j->yaml = yaml;
	snprintf(j->spec_file, sizeof j->spec_file, "%s", spec_file);
	j->world = spec.resources.ranks;
	j->run = backend_run_id();
	j->ranks = xcalloc((size_t)j->world, sizeof *j->ranks);
	j->queued = true;
	j->submitted = clock_mono();
	snprintf(j->state, sizeof j->state, "queued");
	if (spec.kind == JOB_PROGRAM)
		backend_program_new(b, j);
	backend_schedule(b);
	if (j == backend_job(b, spec.name) && j->queued)
		backend_event(b, j->name, "queued", -1, NULL, "waiting for %d "
		    "free %s slots (%s priority)", j->world,
		    spec_device_name(spec.resources.device),
		    spec_priority_name(spec.priority));
	return 0;
}

/* Place and launch what fits of the queued jobs: by priority, then by
 * submission, smaller ones backfilling past a head that does not fit. */
void
backend_schedule(struct backend *b)
{
	struct queue_entry *e = xcalloc((size_t)b->njobs + 1, sizeof *e);
	int		*idx = xcalloc((size_t)b->njobs + 1, sizeof *idx);
	int		 n = 0;

	for (int i = 0; i < b->njobs; i++) {
		struct job_state *j = &b->jobs[i];

		if (!j->queued || j->done)
			continue;
		e[n] = (struct queue_entry){ .spec = &j->spec,
		    .submitted = j->submitted,
		    .node_of = xcalloc((size_t)j->world, sizeof(int)) };
		idx[n++] = i;
	}
	queue_schedule(backend_placing(b), b->used, e, n);
	for (int k = 0; k < n; k++) {
		struct job_state *j = &b->jobs[idx[k]];

		if (e[k].placed) {
			j->queued = false;
			snprintf(j->state, sizeof j->state, "running");
			for (int r = 0; r < j->world; r++)
				j->ranks[r].node = e[k].node_of[r];
			backend_launch_job(b, j);
		}
		free(e[k].node_of);
	}
	free(e);
	free(idx);
}

void
backend_launch_job(struct backend *b, struct job_state *j)
{
	job_fresh_checkpoints(b, j);
	backend_journal_job(b, j);
	backend_event(b, j->name, "placed", -1, NULL, "%d ranks on %s",
	    j->world, placement_text(b, j));
	j->grace_until = clock_mono() + 2;
	if (j->started == 0)
		j->started = clock_mono();
	for (int r = 0; r < j->world; r++)
		backend_launch_rank(b, j, r);
}

/* Every rank of the old generation has exited: form the next one. */
static void
backend_relaunch(struct backend *b, struct job_state *j)
{
	for (int r = 0; r < j->world; r++) {
		if (b->used[j->ranks[r].node] > 0)
			b->used[j->ranks[r].node]--;
		j->ranks[r].node = j->restart.node_of[r];
		b->used[j->ranks[r].node]++;
	}
	free(j->restart.node_of);
	j->restart.node_of = NULL;
	j->restart.pending = false;
	j->generation++;
	j->restarts++;
	j->paused = false;
	j->fail_since = 0;
	backend_journal_job(b, j);
	backend_event(b, j->name, j->restart.kind, -1, NULL, "%s; generation "
	    "%d on %s, %s", j->restart.reason, j->generation,
	    placement_text(b, j), j->prog != NULL ?
	    backend_program_resume_text(j) : "resuming from the newest "
	    "checkpoint");
	j->grace_until = clock_mono() + 3;
	for (int r = 0; r < j->world; r++)
		backend_launch_rank(b, j, r);
}

void
backend_launch_generation(struct backend *b, struct job_state *j)
{
	j->generation++;
	backend_journal_job(b, j);
	j->grace_until = clock_mono() + 3;
	for (int r = 0; r < j->world; r++)
		backend_launch_rank(b, j, r);
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
	if (!j->restart.pending) {
		for (int r = 0; r < j->world; r++) {
			/* A program job that is out of re-formations says so
			 * (backend_failover gives up, with the reason). */
			if (j->ranks[r].status == RANK_FAILED &&
			    (j->restarts < j->spec.policy.max_restarts ||
			    (j->prog != NULL && !j->prog->giving_up))) {
				backend_choose_failover(b, j);
				break;
			}
		}
	}
	if (j->restart.pending) {
		backend_relaunch(b, j);
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
	rec = json_pack("{s:s, s:s, s:s}", "t", MSG_JOB_END, "job", j->name,
	    "state", j->state);
	journal_append(b->journal, rec);
	json_decref(rec);
	backend_schedule(b);		/* the freed slots may fit a queued job */
}
