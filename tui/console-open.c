/*
 * console-open.c: `hunter [JOB.yaml...]`, the console's entry.  It reads
 * the options and ~/.config/hunter/config.yaml (theme, metrics), picks
 * the theme (a bad one is reported on screen and the default used),
 * opens the backend on the cluster (with its Prometheus endpoint when
 * asked for), submits each job file given (or, with none, re-attaches
 * to the journal's running job), starts the backend's thread and runs
 * the loop.  On the way out it closes the backend: agents and workers
 * keep running, and the next `hunter` finds them.
 */
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/spec/yaml-doc.h"
#include "backend/core/backend-sim.h"
#include "tui/console.h"
#include "tui/draw.h"

static const struct cmd_option console_options[] = {
	SPEC_CLUSTER_OPTIONS,
	{ "theme", 0, "NAME", "the theme, themes/NAME.yaml (or theme: NAME "
	    "in ~/.config/hunter/config.yaml)" },
	{ "takeover", 0, NULL, "ask the backend that holds the state "
	    "directory to detach first" },
	{ "metrics", 0, "ADDR:PORT", "serve Prometheus metrics there (or "
	    "metrics: {listen: ADDR:PORT} in config.yaml)" },
	{ "simulate", 0, "N", "N simulated nodes instead of the cluster (what "
	    "hunter bench console measures)" },
	{ NULL }
};

/* ~/.config/hunter/config.yaml (backend/spec/spec-config.c) into uc;
 * its problems are said on the console. */
static void
console_config(struct console *c, struct user_config *uc)
{
	struct spec_errors errs = { 0 };

	spec_load_config(uc, &errs);
	for (size_t i = 0; i < errs.n; i++)
		console_say(c, EL_EVENT_ERROR, "%s:%d:%d: %s", errs.v[i].file,
		    errs.v[i].line, errs.v[i].col, errs.v[i].msg);
	spec_errors_free(&errs);
}

int
console_set_theme(struct console *c, const char *name, bool apply)
{
	struct spec_errors errs = { 0 };
	struct theme	 t;
	const char	*base = strrchr(name, '/');

	if (theme_load(name, &t, &errs) != 0) {
		for (size_t i = errs.n; i-- > 0;) {
			const struct spec_error *e = &errs.v[i];

			if (e->line > 0)
				console_say(c, EL_EVENT_ERROR, "theme %s:%d:%d: %s",
				    e->file, e->line, e->col, e->msg);
			else
				console_say(c, EL_EVENT_ERROR, "theme %s: %s",
				    e->file, e->msg);
		}
		spec_errors_free(&errs);
		return -1;
	}
	/* Known by its file's name, so `t` can find the next one. */
	snprintf(t.name, sizeof t.name, "%.*s", (int)(base ? strcspn(base + 1,
	    ".") : strlen(name)), base ? base + 1 : name);
	c->theme = t;
	if (apply)
		theme_apply(&c->theme, c->colour);
	return 0;
}

static void
console_pick_theme(struct console *c, const char *opt,
    const struct user_config *uc)
{
	char	 name[SPEC_PATH_MAX] = "default";

	if (uc->theme[0] != '\0')
		snprintf(name, sizeof name, "%s", uc->theme);
	if (opt != NULL)
		snprintf(name, sizeof name, "%s", opt);
	c->nthemes = theme_list(c->themes, THEME_MAX);
	if (console_set_theme(c, name, false) == 0)
		return;
	if (strcmp(name, "default") != 0 &&
	    console_set_theme(c, "default", false) == 0) {
		console_say(c, EL_EVENT_WARN, "theme %s has errors; using "
		    "default", name);
		return;
	}
	theme_builtin(&c->theme);
	console_say(c, EL_EVENT_WARN, "no usable theme file; using the "
	    "built-in colours");
}

/* Submit each job file, or re-attach; what fails is said on screen. */
static void
console_jobs(struct console *c, char **files, int n)
{
	struct submit_opts so = { 0 };
	char		 err[2048];

	for (int i = 0; i < n; i++) {
		struct spec_errors errs = { 0 };
		struct job_spec	 spec;

		if (spec_load_job(files[i], &spec, &errs) != 0) {
			for (size_t k = 0; k < errs.n; k++) {
				const struct spec_error *e = &errs.v[k];

				if (e->line > 0)
					console_say(c, EL_EVENT_ERROR,
					    "%s:%d:%d: %s", e->file, e->line,
					    e->col, e->msg);
				else
					console_say(c, EL_EVENT_ERROR, "%s: %s",
					    e->file, e->msg);
			}
			spec_errors_free(&errs);
		} else if (backend_submit(c->b, files[i], &so, err,
		    sizeof err) != 0)
			console_say(c, EL_EVENT_ERROR, "%s", err);
		else
			snprintf(c->job, sizeof c->job, "%s", spec.name);
	}
	if (n == 0 && backend_attach(c->b, NULL, err, sizeof err) != 0)
		console_say(c, EL_MESSAGE, "%s; n submits a job", err);
}

