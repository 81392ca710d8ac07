/*
 * backend-jobs.c: launching: journal and launch each rank of a job that
 * was placed, and relaunch the group as the next generation once a
 * re-formation's old one is gone.  What moves a job from phase to phase
 * is job.c; submit and the queue are backend-queue.c; re-attaching from
 * the journal is backend-attach.c; the commands front ends post are
 * backend-command.c.
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
#include "backend/proto/launch.h"
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
backend_new_job(struct backend *b, const char *name, enum job_phase phase)
{
	struct job_state *j;

	b->jobs = xreallocarray(b->jobs, (size_t)b->njobs + 1, sizeof *b->jobs);
	j = &b->jobs[b->njobs++];
	memset(j, 0, sizeof *j);
	snprintf(j->name, sizeof j->name, "%s", name);
	j->gp.noise_scale = -1;		/* unknown until a rank says */
	job_restore_phase(j, phase);	/* where it starts: not a move */
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
		backend_event(b, j->name, EV_CHECKPOINT, -1, NULL, "a fresh run: "
		    "%d checkpoint%s of the previous run of %s %s now in %s",
		    moved, moved == 1 ? "" : "s", j->name, moved == 1 ? "is" :
		    "are", aside);
}

/* An injected fault applies to its rank in the first launch only, so a
 * relaunch after it does not meet it again. */
static long
inject_for(const struct job_state *j, int r, int rank, long value)
{
	return j->generation == 0 && (rank < 0 || rank == r) ? value : 0;
}

/* Rank r failed at its launch: the detector's failover, 2 s on, moves
 * it to a spare or fails the job, which used to wait for it for ever. */
static void
backend_launch_failed(struct backend *b, struct job_state *j, int r,
    const char *why)
{
	job_rank_failed(b, j, r, 0, why);
	if (j->fail_since == 0)
		j->fail_since = clock_mono();
	backend_event(b, j->name, EV_FAILED, r,
	    b->cluster->nodes[j->ranks[r].node].name, "rank %d: %s", r,
	    j->ranks[r].exit_reason);
}

/* A new process: its figures start afresh, and so do the series the
 * detectors judge it by (the charts keep theirs).  A new process's
 * memory grows as it warms up; read against the old one's samples that
 * looks like a leak, and restarts it again.  Every member that is the
 * process's own is named here; the metrics come from their list. */
#define RANK_METRIC_RESET(id, field, ...)	rs->field = 0;
static void
rank_proc_reset(struct rank_state *rs)
{
	RANK_METRICS(RANK_METRIC_RESET)
	rs->known = 0;
	rs->paused = rs->finished = false;
	rs->last_seen = rs->kill_sent = rs->absent_since = 0;
	rs->replayed = false;
	rs->exit_signal = 0;
	rs->exit_reason[0] = rs->said[0] = rs->last_line[0] = '\0';
	series_clear(&rs->h_compute_ms);
	series_clear(&rs->h_comm_ms);
	series_clear(&rs->h_rss);
	series_clear(&rs->h_step);
}
#undef RANK_METRIC_RESET

/* The launch order of rank r (launch.h); l->spec_yaml and l->program
 * are j's and the caller's. */
static void
launch_order_of(struct backend *b, struct job_state *j, int r,
    struct launch_order *l)
{
	const struct fleet_node *fn = &b->fleet.nodes[j->ranks[r].node];
	const struct submit_opts *so = &j->opts;

	*l = (struct launch_order){ .rank = r, .world = j->world,
	    .generation = j->generation, .run = j->run,
	    .spec_yaml = j->yaml, .resume = so->resume || j->generation > 0,
	    .timeout_ms = (int)(j->spec.policy.heartbeat_timeout_s * 1000),
	    .stop_after_epochs = so->stop_after_epochs,
	    .trace_steps = so->trace_steps, .slow_data_ms = so->slow_data_ms,
	    .slow_sample_us = so->slow_sample_us,
	    .slow_ms = (int)inject_for(j, r, so->slow_rank, so->slow_ms),
	    .log_flood = (int)inject_for(j, r, so->log_flood_rank,
	    so->log_flood),
	    .leak_bytes = inject_for(j, r, so->leak_rank, so->leak_bytes),
	    .crash_at = inject_for(j, r, so->crash_rank, so->crash_at) };
	/* Ranks launch in order: this rank's index among the job's ranks on
	 * its node picks its CUDA device. */
	for (int i = 0; i < r; i++)
		l->local_rank += j->ranks[i].node == j->ranks[r].node;
	/* The slots of the machine, every node on its host: the agent
	 * gives each rank its share of the cores (rank-env.c). */
	for (int i = 0; i < b->cluster->n_nodes; i++) {
		const struct node_spec *ns = &b->cluster->nodes[i];

		if (strcmp(ns->host, fn->spec->host) == 0)
			l->host_slots += ns->cpu_slots + ns->cuda_slots;
	}
	/* And the job's ranks there: where they fill its cores, a rank
	 * loads its batches itself (worker_data_inline). */
	for (int i = 0; i < j->world; i++)
		l->host_ranks += strcmp(b->fleet.nodes[j->ranks[i].node].spec->
		    host, fn->spec->host) == 0;
	l->have |= (uint64_t)1 << LAUNCH_F_host_ranks;
	/* An adaptive batch: what sched_batch chose for this world. */
	if (j->spec.train.batch.adaptive && j->prog == NULL) {
		l->global_batch = j->gp.batch;
		l->lr = j->gp.lr;
		l->have |= (uint64_t)1 << LAUNCH_F_global_batch |
		    (uint64_t)1 << LAUNCH_F_lr;
	}
	snprintf(l->job, sizeof l->job, "%s", j->name);
	snprintf(l->node, sizeof l->node, "%s", fn->spec->name);
	snprintf(l->addr, sizeof l->addr, "%s", fn->addr);
	snprintf(l->spec_file, sizeof l->spec_file, "%s", j->spec_file);
	job_ckdir(b, j, l->checkpoint_dir, sizeof l->checkpoint_dir);
}

