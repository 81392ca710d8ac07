/*
 * backend-jobs.c: a job's life once placed: journal and launch each
 * rank, the re-formation's relaunch as the next generation, and the end
 * of a job, which frees its slots for the queue.  Submit and the queue
 * are backend-queue.c; re-attaching from the journal is
 * backend-attach.c; the commands front ends post are backend-command.c.
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
#include "lib/utf8.h"
#include "lib/xmalloc.h"
#include "backend/proto/proto.h"
#include "backend/core/backend-internal.h"
#include "backend/core/backend-program.h"

/* "local0, local0, local2, local2" for events (a static buffer). */
const char *
placement_text(struct backend *b, const struct job_state *j)
{
	static char	 buf[1024];
	size_t		 off = 0;

	buf[0] = '\0';
	for (int r = 0; r < j->world && off < sizeof buf - 80; r++) {
		const struct node_spec *ns = &b->cluster->nodes[j->ranks[r].node];

		/* A Slurm node's address is Slurm's, not its name: say it. */
		off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s%s%.40s%s",
		    r ? ", " : "", ns->name, ns->slurm_job[0] && ns->addr[0] ?
		    " (" : "", ns->slurm_job[0] ? ns->addr : "",
		    ns->slurm_job[0] && ns->addr[0] ? ")" : "");
	}
	return buf;
}

