/*
 * cmd-run.c: `hunter run JOB.yaml`: the backend without the console.  It
 * starts (or finds) the agents of the cluster, launches the job's ranks
 * and prints progress: one line per epoch and a summary, or with --json
 * the JSON lines of docs/architecture.md, "Frames".  Ctrl-C asks every rank to
 * checkpoint at the same step and stop; a second Ctrl-C detaches and
 * leaves the job running.  SIGTERM and SIGUSR1 (Slurm's preemption and
 * time limit) checkpoint and stop it the same way and exit 0
 * (backend_preempt).  --attach follows a job that is already
 * running, after the process that started it has gone.
 */
#include <math.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lib/clock.h"
#include "lib/xmalloc.h"
#include "backend/spec/spec.h"
#include "backend/proto/event.h"
#include "backend/proto/proto.h"
#include "backend/core/backend.h"
#include "tui/sanitize.h"
#include "cmd/cmd.h"

struct run_ctx {
	int	 json;
};

static volatile sig_atomic_t run_interrupts, run_preempt;

static void
run_on_signal(int sig)
{
	if (sig == SIGINT)
		run_interrupts++;
	else
		run_preempt = sig;
}

/* SIGTERM or SIGUSR1: the allocation is ending; every job checkpoints
 * and stops at one step, and hunter run exits 0 once they have. */
static void
run_preempted(struct backend *b, int sig)
{
	const char	*job = getenv("SLURM_JOB_ID");
	char		 why[128];

	snprintf(why, sizeof why, "%s%s%s%s", sig == SIGUSR1 ? "SIGUSR1" :
	    "SIGTERM", job ? " (Slurm job " : "", job ? job : "", job ? ")" :
	    "");
	fprintf(stderr, "hunter run: %s: every running job checkpoints at one "
	    "step and stops, a queued one ends; then exiting\n", why);
	backend_preempt(b, why);
}

/* One JSON line, with what a terminal would act on (C1 controls and bidi
 * overrides, which JSON allows raw) escaped: the stream is often read on
 * one. */
static void
print_json(const json_t *obj)
{
	char	*s = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER);
	size_t	 size = 6 * strlen(s) + 1;
	char	*out = xmalloc(size);

	sanitize_json(out, size, s);
	printf("%s\n", out);
	fflush(stdout);
	free(out);
	free(s);
}