static void
backend_launch_rank(struct backend *b, struct job_state *j, int r)
{
	struct fleet_node *fn = &b->fleet.nodes[j->ranks[r].node];
	struct launch_order l;
	char		 err[160];
	json_t		*m;

	launch_order_of(b, j, r, &l);
	if (j->prog != NULL) {
		l.program = backend_program_launch(b, j, r, l.checkpoint_dir);
		l.have |= (uint64_t)1 << LAUNCH_F_program;
	}
	/* backend_submit checked that the paths are UTF-8. */
	m = launch_pack(&l, err, sizeof err);
	json_decref(l.program);
	rank_proc_reset(&j->ranks[r]);
	j->ranks[r].last_seen = clock_mono();
	if (m == NULL) {
		backend_launch_failed(b, j, r, err);
		return;
	}
	if (fleet_send(fn, m) != 0) {
		snprintf(err, sizeof err, "cannot reach the agent of %s: %s",
		    fn->spec->name, strerror(errno));
		backend_launch_failed(b, j, r, err);
	} else
		rank_set_phase(b, j, r, RANK_RUNNING, "launched on %s as "
		    "generation %d", fn->spec->name, j->generation);
	json_decref(m);
}

/* Journal the job's launch (or re-formation) with its placement and the
 * submit options every generation runs with (backend_replay_record reads
 * them back); the faults injected into the first launch only are not. */
static void
backend_journal_job(struct backend *b, struct job_state *j)
{
	json_t	*placement = json_array(), *rec, *opts;
	char	 err[128];

	for (int r = 0; r < j->world; r++)
		json_array_append_new(placement,
		    json_string(b->cluster->nodes[j->ranks[r].node].name));
	opts = json_pack("{s:b, s:i, s:i, s:i, s:i}", "resume", j->opts.resume,
	    "stop_after_epochs", j->opts.stop_after_epochs, "trace_steps",
	    j->opts.trace_steps, "slow_data_ms", j->opts.slow_data_ms,
	    "slow_sample_us", j->opts.slow_sample_us);
	rec = proto_pack(err, sizeof err, "{s:s, s:s, s:s, s:s, s:i, s:i, s:I, "
	    "s:o, s:o, s:f}", "t", MSG_JOB, "job", j->name, "spec_file",
	    j->spec_file, "yaml", j->yaml, "world", j->world, "generation",
	    j->generation, "run", (json_int_t)j->run, "placement", placement,
	    "opts", opts, "first_ts", j->first_ts);
	if (rec == NULL || journal_append(b->journal, rec) != 0)
		backend_event(b, j->name, EV_REFUSED, -1, NULL, "the journal did "
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
		backend_event(b, NULL, EV_REFUSED, -1, NULL, "%s", err);
		journal_set_limit(b->journal, JOURNAL_MAX_BYTES * 2);
		return;
	}
	for (int i = 0; i < b->njobs; i++) {
		struct job_state *j = &b->jobs[i];

		if (job_done(j) || j->phase == JOB_QUEUED)
			continue;
		backend_journal_job(b, j);
		/* A re-formation under way: its decision, or a backend that
		 * re-attaches from the new file would not carry it out. */
		if (job_reforming(j) && j->restart.node_of != NULL)
			job_journal_decision(b, j);
	}
}

/* An adaptive job's events say the batch and learning rate it runs at. */
static void
event_batch(const struct job_state *j, json_t *ev)
{
	json_object_set_new(ev, "global_batch", json_integer(j->gp.batch));
	json_object_set_new(ev, "lr", json_real(j->gp.lr));
}

