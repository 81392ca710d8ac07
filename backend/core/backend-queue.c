/*
 * backend-queue.c: a job's way in: submit (read and check the job file,
 * the versions across the nodes, whether it could ever fit), the queue,
 * and placement on the nodes that are reachable now, in queue order with
 * backfill.  A job that fits the cluster but not its reachable nodes
 * waits, and says which nodes and why; it is placed once they say hello.
 * Launching is backend-jobs.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/clock.h"
#include "lib/utf8.h"
#include "lib/xmalloc.h"
#include "backend/proto/proto.h"
#include "backend/worker/data.h"
#include "backend/sched/queue.h"
#include "backend/core/backend-internal.h"
#include "backend/core/backend-program.h"

/* Milliseconds since the epoch: unique enough for launches that the same
 * state directory's lock already serialises. */
static long long
backend_run_id(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
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
		backend_loop_once(b, 50);
	}
	own = proto_hello("backend", NULL);
	rc = fleet_check_versions(&b->fleet, own, err, errlen);
	json_decref(own);
	return rc;
}

/* A Slurm job that was requeued (preempted, say) starts with
 * SLURM_RESTART_COUNT > 0: its jobs resume from their checkpoints. */
static void
backend_requeued(struct backend *b, struct job_state *j)
{
	const char	*count = getenv("SLURM_RESTART_COUNT");

	if (j->opts.resume || count == NULL || atoi(count) <= 0)
		return;
	j->opts.resume = true;
	backend_event(b, j->name, EV_RESTARTED, -1, NULL, "Slurm job %s was "
	    "requeued (restart %d): %s resumes from its newest checkpoint",
	    getenv("SLURM_JOB_ID") ? getenv("SLURM_JOB_ID") : "?", atoi(count),
	    j->name);
}

/* The job file's path and its checkpoint directory travel in frames and
 * the journal, which hold UTF-8 only. */
static bool
job_paths_utf8(const struct backend *b, const char *spec_file,
    const struct job_spec *spec, char *err, size_t errlen)
{
	char	 ck[PATH_MAX + 64], fixed[PATH_MAX + 64];

	if (spec->checkpoint.dir[0] != '\0')
		snprintf(ck, sizeof ck, "%s", spec->checkpoint.dir);
	else
		snprintf(ck, sizeof ck, "%s/checkpoints/%s", b->dir, spec->name);
	snprintf(fixed, sizeof fixed, "%s", spec_file);
	if (strcmp(utf8_fix(fixed, sizeof fixed), spec_file) != 0) {
		snprintf(err, errlen, "%s: the job file's path is not UTF-8; "
		    "rename it", fixed);
		return false;
	}
	snprintf(fixed, sizeof fixed, "%s", ck);
	if (strcmp(utf8_fix(fixed, sizeof fixed), ck) != 0) {
		snprintf(err, errlen, "%s: the checkpoint directory's path is "
		    "not UTF-8", fixed);
		return false;
	}
	return true;
}

/* The cluster as the queue places on now (view->nodes is the caller's to
 * free): no slots on a node whose agent has not said hello, so a job is
 * never placed on a dead node.  The simulator has no links to judge by. */
static void
queue_view(struct backend *b, struct cluster_spec *view)
{
	const struct cluster_spec *c = backend_placing(b);

	*view = *c;
	view->nodes = xcalloc((size_t)c->n_nodes + 1, sizeof *view->nodes);
	memcpy(view->nodes, c->nodes, (size_t)c->n_nodes * sizeof *view->nodes);
	for (int i = 0; b->fleet.nodes != NULL && i < c->n_nodes; i++) {
		if (!b->fleet.nodes[i].up)
			view->nodes[i].cpu_slots = view->nodes[i].cuda_slots = 0;
	}
}

/* Why j waits: the slots it needs, and the nodes that would give them
 * if they were reachable, with the reason each is not (the first few). */
