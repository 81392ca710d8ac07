/*
 * backend-program.c: the backend's side of program jobs (hunter(1),
 * PROGRAMS).  A program job is placed, journalled, failed over, migrated
 * and watched as any job; what differs is here: each rank's launch says
 * what to run and with which environment (torch.distributed's env://
 * names, a MASTER_PORT new for every generation, HUNTER_*), the newest
 * checkpoint the program declared complete is what the next generation
 * resumes from, and with program.batch.micro: auto the group first runs
 * short trials to find the micro-batch (backend-program-tune.c).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/xmalloc.h"
#include "backend/proto/proto.h"
#include "backend/core/backend-internal.h"
#include "backend/core/backend-program.h"

/* Where the journal says the job left off, for --resume: its newest
 * declared checkpoint and its tuned micro-batch. */
struct program_lookup {
	const char		*name;
	struct program_state	*ps;
};

static void
program_lookup_record(void *ctx, json_t *rec)
{
	struct program_lookup *l = ctx;
	const char	*path = json_string_value(json_object_get(rec, "path"));

	if (strcmp(json_string_value(json_object_get(rec, "job")) ?: "",
	    l->name) != 0)
		return;
	switch (proto_kind(rec, NULL, 0)) {
	case PK_EVENT:
		if (strcmp(json_string_value(json_object_get(rec, "kind")),
		    "checkpoint") != 0 || path == NULL)
			break;
		snprintf(l->ps->ckpt, sizeof l->ps->ckpt, "%s", path);
		l->ps->ckpt_step = (long)json_integer_value(json_object_get(rec,
		    "step"));
		break;
	case PK_AUTOTUNE:
		if (json_is_true(json_object_get(rec, "program")))
			l->ps->micro = (int)json_integer_value(json_object_get(rec,
			    "micro_batch"));
		break;
	default:
		break;
	}
}

void
backend_program_new(struct backend *b, struct job_state *j)
{
	struct program_state *ps = xcalloc(1, sizeof *ps);
	struct program_lookup l = { j->name, ps };
	char		 path[PATH_MAX + 32], why[256];
	int		 bad;

	j->prog = ps;
	ps->port_gen = -1;
	if (j->spec.program.batch.micro > 0)
		ps->micro = j->spec.program.batch.micro;
	if (j->opts.resume) {
		snprintf(path, sizeof path, "%s/journal.jsonl", b->dir);
		journal_replay(path, program_lookup_record, &l, &bad, why,
		    sizeof why);
		if (ps->ckpt[0] != '\0')
			backend_event(b, j->name, EV_CHECKPOINT, -1, NULL, "resuming "
			    "from %s (step %ld), the newest checkpoint %s "
			    "declared", ps->ckpt, ps->ckpt_step, j->name);
	}
	if (j->spec.program.batch.micro == 0 && ps->micro == 0)
		program_tune_begin(b, j);
	else if (j->spec.program.batch.micro == 0)
		backend_event(b, j->name, EV_AUTOTUNE, -1, NULL, "micro-batch %d, "
		    "as tuned before (journal); no trials", ps->micro);
}

/* A record of the journal, replayed on re-attach. */
void
backend_program_replay(struct backend *b, const json_t *rec)
{
	const char	*name = json_string_value(json_object_get(rec, "job"));
	struct job_state *j = name != NULL ? backend_job(b, name) : NULL;
	struct program_lookup l;

	if (j == NULL || j->spec.kind != JOB_PROGRAM)
		return;
	if (j->prog == NULL) {
		j->prog = xcalloc(1, sizeof *j->prog);
		j->prog->port_gen = -1;
		j->prog->micro = j->spec.program.batch.micro > 0 ?
		    j->spec.program.batch.micro : 0;
		/* A generation's record: the run's checkpoints and size so
		 * far are the earlier generation's. */
		for (int i = 0; i < backend_njobs(b); i++) {
			struct job_state *o = backend_job_at(b, i);

			if (o != j && o->prog != NULL && o->run == j->run &&
			    strcmp(o->name, j->name) == 0)
				*j->prog = *o->prog;
		}
		j->prog->tune.active = false;
	}
	l = (struct program_lookup){ name, j->prog };
	program_lookup_record(&l, (json_t *)rec);
}