/* The placed event; an adaptive job's with its batch. */
static void
launch_placed(struct backend *b, struct job_state *j, const char *note)
{
	char	 why[1280];
	json_t	*ev;

	snprintf(why, sizeof why, "%d ranks on %s%s%s", j->world,
	    placement_text(b, j), *note != '\0' ? "; " : "", note);
	if (j->spec.train.batch.adaptive && j->prog == NULL)
		snprintf(why + strlen(why), sizeof why - strlen(why), "; global "
		    "batch %d, lr %g", j->gp.batch, j->gp.lr);
	if ((ev = backend_event_new(b, j->name, EV_PLACED, -1, NULL,
	    why)) == NULL)
		return;
	if (j->spec.train.batch.adaptive && j->prog == NULL)
		event_batch(j, ev);
	backend_event_raise(b, ev);
	json_decref(ev);
}

void
backend_launch_job(struct backend *b, struct job_state *j, const char *note)
{
	job_fresh_checkpoints(b, j);
	if (j->first_ts == 0)
		j->first_ts = clock_wall();
	backend_series_open(b, j, !j->opts.resume);
	sched_batch(j);
	backend_journal_job(b, j);
	job_set_phase(b, j, JOB_PLACING, "%d ranks on %s", j->world,
	    placement_text(b, j));
	launch_placed(b, j, note);
	j->grace_until = clock_mono() + 2;
	if (j->started == 0)
		j->started = clock_mono();
	for (int r = 0; r < j->world; r++)
		backend_launch_rank(b, j, r);
}

void
backend_set_world(struct job_state *j, int world)
{
	if (world == j->world)
		return;
	j->ranks = xreallocarray(j->ranks, (size_t)world, sizeof *j->ranks);
	for (int r = j->world; r < world; r++)
		memset(&j->ranks[r], 0, sizeof j->ranks[r]);
	j->world = world;
}

/* The resized event: from, to, the global batch and learning rate the
 * new size runs with, and why. */
static void
relaunch_resized(struct backend *b, struct job_state *j, int from)
{
	char	 why[768];
	json_t	*ev;

	snprintf(why, sizeof why, "%s; %d -> %d ranks, generation %d on %s, "
	    "global batch %d, lr %g, resuming from the newest checkpoint",
	    j->restart.reason, from, j->world, j->generation,
	    placement_text(b, j), j->gp.batch, j->gp.lr);
	if ((ev = backend_event_new(b, j->name, EV_RESIZED, -1, NULL,
	    why)) == NULL)
		return;
	json_object_set_new(ev, "from", json_integer(from));
	json_object_set_new(ev, "to", json_integer(j->world));
	event_batch(j, ev);
	backend_event_raise(b, ev);
	json_decref(ev);
}

void
backend_relaunch(struct backend *b, struct job_state *j)
{
	char	 scope[64];
	int	 from = j->world;

	for (int r = 0; r < j->world; r++) {
		if (b->used[j->ranks[r].node] > 0)
			b->used[j->ranks[r].node]--;
	}
	backend_set_world(j, j->restart.world);
	for (int r = 0; r < j->world; r++) {
		j->ranks[r].node = j->restart.node_of[r];
		b->used[j->ranks[r].node]++;
	}
	free(j->restart.node_of);
	j->restart.node_of = NULL;
	backend_store_scope(j, scope, sizeof scope);
	store_drop_scope(b->store, scope);	/* the old group's addresses */
	j->generation++;
	j->restarts++;
	memset(j->seq, 0, sizeof j->seq);	/* its ranks count afresh */
	j->fail_since = 0;
	sched_batch(j);
	backend_journal_job(b, j);
	backend_crash_point("relaunch");	/* journalled, nothing sent */
	job_set_phase(b, j, JOB_PLACING, "generation %d on %s", j->generation,
	    placement_text(b, j));
	if (j->restart.kind == EV_RESIZED)
		relaunch_resized(b, j, from);
	else
		backend_event(b, j->name, j->restart.kind, -1, NULL, "%s; "
		    "generation %d on %s, %s", j->restart.reason, j->generation,
		    placement_text(b, j), j->prog != NULL ?
		    backend_program_resume_text(j) : "resuming from the newest "
		    "checkpoint");
	j->grace_until = clock_mono() + 3;
	for (int r = 0; r < j->world; r++)
		backend_launch_rank(b, j, r);
	backend_schedule(b);	/* a shrink freed slots a queued job may take */
}

void
backend_launch_generation(struct backend *b, struct job_state *j)
{
	char	 scope[64];

	backend_store_scope(j, scope, sizeof scope);
	store_drop_scope(b->store, scope);
	j->generation++;
	memset(j->seq, 0, sizeof j->seq);	/* its ranks count afresh */
	backend_journal_job(b, j);
	j->grace_until = clock_mono() + 3;
	for (int r = 0; r < j->world; r++)
		backend_launch_rank(b, j, r);
}