static double
num(const json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

/* Whether the frame says k: a number.  What a rank never reported (a
 * program that says nothing of it) is absent, never 0. */
static bool
has(const json_t *o, const char *k)
{
	const json_t	*v = json_object_get(o, k);

	return json_is_integer(v) || (json_is_real(v) &&
	    isfinite(json_real_value(v)));
}

/* "label value  " when the frame says k, else "label –  " with dash,
 * or nothing without. */
static void
put(const json_t *o, const char *label, const char *k, const char *fmt,
    bool dash)
{
	if (!has(o, k) && !dash)
		return;
	printf("%s ", label);
	if (!has(o, k))
		printf("\u2013");
	else if (strchr(fmt, 'd') != NULL)
		printf(fmt, (int)num(o, k));
	else
		printf(fmt, num(o, k));
	printf("  ");
}

/* A string field, stripped of control and escape sequences: names and
 * reasons may quote what a file or a peer said. */
static const char *
str(const json_t *o, const char *k)
{
	static char	 buf[4][2048];
	static int	 next;
	const char	*s = json_string_value(json_object_get(o, k));
	char		*out = buf[next++ % 4];

	sanitize(out, sizeof buf[0], s != NULL ? s : "");
	return out;
}

static void
run_on_frame(void *arg, const json_t *m)
{
	struct run_ctx	*ctx = arg;
	enum proto_kind	 k = proto_kind(m, NULL, 0);
	json_t		*r;

	if (k == PK_SUMMARY)
		return;			/* printed once, at the end */
	if (k == PK_METRICS && json_object_get(m, "job") == NULL)
		return;			/* node metrics: the console's */
	if (ctx->json) {
		print_json(m);
		return;
	}
	switch (k) {
	case PK_EPOCH:
		/* A program's epoch line says what it says: the rest is
		 * left out. */
		printf("%s epoch %d", str(m, "job"), (int)num(m, "epoch"));
		if (has(m, "epochs"))
			printf("/%d", (int)num(m, "epochs"));
		printf("  ");
		put(m, "loss", "loss", "%.4f", false);
		/* A token model has a validation loss, no accuracy. */
		put(m, "val_loss", "val_loss", "%.4f", false);
		put(m, "perplexity", "perplexity", "%.2f", false);
		put(m, "tokens/s", "tokens_per_s", "%.0f", false);
		put(m, "test_acc", "test_acc", "%.4f", false);
		put(m, "samples/s", "samples_per_s", "%.0f", false);
		put(m, "data_wait", "data_wait_pct", "%.1f%%", false);
		printf("\n");
		break;
	case PK_EVAL:
		printf("%s step %lld  ", str(m, "job"), (long long)
		    json_integer_value(json_object_get(m, "step")));
		if (json_object_get(m, "val_loss") != NULL)
			printf("val_loss %.4f  perplexity %.2f\n", num(m,
			    "val_loss"), num(m, "perplexity"));
		else
			printf("test_acc %.4f\n", num(m, "test_acc"));
		break;
	case PK_EVENT:
		r = json_object_get(m, "rank");
		/* A job's phase moves; its ranks' are in --json and the
		 * journal (as many as the ranks, and their events say more). */
		if (event_kind_of(m) == EV_PHASE) {
			if (json_integer_value(r) < 0)
				printf("[phase] %s -> %s: %s\n", str(m, "from"),
				    str(m, "to"), str(m, "reason"));
			break;
		}
		if (json_is_integer(r) && json_integer_value(r) >= 0)
			printf("[%s] rank %lld: %s\n", str(m, "kind"),
			    (long long)json_integer_value(r), str(m, "reason"));
		else
			printf("[%s] %s\n", str(m, "kind"), str(m, "reason"));
		break;
	case PK_LOG:
		printf("[log] rank %lld on %s: %s\n",
		    (long long)json_integer_value(json_object_get(m, "rank")),
		    str(m, "node"), str(m, "line"));
		break;
	default:
		break;
	}
	fflush(stdout);
}

static void
run_summary(const struct run_ctx *ctx, const struct job_state *j)
{
	json_t	*s = json_pack("{s:s, s:s}", "t", MSG_SUMMARY, "job", j->name);
	char	 err[128];
	double	 wall;

	summary_pack(&j->sum, s, err, sizeof err);
	json_object_set_new(s, "job", json_string(j->name));
	/* The job's state is the backend's verdict over all ranks. */
	json_object_set_new(s, "state", json_string(job_phase_name(j->phase)));
	if (!json_is_integer(json_object_get(s, "steps")))
		json_object_set_new(s, "steps", json_integer(0));
	/* The worker's wall_s covers its own generation; a job that failed
	 * over or restarted ran longer.  wall_s becomes the job's, from its
	 * first launch (the journal's, for a job a backend before this one
	 * launched) to its end (a replayed one's, else now); a journal's
	 * times that make no interval (a clock set back, a record edited)
	 * leave this backend's own, where it launched the job. */
	wall = j->first_ts > 0 ? (j->end_ts > 0 ? j->end_ts : clock_wall()) -
	    j->first_ts : -1;
	if (!(wall >= 0 && wall < 1e9))
		wall = j->started > 0 ? clock_mono() - j->started : -1;
	if (wall >= 0) {
		if (SUMMARY_HAS(&j->sum, wall_s))
			json_object_set_new(s, "generation_wall_s",
			    json_real(j->sum.wall_s));
		json_object_set_new(s, "wall_s", json_real(wall));
	}
	if (j->reason[0] != '\0')	/* why it failed, or why it waited */
		json_object_set_new(s, "reason", json_string(j->reason));
	/* The generation it ended in: 0 when it never re-formed. */
	json_object_set_new(s, "generation", json_integer(j->generation));
	if (ctx->json)
		print_json(s);
	else {
		if (j->reason[0] != '\0')
			printf("summary: %s: %s\n", job_phase_name(j->phase),
			    str(s, "reason"));
		/* What no rank reported is "–": a program's summary says
		 * what it said (docs/programs.md), not zeros. */
		printf("summary: %s  ", job_phase_name(j->phase));
		put(s, "epochs", "epochs", "%d", true);
		put(s, "steps", "steps", "%.0f", true);
		put(s, "val_loss", "val_loss", "%.4f", false);
		put(s, "perplexity", "perplexity", "%.2f", false);
		if (has(s, "tokens_per_s"))
			put(s, "tokens/s", "tokens_per_s", "%.0f", false);
		else
			put(s, "test_acc", "test_acc", "%.4f", true);
		put(s, "samples/s", "samples_per_s", "%.0f", true);
		put(s, "data_wait", "data_wait_pct", "%.1f%%", true);
		put(s, "wall", "wall_s", "%.1fs", true);
		if (has(s, "micro_batch") && has(s, "accum"))
			printf("micro %d x accum %d x ", (int)num(s,
			    "micro_batch"), (int)num(s, "accum"));
		printf("%d rank%s\n", j->world, j->world == 1 ? "" : "s");
		if (json_object_get(s, "optimizer_bytes") != NULL)
			printf("optimizer: %.0f bytes a rank%s\n",
			    num(s, "optimizer_bytes"), j->spec.train.zero &&
			    j->world > 1 ? " (ZeRO-1: rank 0's shard)" : "");
		if (*str(s, "checkpoint") != '\0')
			printf("checkpoint: %s\n", str(s, "checkpoint"));
	}
	json_decref(s);
}

/* Parse --inject KIND=VALUE[@RANK]: faults for tests, on one rank or all. */
static int
run_inject(const char *arg, struct submit_opts *so)
{
	char	 kind[32], *eq = strchr(arg, '='), *end, *at;
	double	 v;
	long	 rank = -1;
	uint64_t bytes;

	if (eq == NULL || (size_t)(eq - arg) >= sizeof kind)
		goto bad;
	memcpy(kind, arg, (size_t)(eq - arg));
	kind[eq - arg] = '\0';
	if ((at = strchr(eq + 1, '@')) != NULL) {
		rank = strtol(at + 1, &end, 10);
		if (*end != '\0' || end == at + 1 || rank < 0)
			goto bad;
	}
	{
		char	 val[64];
		size_t	 n = at != NULL ? (size_t)(at - eq - 1) : strlen(eq + 1);

		if (n == 0 || n >= sizeof val)
			goto bad;
		memcpy(val, eq + 1, n);
		val[n] = '\0';
		if (strcmp(kind, "leak") == 0) {
			/* "1MiB/step" or "1MiB" */
			char *slash = strstr(val, "/step");
			if (slash != NULL)
				*slash = '\0';
			if (spec_parse_size(val, &bytes) != 0)
				goto bad;
			so->leak_bytes = (long)bytes;
			so->leak_rank = (int)rank;
			return 0;
		}
		v = strtod(val, &end);
		if (*end != '\0' || v < 0 || v > 1e9)
			goto bad;
	}
	if (strcmp(kind, "slow-data") == 0 && rank < 0)
		so->slow_data_ms = (int)v;
	else if (strcmp(kind, "slow-sample") == 0 && rank < 0)
		so->slow_sample_us = (int)v;
	else if (strcmp(kind, "slow") == 0) {
		so->slow_ms = (int)v;
		so->slow_rank = (int)rank;
	} else if (strcmp(kind, "log-flood") == 0 && v >= 1) {
		so->log_flood = (int)v;
		so->log_flood_rank = (int)rank;
	} else if (strcmp(kind, "crash-at") == 0 && v >= 1) {
		so->crash_at = (long)v;
		so->crash_rank = (int)rank;
	} else
		goto bad;
	return 0;
bad:
	fprintf(stderr, "hunter run: bad --inject '%s' (known: slow-data=MS, "
	    "slow-sample=US, "
	    "slow=MS[@RANK], leak=SIZE/step[@RANK], crash-at=STEP[@RANK], "
	    "log-flood=LINES_PER_S[@RANK])\n",
	    arg);
	return -1;
}

static const struct cmd_option run_options[] = {
	{ "json", 'j', NULL, "JSON lines on stdout instead of progress lines" },
	SPEC_CLUSTER_OPTIONS,
	{ "resume", 'r', NULL, "continue from the newest valid checkpoint" },
	{ "attach", 'a', NULL, "follow the running job (or JOB-NAME) of the "
	    "state directory" },
	{ "takeover", 'T', NULL, "ask the backend that holds the state "
	    "directory to detach first" },
	{ "metrics", 'M', "ADDR:PORT", "serve Prometheus metrics there" },
	{ "stop-after-epochs", 'e', "N", "checkpoint and stop after epoch N" },
	{ "trace-steps", 's', "N", "print the global loss of the first N "
	    "steps" },
	{ "inject", 'i', "KIND=VALUE[@RANK]", "a fault, for tests: slow=MS, "
	    "leak=SIZE/step, crash-at=STEP, log-flood=LINES_PER_S, "
	    "slow-data=MS, slow-sample=US" },
	{ NULL }
};

/* The job files, each checked before anything starts. */
static int
run_check_files(const struct cmd_args *a)
{
	for (int i = 0; i < a->argc; i++) {
		struct job_spec		 job;
		struct spec_errors	 errs = { 0 };

		if (spec_load_job(a->argv[i], &job, &errs) != 0) {
			spec_errors_print(stderr, &errs);
			spec_errors_free(&errs);
			return -1;
		}
	}
	return 0;
}

/* Whether a job hunter run follows is still live. */
static bool
run_live(struct backend *b)
{
	for (int i = 0; i < backend_njobs(b); i++) {
		struct job_state *j = backend_job_at(b, i);

		if (j->owned && !job_done(j))
			return true;
	}
	return false;
}

/* Each followed job's summary once it ended (said[i]: printed), and the
 * exit status their ends make: a failure 1, an unsaved end 4. */
static int
run_summaries(const struct run_ctx *ctx, struct backend *b, char **said,
    int *nsaid, int rc)
{
	if (backend_njobs(b) > *nsaid) {
		*said = xrealloc(*said, (size_t)backend_njobs(b));
		memset(*said + *nsaid, 0, (size_t)(backend_njobs(b) - *nsaid));
		*nsaid = backend_njobs(b);
	}
	for (int i = 0; i < backend_njobs(b); i++) {
		struct job_state *j = backend_job_at(b, i);

		if (!j->owned || !job_done(j) || (*said)[i])
			continue;
		(*said)[i] = 1;
		run_summary(ctx, j);
		if (j->phase == JOB_FAILED)
			rc = 1;
		else if (j->phase == JOB_FINISHED && rc == 0 &&
		    SUMMARY_HAS(&j->sum, checkpoint_error))
			rc = 4;
	}
	return rc;
}

/* Ctrl-C once: every followed job checkpoints at one step and stops. */
static void
run_stop_all(struct backend *b)
{
	for (int i = 0; i < backend_njobs(b); i++) {
		struct job_state *j = backend_job_at(b, i);

		if (!j->owned || job_done(j))
			continue;
		backend_stop_job(b, j->name);
		if (!job_done(j))
			fprintf(stderr, "hunter run: stopping %s at the next step "
			    "(Ctrl-C again to detach and leave it running)\n",
			    j->name);
	}
}

/*
 * Follow the jobs to their ends: those on the command line and those
 * handed in since (hunter submit on console.sock).  The exit status is
 * the worst of their ends, or 3 (another backend took over), 130
 * (interrupted), 0 after a preemption every job checkpointed through.
 */
static int
run_follow(const struct run_ctx *ctx, struct backend *b)
{
	char	*said = NULL;
	int	 nsaid = 0, rc = 0, asked = 0, preempted = 0;

	while (run_live(b)) {
		if (backend_poll(b, 200) != 0) {
			fprintf(stderr, "hunter run: detached (another console "
			    "took over); its jobs keep running\n");
			free(said);
			return 3;
		}
		rc = run_summaries(ctx, b, &said, &nsaid, rc);
		if (run_preempt != 0 && !preempted) {
			preempted = 1;
			run_preempted(b, run_preempt);
		} else if (run_interrupts == 1 && !asked) {
			run_stop_all(b);
			asked = 1;
		} else if (run_interrupts > 1) {
			fprintf(stderr, "hunter run: detached; its jobs keep "
			    "running (hunter run --attach follows one)\n");
			free(said);
			return 130;
		}
	}
	rc = run_summaries(ctx, b, &said, &nsaid, rc);
	free(said);
	if (rc != 0)
		return rc;
	/* A preempted job checkpointed as asked: 0; one still queued never
	 * ran (its stop says so): 130, as an interrupt's. */
	for (int i = 0; preempted && i < backend_njobs(b); i++) {
		struct job_state *j = backend_job_at(b, i);

		if (j->owned && j->started == 0)
			return 130;
	}
	return !preempted && run_interrupts ? 130 : 0;
}

static int
cmd_run(const struct cmd_args *a)
{
	struct run_ctx		 ctx = { .json = cmd_has(a, "json") };
	struct submit_opts	 so = { .slow_rank = -1, .leak_rank = -1,
	    .crash_rank = -1, .log_flood_rank = -1,
	    .resume = cmd_has(a, "resume") };
	struct cluster_spec	 cluster;
	struct backend_opts	 bo = { .cluster = &cluster,
	    .takeover = cmd_has(a, "takeover"),
	    .obs = { .ctx = &ctx, .on_frame = run_on_frame } };
	struct backend		*b;
	struct sigaction	 sa = { .sa_handler = run_on_signal };
	const char		*inject;
	struct user_config	 uc;
	char			 err[2048];
	int			 attach = cmd_has(a, "attach"), rc = 0;
	long long		 epochs = 0, trace = 0;

	if (cmd_get_long(a, "stop-after-epochs", 1, INT32_MAX, &epochs) != 0 ||
	    cmd_get_long(a, "trace-steps", 1, INT32_MAX, &trace) != 0)
		return 2;
	so.stop_after_epochs = (int)epochs;
	so.trace_steps = (int)trace;
	for (int i = 0; (inject = cmd_get_nth(a, "inject", i)) != NULL; i++) {
		if (run_inject(inject, &so) != 0)
			return 2;
	}
	if (attach ? a->argc > 1 : a->argc < 1)
		return cmd_usage(&cmd_run_entry);
	if (!attach && run_check_files(a) != 0)
		return 1;
	/* Slurm's notice may come while the agents start: it is acted on
	 * once the jobs run. */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	if ((rc = spec_open_cluster_args(a, false, &cluster, stderr)) != 0)
		return rc == SPEC_CLUSTER_USAGE ? 2 : 1;
	bo.metrics = spec_config_metrics(cmd_get(a, "metrics"), &uc, stderr);
	if ((b = backend_open(&bo, err, sizeof err)) == NULL) {
		fprintf(stderr, "hunter run: %s\n", err);
		spec_cluster_free(&cluster);
		return 1;
	}
	if (attach)
		rc = backend_attach(b, a->argc > 0 ? a->argv[0] : NULL, err,
		    sizeof err);
	for (int i = 0; !attach && i < a->argc && rc == 0; i++)
		rc = backend_submit(b, a->argv[i], &so, err, sizeof err);
	if (rc != 0) {
		fprintf(stderr, "hunter run: %s\n", err);
		if (!run_live(b)) {
			backend_close(b);
			spec_cluster_free(&cluster);
			return 1;
		}
	}
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	rc = run_follow(&ctx, b) ?: (rc != 0 ? 1 : 0);
	backend_close(b);
	spec_cluster_free(&cluster);
	return rc;
}

const struct cmd_entry cmd_run_entry = {
	.name = "run",
	.usage = "JOB.yaml...\n--attach [JOB-NAME]",
	.summary = "run a job on the cluster without the console; progress "
	    "lines or JSON lines on stdout",
	.options = run_options,
	.args_min = 0,
	.args_max = -1,
	.exec = cmd_run,
};
