/*
 * cmd-run.c: `hunter run JOB.yaml` trains headless and prints progress:
 * one line per epoch and a summary, or with --json the JSON lines of
 * DESIGN.md section 3.  Ctrl-C checkpoints at the next step boundary and
 * stops; --resume continues from the newest valid checkpoint.
 */
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "backend/core/statedir.h"
#include "backend/spec/spec.h"
#include "backend/worker/train.h"
#include "tui/cmd.h"

struct run_ctx {
	const struct job_spec *job;
	int	 json;
};

static volatile sig_atomic_t run_interrupted;

static void
run_sigint(int sig)
{
	(void)sig;
	run_interrupted = 1;
}

static void
emit_json(json_t *obj)
{
	char	*s = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER);

	printf("%s\n", s);
	fflush(stdout);
	free(s);
	json_decref(obj);
}

static void
run_on_epoch(void *arg, const struct epoch_report *r)
{
	struct run_ctx	*ctx = arg;

	if (ctx->json) {
		emit_json(json_pack("{s:s, s:s, s:i, s:I, s:f, s:f, s:f, s:f, s:f, s:f}",
		    "t", "epoch", "job", r->job, "epoch", r->epoch,
		    "step", (json_int_t)r->step, "loss", r->loss,
		    "test_acc", r->test_acc, "test_loss", r->test_loss, "samples_per_s", r->samples_per_s,
		    "data_wait_pct", r->data_wait_pct, "lr", r->lr));
		return;
	}
	printf("%s epoch %d/%d  loss %.4f  test_acc %.4f  samples/s %.0f  "
	    "data_wait %.1f%%\n", r->job, r->epoch, r->epochs, r->loss,
	    r->test_acc, r->samples_per_s, r->data_wait_pct);
	fflush(stdout);
}

static void
run_on_event(void *arg, const char *kind, const char *reason)
{
	struct run_ctx	*ctx = arg;

	if (ctx->json) {
		emit_json(json_pack("{s:s, s:s, s:s, s:i, s:s, s:s}", "t", "event",
		    "job", ctx->job->name, "kind", kind, "rank", 0, "node",
		    "local", "reason", reason));
		return;
	}
	printf("[%s] %s\n", kind, reason);
	fflush(stdout);
}

static int
run_should_stop(void *arg)
{
	(void)arg;
	return run_interrupted;
}

static void
run_summary(const struct run_ctx *ctx, const struct train_summary *s)
{
	if (ctx->json) {
		emit_json(json_pack("{s:s, s:s, s:s, s:i, s:I, s:f, s:f, s:I, "
		    "s:I, s:f, s:i, s:i, s:f, s:s}", "t", "summary",
		    "job", ctx->job->name, "state", s->state, "epochs", s->epochs,
		    "steps", (json_int_t)s->steps, "test_acc", s->test_acc,
		    "samples_per_s", s->samples_per_s,
		    "bytes_sent", (json_int_t)s->bytes_sent,
		    "bytes_dense", (json_int_t)s->bytes_dense, "wall_s", s->wall_s,
		    "micro_batch", s->micro_batch, "accum", s->accum,
		    "data_wait_pct", s->data_wait_pct,
		    "checkpoint", s->checkpoint));
		return;
	}
	printf("summary: %s  epochs %d  steps %ld  test_acc %.4f  samples/s %.0f"
	    "  data_wait %.1f%%  wall %.1fs  micro %d x accum %d\n", s->state,
	    s->epochs, s->steps, s->test_acc, s->samples_per_s,
	    s->data_wait_pct, s->wall_s, s->micro_batch, s->accum);
	if (s->checkpoint[0] != '\0')
		printf("checkpoint: %s\n", s->checkpoint);
}

/* Parse "--inject slow-data=MS". */
static int
run_inject(const char *arg, struct train_config *cfg)
{
	char	*end;
	long	 ms;

	if (strncmp(arg, "slow-data=", 10) == 0) {
		ms = strtol(arg + 10, &end, 10);
		if (*end == '\0' && end != arg + 10 && ms >= 0 && ms <= 60000) {
			cfg->slow_data_ms = (int)ms;
			return 0;
		}
	}
	fprintf(stderr, "hunter run: bad --inject '%s' (known: slow-data=MS)\n",
	    arg);
	return -1;
}

static int
cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "resume", no_argument, NULL, 'r' },
		{ "stop-after-epochs", required_argument, NULL, 'e' },
		{ "inject", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct job_spec		 job;
	struct spec_errors	 errs = { 0 };
	struct run_ctx		 ctx = { .job = &job };
	struct train_config	 cfg = { .job = &job, .rank = 0, .world = 1 };
	struct train_hooks	 hooks = { .ctx = &ctx, .on_epoch = run_on_epoch,
	    .on_event = run_on_event, .should_stop = run_should_stop };
	struct train_summary	 sum;
	struct sigaction	 sa = { .sa_handler = run_sigint };
	char			 state[PATH_MAX], ckdir[PATH_MAX + 64], err[1024];
	int			 c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "jre:i:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': ctx.json = 1; break;
		case 'r': cfg.resume = true; break;
		case 'e':
			cfg.stop_after_epochs = atoi(optarg);
			if (cfg.stop_after_epochs <= 0) {
				fprintf(stderr, "hunter run: --stop-after-epochs "
				    "wants a positive number\n");
				return 2;
			}
			break;
		case 'i':
			if (run_inject(optarg, &cfg) != 0)
				return 2;
			break;
		case 'h':
			printf("usage: hunter run %s\n", cmd_run_entry.usage);
			return 0;
		default:
			return cmd_usage(&cmd_run_entry);
		}
	}
	if (optind != argc - 1)
		return cmd_usage(&cmd_run_entry);
	if (spec_load_job(argv[optind], &job, &errs) != 0) {
		spec_errors_print(stderr, &errs);
		spec_errors_free(&errs);
		return 1;
	}
	if (job.checkpoint.dir[0] != '\0')
		snprintf(ckdir, sizeof ckdir, "%s", job.checkpoint.dir);
	else {
		if (statedir_path(state, sizeof state) != 0) {
			fprintf(stderr, "hunter run: cannot find a state "
			    "directory; set HUNTER_STATE_DIR\n");
			return 1;
		}
		snprintf(ckdir, sizeof ckdir, "%s/checkpoints/%s", state, job.name);
	}
	cfg.checkpoint_dir = ckdir;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (train_run(&cfg, &hooks, &sum, err, sizeof err) != 0) {
		fprintf(stderr, "hunter run: %s\n", err);
		if (ctx.json)
			run_summary(&ctx, &sum);
		return 1;
	}
	run_summary(&ctx, &sum);
	return run_interrupted ? 130 : 0;
}

const struct cmd_entry cmd_run_entry = {
	.name = "run",
	.usage = "[--json] [--resume] [--stop-after-epochs N] "
	    "[--inject slow-data=MS] JOB.yaml",
	.summary = "train a job headless (one rank for now); progress lines or JSON lines on stdout",
	.exec = cmd_run,
};
