/*
 * backend-command.c: the commands front ends post (or send on
 * console.sock): submit, stop, pause, resume, checkpoint, migrate and
 * detach, and the sequenced commands that carry them to the agents.
 * Their outcome shows as events.
 */
#include <stdbool.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/xmalloc.h"
#include "backend/proto/proto.h"
#include "backend/core/backend-internal.h"
#include "backend/core/backend-program.h"

_Static_assert(JOB_CMD_COUNT == PROTO_SEQ_CMDS, "enum job_cmd is the "
    "protocol's sequenced commands");

/* Send a sequenced command to every node that hosts one of j's ranks. */
void
backend_send_cmd(struct backend *b, struct job_state *j, enum job_cmd c)
{
	char	 err[128];
	json_t	*m = proto_pack(err, sizeof err, "{s:s, s:s, s:s, s:I}", "t",
	    MSG_CMD, "cmd", proto_seq_cmd_names[c], "job", j->name, "seq",
	    (json_int_t)++j->seq[c]);
	bool	*sent;

	if (b->fleet.nodes == NULL) {	/* the simulated backend's: no links */
		json_decref(m);
		return;
	}
	if (m == NULL) {
		backend_event(b, j->name, EV_REFUSED, -1, NULL, "%s: %s",
		    proto_seq_cmd_names[c], err);
		return;
	}
	sent = xcalloc((size_t)b->fleet.n + 1, sizeof *sent);
	for (int r = 0; r < j->world; r++) {
		int n = j->ranks[r].node;

		if (n >= 0 && n < b->fleet.n && !sent[n]) {
			sent[n] = true;
			fleet_send(&b->fleet.nodes[n], m);
		}
	}
	free(sent);
	json_decref(m);
}

void
backend_stop_job(struct backend *b, const char *name)
{
	struct job_state *j = backend_job(b, name);

	if (j == NULL || job_done(j))
		return;
	if (j->phase == JOB_QUEUED || job_ranks_running(j) == 0 ||
	    j->phase == JOB_STOPPING)
		;			/* it ends now, or is ending */
	else if (j->prog != NULL)
		backend_event(b, j->name, EV_CHECKPOINT, -1, NULL, "stop "
		    "requested: each rank gets a stop (SIGTERM if it does not "
		    "speak the protocol), then SIGKILL after %.0f s",
		    j->spec.program.stop_grace_s);
	else
		backend_event(b, j->name, EV_CHECKPOINT, -1, NULL, "stop "
		    "requested: every rank checkpoints at the same step and "
		    "ends");
	job_stop(b, j, "the operator's stop");
}

json_t *
backend_jobs_json(struct backend *b)
{
	json_t	*arr = json_array();
	double	 now = clock_mono();

	for (int i = 0; i < b->njobs; i++) {
		const struct job_state *j = &b->jobs[i];
		const struct rank_state *r0 = j->world > 0 ? &j->ranks[0] : NULL;
		json_t	*o, *nodes = json_array();

		/* History the journal replayed is not a job of this backend. */
		if (!j->owned && job_done(j))
			continue;
		for (int r = 0; j->phase != JOB_QUEUED && r < j->world; r++)
			json_array_append_new(nodes, json_string(
			    b->cluster->nodes[j->ranks[r].node].name));
		o = json_pack("{s:s, s:s, s:i, s:i, s:i, s:o, s:i, s:f}", "job",
		    j->name, "phase", job_phase_name(j->phase), "ranks",
		    j->world, "min_ranks", j->spec.resources.min_ranks,
		    "max_ranks", j->spec.resources.max_ranks, "nodes", nodes,
		    "global_batch", j->gp.batch > 0 ? j->gp.batch :
		    j->spec.train.batch.global, "age_s",
		    j->submitted > 0 ? now - j->submitted : 0.0);
		if (r0 != NULL && (r0->known & RM_BIT(MICRO_BATCH)) &&
		    (r0->known & RM_BIT(ACCUM))) {
			json_object_set_new(o, "micro_batch",
			    json_integer(r0->micro_batch));
			json_object_set_new(o, "accum", json_integer(r0->accum));
		}
		if (r0 != NULL && (r0->known & RM_BIT(STEP)) &&
		    (r0->known & RM_BIT(EPOCH))) {
			json_object_set_new(o, "step", json_integer(r0->step));
			json_object_set_new(o, "epoch", json_integer(r0->epoch));
		}
		if (j->gp.known)
			json_object_set_new(o, "goodput", json_real(j->gp.goodput));
		json_object_set_new(o, "attained_s", json_real(j->gp.attained));
		if (j->reason[0] != '\0')
			json_object_set_new(o, "reason", json_string(j->reason));
		json_array_append_new(arr, o);
	}
	return arr;
}

/* A command from a front end (posted, or from console.sock).  Returns
 * 0 when it was accepted; the outcome shows as events. */
int
backend_command(struct backend *b, const json_t *cmd)
{
	const char	*c = json_string_value(json_object_get(cmd, "cmd"));
	const char	*name = json_string_value(json_object_get(cmd, "job"));
	struct job_state *j;
	char		 err[1024];

	/* Its fields first: a job that is a string, a rank that fits. */
	if (proto_cmd_check(cmd, err, sizeof err) != 0) {
		backend_event(b, name, EV_REFUSED, -1, NULL, "%s", err);
		return -1;
	}
	if (strcmp(c, "detach") == 0) {
		b->detach = true;
		return 0;
	}
	if (strcmp(c, "submit") == 0) {
		const char *file = json_string_value(json_object_get(cmd, "file"));
		struct submit_opts so = { .slow_rank = -1, .leak_rank = -1,
		    .crash_rank = -1 };

		if (file == NULL || backend_submit(b, file, &so, err,
		    sizeof err) != 0) {
			backend_event(b, NULL, EV_REFUSED, -1, NULL, "%s",
			    file ? err : "submit needs a file");
			return -1;
		}
		return 0;
	}
	if (name == NULL || (j = backend_job(b, name)) == NULL || job_done(j)) {
		backend_event(b, name, EV_REFUSED, -1, NULL, "no running job "
		    "named '%s'", name ? name : "");
		return -1;
	}
	for (int k = 0; k < JOB_CMD_COUNT; k++) {
		if (strcmp(c, proto_seq_cmd_names[k]) != 0)
			continue;
		if (k == JOB_CMD_STOP) {
			backend_stop_job(b, j->name);
			return 0;
		}
		/* The ranks report "paused", "resumed" and "checkpoint"
		 * themselves once they act, all at the same step. */
		backend_send_cmd(b, j, (enum job_cmd)k);
		return 0;
	}
	if (strcmp(c, "migrate") == 0)
		return backend_migrate(b, j, cmd);
	backend_event(b, j->name, EV_REFUSED, -1, NULL, "unknown command '%s'", c);
	return -1;
}