static void
queue_wait_reason(struct backend *b, struct job_state *j)
{
	const struct cluster_spec *c = backend_placing(b);
	size_t	 off, len = sizeof j->reason;
	int	 down = 0, listed = 0, nodes = 0;

	off = (size_t)snprintf(j->reason, len, "waiting for %d free %s slots "
	    "(%s priority)", j->world, spec_device_name(j->spec.resources.device),
	    spec_priority_name(j->spec.priority));
	for (int i = 0; b->fleet.nodes != NULL && i < c->n_nodes; i++) {
		const struct node_spec *n = &c->nodes[i];
		const struct fleet_node *fn = &b->fleet.nodes[i];
		int slots = j->spec.resources.device == DEVICE_CUDA ?
		    n->cuda_slots : n->cpu_slots;

		if (n->spare || slots == 0)
			continue;
		nodes++;
		if (fn->up)
			continue;
		if (down++ == 0 && off < len)
			off += (size_t)snprintf(j->reason + off, len - off, "; "
			    "unreachable:");
		if (listed < 2 && off < len) {
			listed++;
			off += (size_t)snprintf(j->reason + off, len - off,
			    "%s node %s (%.200s)", listed > 1 ? "," : "",
			    n->name, fn->why[0] != '\0' ? fn->why : fn->fd >= 0 ?
			    "its agent has not said hello" : "not connected yet");
		}
	}
	if (down > listed && off < len)
		snprintf(j->reason + off, len - off, " and %d more of the %d "
		    "nodes with slots", down - listed, nodes);
	utf8_fix(j->reason, sizeof j->reason);
}

/*
 * On a cluster of this machine's nodes, what hunter validate checks is
 * checked before anything is placed: a job whose data its workers would
 * refuse, or whose program is not here, fails now with the cause, not
 * after every node has tried it.  0, or -1 with err.
 */
static int
submit_check_here(const struct backend *b, const char *spec_file,
    const struct job_spec *spec, char *err, size_t errlen)
{
	char	 why[PATH_MAX + 512];

	for (int i = 0; i < b->cluster->n_nodes; i++) {
		if (strcmp(b->cluster->nodes[i].host, "local") != 0)
			return 0;	/* the data is the nodes' to see */
	}
	if (spec->kind == JOB_PROGRAM) {
		struct spec_errors errs = { 0 };
		struct job_spec	 here;

		/* hunter validate's check: argv[0] and its script here. */
		if (spec_check_job_here(spec_file, &here, &errs) == 0)
			return 0;
		snprintf(err, errlen, "%s:%d:%d: %s", errs.v[0].file,
		    errs.v[0].line, errs.v[0].col, errs.v[0].msg);
		spec_errors_free(&errs);
		return -1;
	}
	if (job_data_check(spec, why, sizeof why) == 0)
		return 0;
	snprintf(err, errlen, "%s: data: %s", spec_file, why);
	return -1;
}

/* A rank of a job called name that an agent said it still runs: its
 * node's name, run and pid, or NULL. */
static const char *
live_rank(struct backend *b, const char *name, long long *run, long *pid)
{
	for (int n = 0; n < b->fleet.n; n++) {
		const json_t	*w;
		size_t		 i;

		json_array_foreach(json_object_get(b->fleet.nodes[n].hello,
		    "workers"), i, w) {
			if (strcmp(json_string_value(json_object_get(w, "job")) ?:
			    "", name) != 0 ||
			    !json_is_true(json_object_get(w, "running")))
				continue;
			*run = json_integer_value(json_object_get(w, "run"));
			*pid = (long)json_integer_value(json_object_get(w, "pid"));
			return b->fleet.nodes[n].spec->name;
		}
	}
	return NULL;
}

/*
 * The same job must not run twice.  Its ranks may still train after
 * their backend died (kill -9, a lost session): a submit of the job then
 * follows that run, as --attach would, and starts nothing; a run the
 * journal does not know is refused, and its checkpoints are left alone.
 * 1 when it attached, 0 when no copy runs, -1 refused (err).
 */