static struct backend *
console_backend(struct console *c, const struct cmd_args *a, bool takeover,
    const char *metrics, int simulate, struct cluster_spec *cl, int *rc)
{
	static char	 slurm_name[64];
	struct backend_opts bo = { .cluster = cl, .takeover = takeover,
	    .metrics = metrics,
	    .obs = { .ctx = &c->feed, .on_frame = feed_on_frame } };
	struct backend	*b;
	char		 err[2048];

	if (simulate > 0) {
		c->simulated = true;
		c->cluster_name = "sim";
		return backend_open_sim(simulate, simulate >= 256 ?
		    simulate / 128 : 2, 1);
	}
	if ((*rc = spec_open_cluster_args(a, true, cl, stderr)) != 0) {
		*rc = *rc == SPEC_CLUSTER_USAGE ? 2 : 1;
		return NULL;
	}
	c->cluster_name = cl->name;
	if (cl->simulate > 0) {		/* simulate: N in the cluster file */
		c->simulated = true;
		c->cluster_name = cl->name[0] != '\0' ? cl->name : "sim";
		return backend_open_sim(cl->simulate, cl->sim_racks, 1);
	}
	if (cl->slurm_job[0] != '\0') {
		snprintf(slurm_name, sizeof slurm_name, "from Slurm job %s",
		    cl->slurm_job);
		c->cluster_name = slurm_name;
	}
	if ((b = backend_open(&bo, err, sizeof err)) == NULL)
		fprintf(stderr, "hunter: %s\n", err);
	return b;
}

static int
console_main(const struct cmd_args *a)
{
	struct cluster_spec cl = { 0 };
	struct console	*c;
	const char	*theme = cmd_get(a, "theme");
	const char	*metrics = cmd_get(a, "metrics");
	struct user_config uc;
	bool		 takeover = cmd_has(a, "takeover");
	long long	 simulate = 0;
	int		 running = 0, rc = 1;

	if (cmd_get_long(a, "simulate", 1, SPEC_MAX_NODES, &simulate) != 0)
		return 2;
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "hunter: the console needs a terminal; `hunter "
		    "run JOB.yaml` works without one (hunter --help)\n");
		return 2;
	}
	setlocale(LC_ALL, "");
	draw_init();
	c = calloc(1, sizeof *c);
	if (c == NULL)
		abort();
	for (int i = 0; i < SCR_COUNT; i++)
		c->sort_col[i] = -1;
	c->log_rank = -1;
	console_config(c, &uc);
	console_pick_theme(c, theme, &uc);
	if (metrics == NULL && uc.metrics_listen[0] != '\0')
		metrics = uc.metrics_listen;
	if ((c->b = console_backend(c, a, takeover, metrics, (int)simulate,
	    &cl, &rc)) == NULL) {
		feed_free(&c->feed);
		free(c);
		return rc;
	}
	if (c->simulated)
		backend_sim_start(c->b, &(struct backend_observer){ &c->feed,
		    feed_on_frame });
	else {
		console_jobs(c, a->argv, a->argc);
		backend_start(c->b);
	}
	rc = console_run(c) == 0 ? 0 : 1;
	backend_lock(c->b);
	for (int i = 0; i < backend_njobs(c->b); i++)
		running += !job_done(backend_job_at(c->b, i));
	backend_unlock(c->b);
	if (c->detached_by_peer)
		printf("hunter: another console took over; the jobs keep "
		    "running\n");
	else if (running > 0 && !c->simulated)
		printf("hunter: detached; %d job%s keep%s running; run `hunter` "
		    "to re-attach\n", running, running == 1 ? "" : "s",
		    running == 1 ? "s" : "");
	fflush(stdout);
	backend_close(c->b);
	feed_free(&c->feed);
	free(c);
	spec_cluster_free(&cl);
	return rc;
}

const struct cmd_entry console_entry = {
	.name = NULL,
	.usage = "[JOB.yaml...]",
	.summary = "the console: submits each job file on the cluster, or "
	    "re-attaches to the running job",
	.options = console_options,
	.args_min = 0,
	.args_max = -1,
	.exec = console_main,
};