/* A port nobody listens on now at addr (the kernel's choice), for rank
 * 0's rendezvous; on a node that is not this machine, one drawn from the
 * run and the generation. */
static int
program_port(const struct fleet_node *fn, const struct job_state *j)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t	 len = sizeof sa;
	int		 fd, port = 0;

	if (strcmp(fn->spec->host, "local") == 0 &&
	    inet_pton(AF_INET, fn->addr, &sa.sin_addr) == 1 &&
	    (fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0) {
		if (bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
		    getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
			port = ntohs(sa.sin_port);
		close(fd);
	}
	if (port == 0)		/* 20000..59999, not the ephemeral range */
		port = 20000 + (int)((j->run / 7 + j->generation * 7919) % 40000);
	return port;
}

static void
program_env(json_t *env, const char *k, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
program_env(json_t *env, const char *k, const char *fmt, ...)
{
	va_list	 ap;
	char	 v[PATH_MAX + 64];

	va_start(ap, fmt);
	vsnprintf(v, sizeof v, fmt, ap);
	va_end(ap);
	json_object_set_new(env, k, json_string(v));
}

json_t *
backend_program_launch(struct backend *b, struct job_state *j, int r,
    const char *ckdir)
{
	const struct job_spec *s = &j->spec;
	struct program_state *ps = j->prog;
	struct fleet_node *f0 = &b->fleet.nodes[j->ranks[0].node];
	json_t		*pg = json_object(), *argv = json_array();
	json_t		*env = json_object();
	int		 local = 0, nlocal = 0, group = 0;
	bool		 trial = program_tune_active(j);
	const char	*kv;

	for (int i = 0; i < s->program.argc; i++)
		json_array_append_new(argv, json_string(spec_program_str(
		    s->program.argv, s->program.argc, i)));
	for (int i = 0; (kv = spec_program_str(s->program.env,
	    s->program.nenv, i)) != NULL; i++) {
		const char *eq = strchr(kv, '=');
		char	    key[256];

		snprintf(key, sizeof key, "%.*s", (int)(eq - kv), kv);
		json_object_set_new(env, key, json_string(eq + 1));
	}
	for (int i = 0; i < j->world; i++) {
		if (j->ranks[i].node != j->ranks[r].node)
			continue;
		local += i < r;
		nlocal++;
	}
	/* GROUP_RANK: the node's place among the job's nodes, in the order
	 * of their first ranks. */
	for (int i = 0; i < j->world; i++) {
		bool	 first = true;

		for (int k = 0; k < i; k++)
			first &= j->ranks[k].node != j->ranks[i].node;
		if (!first)
			continue;
		if (j->ranks[i].node == j->ranks[r].node)
			break;
		group++;
	}
	if (ps->port_gen != j->generation) {
		ps->port = program_port(f0, j);
		ps->port_gen = j->generation;
	}
	program_env(env, "RANK", "%d", r);
	program_env(env, "WORLD_SIZE", "%d", j->world);
	program_env(env, "LOCAL_RANK", "%d", local);
	program_env(env, "LOCAL_WORLD_SIZE", "%d", nlocal);
	program_env(env, "GROUP_RANK", "%d", group);
	program_env(env, "MASTER_ADDR", "%s", f0->addr);
	program_env(env, "MASTER_PORT", "%d", ps->port);
	program_env(env, "HUNTER_JOB", "%s", j->name);
	program_env(env, "HUNTER_RUN", "%lld", j->run);
	program_env(env, "HUNTER_GENERATION", "%d", j->generation);
	program_env(env, "HUNTER_CHECKPOINT_DIR", "%s", ckdir);
	program_env(env, "HUNTER_CHECKPOINT_EVERY", "%d",
	    s->checkpoint.every_steps);
	program_env(env, "HUNTER_CHECKPOINT_KEEP", "%d", s->checkpoint.keep);
	program_env(env, "HUNTER_HEARTBEAT_TIMEOUT", "%g",
	    s->policy.heartbeat_timeout_s);
	if (ps->ckpt[0] != '\0' && !trial)
		program_env(env, "HUNTER_RESUME_FROM", "%s", ps->ckpt);
	if (trial) {
		program_env(env, "HUNTER_MICRO_BATCH", "%d", program_tune_size(j));
		program_env(env, "HUNTER_TRIAL_STEPS", "%d",
		    s->program.batch.trial_steps);
	} else if (ps->micro > 0)
		program_env(env, "HUNTER_MICRO_BATCH", "%d", ps->micro);
	json_object_set_new(pg, "argv", argv);
	json_object_set_new(pg, "env", env);
	json_object_set_new(pg, "dir", json_string(s->program.dir));
	json_object_set_new(pg, "stop_grace_s", json_real(s->program.stop_grace_s));
	json_object_set_new(pg, "startup_s", json_real(s->program.startup_s));
	json_object_set_new(pg, "oom_exit_code",
	    json_integer(s->program.oom_exit_code));
	json_object_set_new(pg, "trial", json_boolean(trial));
	json_object_set_new(pg, "rss_limit", json_integer(trial ?
	    (json_int_t)s->resources.memory_per_rank : 0));
	return pg;
}

/* A rank's event: a checkpoint it declared complete is the one the next
 * generation resumes from. */
void
backend_program_event(struct backend *b, struct job_state *j, int r,
    const json_t *ev)
{
	const char	*path = json_string_value(json_object_get(ev, "path"));

	(void)b;
	(void)r;
	if (strcmp(json_string_value(json_object_get(ev, "kind")),
	    "checkpoint") != 0 || path == NULL || program_tune_active(j))
		return;
	snprintf(j->prog->ckpt, sizeof j->prog->ckpt, "%s", path);
	j->prog->ckpt_step = (long)json_integer_value(json_object_get(ev,
	    "step"));
}

/* What the next generation resumes from, for the relaunch's event. */
const char *
backend_program_resume_text(const struct job_state *j)
{
	static char	 buf[PATH_MAX + 128];

	if (j->prog->ckpt[0] == '\0')
		return "starting afresh: the program declared no checkpoint";
	snprintf(buf, sizeof buf, "resuming from %s (step %ld), the newest "
	    "checkpoint the program declared", j->prog->ckpt,
	    j->prog->ckpt_step);
	return buf;
}

/* The job will not go on: its other ranks are asked to stop, so that
 * a program that is not bound to its peers by a collective ends too. */
void
backend_program_give_up(struct backend *b, struct job_state *j)
{
	if (j->prog->giving_up)
		return;
	j->prog->giving_up = true;
	backend_send_cmd(b, j, JOB_CMD_STOP);
}

/* Once a rank has ended well, its peers have the heartbeat timeout and
 * the stop grace to end too; a peer still running then (held in a
 * collective the finished rank left) is asked to stop, and the job ends
 * as its rank 0 said, not as a failure. */
void
backend_program_tick(struct backend *b, struct job_state *j, double now)
{
	struct program_state *ps = j->prog;
	int	 ended = -1, running = -1;

	if (ps == NULL || ps->ending || ps->giving_up || ps->tune.active ||
	    j->phase != JOB_RUNNING)
		return;
	for (int r = 0; r < j->world; r++) {
		if (j->ranks[r].phase == RANK_EXITED && ended < 0)
			ended = r;
		else if (j->ranks[r].phase == RANK_RUNNING && running < 0)
			running = r;
	}
	if (ended < 0 || running < 0) {
		ps->ended_t = 0;
		return;
	}
	if (ps->ended_t == 0)
		ps->ended_t = now;
	if (now - ps->ended_t < j->spec.policy.heartbeat_timeout_s +
	    j->spec.program.stop_grace_s)
		return;
	ps->ending = true;
	backend_event(b, j->name, EV_STOPPED, running, NULL, "rank %d ended "
	    "well %.0f s ago and rank %d still runs: asking the rest to stop",
	    ended, now - ps->ended_t, running);
	backend_send_cmd(b, j, JOB_CMD_STOP);
}