void
backend_store_scope(const struct job_state *j, char *buf, size_t len)
{
	snprintf(buf, len, "%lld.g%d", j->run, j->generation);
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

/* Rank r failed at its launch: the detector's failover, 2 s on, moves
 * it to a spare or fails the job, which used to wait for it for ever. */
static void
backend_launch_failed(struct backend *b, struct job_state *j, int r,
    const char *why)
{
	struct rank_state *rs = &j->ranks[r];

	snprintf(rs->exit_reason, sizeof rs->exit_reason, "%s", why);
	utf8_fix(rs->exit_reason, sizeof rs->exit_reason);
	rs->status = RANK_FAILED;
	if (j->fail_since == 0)
		j->fail_since = clock_mono();
	backend_event(b, j->name, "failed", r, b->cluster->nodes[rs->node].name,
	    "rank %d: %s", r, rs->exit_reason);
}

static void
backend_launch_rank(struct backend *b, struct job_state *j, int r)
{
	struct fleet_node *fn = &b->fleet.nodes[j->ranks[r].node];
	const struct submit_opts *so = &j->opts;
	char		 ckdir[PATH_MAX + 64], err[128];
	json_t		*m;
	int		 local = 0, slots = 0;

	/* Ranks launch in order: the earlier ones' nodes are set, and this
	 * rank's index among those on its node picks its CUDA device. */
	for (int i = 0; i < r; i++)
		local += j->ranks[i].node == (int)(fn - b->fleet.nodes);
	job_ckdir(b, j, ckdir, sizeof ckdir);
	/* backend_submit checked that the paths are UTF-8. */
	m = proto_pack(err, sizeof err, "{s:s, s:s, s:s, s:i, s:i, s:i, s:s, "
	    "s:s, s:s, s:s, s:b, s:i, s:i, s:i, s:i, s:s}", "t", MSG_CMD,
	    "cmd", "launch", "job", j->name, "rank", r, "world", j->world,
	    "generation", j->generation, "node", fn->spec->name,
	    "addr", fn->addr, "spec_file", j->spec_file, "spec_yaml", j->yaml,
	    "resume", so->resume || j->generation > 0,
	    "stop_after_epochs", so->stop_after_epochs,
	    "trace_steps", so->trace_steps, "slow_data_ms", so->slow_data_ms,
	    "timeout_ms", (int)(j->spec.policy.heartbeat_timeout_s * 1000),
	    "checkpoint_dir", ckdir);
	/* A new process: its figures start afresh, and so do the series
	 * the detectors judge it by (the charts keep theirs).  A new
	 * process's memory grows as it warms up; read against the old
	 * one's samples that looks like a leak, and restarts it again. */
	memset(&j->ranks[r], 0, offsetof(struct rank_state, h_loss));
	memset(&j->ranks[r].h_compute_ms, 0, sizeof j->ranks[r].h_compute_ms);
	memset(&j->ranks[r].h_comm_ms, 0, sizeof j->ranks[r].h_comm_ms);
	memset(&j->ranks[r].h_rss, 0, sizeof j->ranks[r].h_rss);
	memset(&j->ranks[r].h_step, 0, sizeof j->ranks[r].h_step);
	j->ranks[r].node = (int)(fn - b->fleet.nodes);
	j->ranks[r].last_seen = clock_mono();
	if (m == NULL) {
		backend_launch_failed(b, j, r, err);
		return;
	}
	json_object_set_new(m, "run", json_integer(j->run));
	json_object_set_new(m, "local_rank", json_integer(local));
	/* The slots of the machine, every node on its host: the agent
	 * gives each rank its share of the cores (rank-env.c). */
	for (int i = 0; i < b->cluster->n_nodes; i++) {
		const struct node_spec *ns = &b->cluster->nodes[i];

		if (strcmp(ns->host, fn->spec->host) == 0)
			slots += ns->cpu_slots + ns->cuda_slots;
	}
	json_object_set_new(m, "host_slots", json_integer(slots));
	json_object_set_new(m, "slow_ms", json_integer(inject_for(j, r,
	    so->slow_rank, so->slow_ms)));
	json_object_set_new(m, "log_flood", json_integer(inject_for(j, r,
	    so->log_flood_rank, so->log_flood)));
	json_object_set_new(m, "leak_bytes", json_integer(j->generation == 0 &&
	    (so->leak_rank < 0 || so->leak_rank == r) ? so->leak_bytes : 0));
	json_object_set_new(m, "crash_at", json_integer(j->generation == 0 &&
	    (so->crash_rank < 0 || so->crash_rank == r) ? so->crash_at : 0));
	if (j->prog != NULL)
		backend_program_launch(b, j, r, m);
	if (fleet_send(fn, m) != 0) {
		snprintf(ckdir, sizeof ckdir, "cannot reach the agent of %s",
		    fn->spec->name);
		backend_launch_failed(b, j, r, ckdir);
	} else
		j->ranks[r].status = RANK_RUNNING;
	json_decref(m);
}

/* Journal the job's launch (or re-formation) with its placement. */
static void
backend_journal_job(struct backend *b, struct job_state *j)
{
	json_t	*placement = json_array(), *rec;
	char	 err[128];

	for (int r = 0; r < j->world; r++)
		json_array_append_new(placement,
		    json_string(b->cluster->nodes[j->ranks[r].node].name));
	rec = proto_pack(err, sizeof err, "{s:s, s:s, s:s, s:s, s:i, s:i, s:I, "
	    "s:o}", "t", MSG_JOB, "job", j->name, "spec_file", j->spec_file,
	    "yaml", j->yaml, "world", j->world, "generation", j->generation,
	    "run", (json_int_t)j->run, "placement", placement);
	if (rec == NULL || journal_append(b->journal, rec) != 0)
		backend_event(b, j->name, "refused", -1, NULL, "the journal did "
		    "not take the launch: %s", rec == NULL ? err :
		    strerror(errno));
	json_decref(rec);
}

void
backend_journal_tick(struct backend *b, double now)
{
	char	 err[512];

	if (b->journal == NULL)
		return;
	journal_tick(b->journal, now);
	if (!journal_rotate_due(b->journal))
		return;
	if (journal_rotate(b->journal, err, sizeof err) != 0) {
		backend_event(b, NULL, "refused", -1, NULL, "%s", err);
		journal_set_limit(b->journal, JOURNAL_MAX_BYTES * 2);
		return;
	}
	for (int i = 0; i < b->njobs; i++) {
		if (!b->jobs[i].done && !b->jobs[i].queued)
			backend_journal_job(b, &b->jobs[i]);
	}
}

void
backend_launch_job(struct backend *b, struct job_state *j, const char *note)
{
	job_fresh_checkpoints(b, j);
	backend_series_open(b, j, !j->opts.resume);
	backend_journal_job(b, j);
	backend_event(b, j->name, "placed", -1, NULL, "%d ranks on %s%s%s",
	    j->world, placement_text(b, j), *note != '\0' ? "; " : "", note);
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
	char	 scope[64];

	for (int r = 0; r < j->world; r++) {
		if (b->used[j->ranks[r].node] > 0)
			b->used[j->ranks[r].node]--;
		j->ranks[r].node = j->restart.node_of[r];
		b->used[j->ranks[r].node]++;
	}
	free(j->restart.node_of);
	j->restart.node_of = NULL;
	j->restart.pending = false;
	backend_store_scope(j, scope, sizeof scope);
	store_drop_scope(b->store, scope);	/* the old group's addresses */
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
	char	 scope[64];

	backend_store_scope(j, scope, sizeof scope);
	store_drop_scope(b->store, scope);
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
	int		 failed = -1;

	if (backend_job_running(j))
		return;
	/* A preempted backend relaunches nothing: the nodes are going. */
	if (b->preempting && j->restart.pending) {
		free(j->restart.node_of);
		j->restart.node_of = NULL;
		j->restart.pending = false;
	}
	if (!j->restart.pending && !b->preempting) {
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
		if (j->ranks[r].status == RANK_FAILED && failed < 0)
			failed = r;
	}
	if (failed >= 0) {
		st = "failed";
		if (j->reason[0] == '\0')
			snprintf(j->reason, sizeof j->reason, "rank %d on %s: %s",
			    failed, b->cluster->nodes[j->ranks[failed].node].name,
			    j->ranks[failed].exit_reason);
	}
	backend_end_job(b, j, st);
}

bool
backend_job_running(const struct job_state *j)
{
	for (int r = 0; r < j->world; r++) {
		if (j->ranks[r].status == RANK_RUNNING ||
		    j->ranks[r].status == RANK_PENDING)
			return true;
	}
	return false;
}

void
backend_end_job(struct backend *b, struct job_state *j, const char *state)
{
	json_t	*rec;
	char	 err[128];
	bool	 launched = !j->queued;

	snprintf(j->state, sizeof j->state, "%s", state);
	j->done = true;
	backend_store_scope(j, err, sizeof err);
	store_drop_scope(b->store, err);
	for (int r = 0; !j->queued && r < j->world; r++) {
		if (b->used[j->ranks[r].node] > 0)
			b->used[j->ranks[r].node]--;
	}
	j->queued = false;
	rec = proto_pack(err, sizeof err, "{s:s, s:s, s:s}", "t", MSG_JOB_END,
	    "job", j->name, "state", j->state);
	if (rec == NULL || journal_append(b->journal, rec) != 0)
		backend_event(b, j->name, "refused", -1, NULL, "the journal did "
		    "not take the end of the job: %s", rec == NULL ? err :
		    strerror(errno));
	json_decref(rec);
	if (b->preempting && launched)
		backend_preempt_done(b, j);
	backend_schedule(b);		/* the freed slots may fit a queued job */
}