static int
submit_live_copy(struct backend *b, const char *name, char *err,
    size_t errlen)
{
	long long	 run;
	long		 pid;
	const char	*node = live_rank(b, name, &run, &pid);
	struct job_state *j;
	char		 why[512];

	if (node == NULL)
		return 0;
	if (backend_attach(b, name, why, sizeof why) == 0 &&
	    (j = backend_job(b, name)) != NULL && !job_done(j) &&
	    j->run == run) {
		backend_event(b, name, EV_RESTARTED, -1, node, "%s still runs "
		    "(run %lld; rank on %s as pid %ld): following it, as "
		    "hunter run --attach would, instead of starting another copy",
		    name, run, node, pid);
		return 1;
	}
	snprintf(err, errlen, "job %s still runs on node %s (run %lld, pid "
	    "%ld), and this state directory's journal does not have that run; "
	    "stop it before starting it again (its checkpoints are left as "
	    "they are)", name, node, run, pid);
	return -1;
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
	if (!job_paths_utf8(b, spec_file, &spec, err, errlen) ||
	    submit_check_here(b, spec_file, &spec, err, errlen) != 0) {
		free(yaml);
		return -1;
	}
	if ((old = backend_job(b, spec.name)) != NULL && !job_done(old)) {
		snprintf(err, errlen, "job %s is already running; `hunter run "
		    "--attach` follows it", spec.name);
		free(yaml);
		return -1;
	}
	if (backend_versions_agree(b, err, errlen) != 0) {
		backend_event(b, spec.name, EV_REFUSED, -1, NULL, "%s", err);
		free(yaml);
		return -1;
	}
	switch (submit_live_copy(b, spec.name, err, errlen)) {
	case 1:
		free(yaml);
		return 0;
	case -1:
		backend_event(b, spec.name, EV_REFUSED, -1, NULL, "%s", err);
		free(yaml);
		return -1;
	}
	if (queue_admissible(backend_placing(b), &spec, err, errlen) != 0) {
		backend_event(b, spec.name, EV_REFUSED, -1, NULL, "%s", err);
		free(yaml);
		return -1;
	}
	j = backend_new_job(b, spec.name, JOB_QUEUED);
	j->opts = *so;
	backend_requeued(b, j);
	j->spec = spec;
	j->yaml = yaml;
	snprintf(j->spec_file, sizeof j->spec_file, "%s", spec_file);
	j->world = spec.resources.ranks;
	j->run = backend_run_id();
	j->ranks = xcalloc((size_t)j->world, sizeof *j->ranks);
	j->submitted = clock_mono();
	if (spec.kind == JOB_PROGRAM)
		backend_program_new(b, j);
	backend_schedule(b);
	if ((j = backend_job(b, spec.name)) != NULL && j->phase == JOB_QUEUED)
		backend_event(b, j->name, EV_QUEUED, -1, NULL, "%s", j->reason);
	return 0;
}

/* Place and launch what fits of the queued jobs: by priority, then by
 * submission, smaller ones backfilling past a head that does not fit. */
void
backend_schedule(struct backend *b)
{
	struct queue_entry *e;
	int		*idx, n = 0;
	struct cluster_spec view;

	if (b->preempting)		/* the nodes are going */
		return;
	e = xcalloc((size_t)b->njobs + 1, sizeof *e);
	idx = xcalloc((size_t)b->njobs + 1, sizeof *idx);

	for (int i = 0; i < b->njobs; i++) {
		struct job_state *j = &b->jobs[i];

		if (j->phase != JOB_QUEUED)
			continue;
		e[n] = (struct queue_entry){ .spec = &j->spec,
		    .submitted = j->submitted,
		    .node_of = xcalloc((size_t)j->world, sizeof(int)) };
		idx[n++] = i;
	}
	queue_view(b, &view);
	queue_schedule(&view, b->used, e, n);
	free(view.nodes);
	for (int k = 0; k < n; k++) {
		struct job_state *j = &b->jobs[idx[k]];

		if (!e[k].placed)
			queue_wait_reason(b, j);
		else {
			j->reason[0] = '\0';
			for (int r = 0; r < j->world; r++)
				j->ranks[r].node = e[k].node_of[r];
			backend_launch_job(b, j, e[k].note);
		}
		free(e[k].node_of);
	}
	free(e);
	free(idx);
}

