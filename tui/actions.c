/*
 * actions.c: the operator's commands: pause or resume, checkpoint,
 * migrate, stop, a new job, the next theme, detach.  Commands go to the
 * backend with backend_post(), which never blocks; their outcome comes
 * back as events in the event pane.  These run with the backend lock
 * held (the loop takes it for each key), so they read the state freely
 * and may call backend_submit().
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "tui/console.h"
#include "tui/draw.h"

/* The selected job if it still runs, else a message and NULL. */
static struct job_state *
action_running_job(struct console *c)
{
	struct job_state *j = console_job(c);

	if (j == NULL || job_done(j)) {
		console_say(c, EL_EVENT_WARN, "no running job selected%s%s",
		    j ? ": " : "", j ? j->name : "");
		return NULL;
	}
	return j;
}

static void
action_post(struct console *c, const char *cmd, const char *job)
{
	json_t	*m = json_pack("{s:s, s:s}", "cmd", cmd, "job", job);

	if (m == NULL) {	/* names are ASCII: cannot happen */
		console_say(c, EL_EVENT_ERROR, "%s: cannot encode the command", cmd);
		return;
	}
	backend_post(c->b, m);
	console_say(c, EL_MESSAGE, "%s sent to %s", cmd, job);
}

int
action_pause(struct console *c, int key)
{
	struct job_state *j = action_running_job(c);

	(void)key;
	if (j != NULL)
		action_post(c, j->phase == JOB_PAUSED ||
		    feed_paused(&c->feed, j->name) ?
		    "resume" : "pause", j->name);
	return ACT_REDRAW;
}

int
action_checkpoint(struct console *c, int key)
{
	struct job_state *j = action_running_job(c);

	(void)key;
	if (j != NULL)
		action_post(c, "checkpoint", j->name);
	return ACT_REDRAW;
}

static int
action_stop_done(struct console *c, bool ok)
{
	struct job_state *j = console_job(c);

	if (ok && j != NULL && !job_done(j))
		action_post(c, "stop", j->name);
	return ACT_REDRAW;
}

int
action_stop(struct console *c, int key)
{
	struct job_state *j = action_running_job(c);
	char		 q[256];

	(void)key;
	if (j == NULL)
		return ACT_REDRAW;
	snprintf(q, sizeof q, "stop %s? every rank checkpoints at the same "
	    "step, then the job ends", j->name);
	modal_confirm(c, "stop", q, action_stop_done);
	return ACT_REDRAW;
}

/* Ranks of running jobs on node i. */
static int
action_used(struct console *c, int node)
{
	int	 used = 0;

	for (int k = 0; k < backend_njobs(c->b); k++) {
		struct job_state *j = backend_job_at(c->b, k);

		/* A queued job's ranks are on no node yet. */
		for (int r = 0; !job_done(j) && j->phase != JOB_QUEUED &&
		    r < j->world; r++)
			used += j->ranks[r].node == node &&
			    j->ranks[r].phase == RANK_RUNNING;
	}
	return used;
}

static int
action_migrate_node(struct console *c, bool ok)
{
	struct job_state *j = console_job(c);
	int		 r = c->modal.arg, n;
	json_t		*m;

	if (!ok || j == NULL || job_done(j) || c->modal.sel >= c->modal.nitems)
		return ACT_REDRAW;
	n = c->modal.map[c->modal.sel];
	if ((m = json_pack("{s:s, s:s, s:i, s:s}", "cmd", "migrate", "job",
	    j->name, "rank", r, "node", backend_node_at(c->b, n)->spec->name)) ==
	    NULL) {
		console_say(c, EL_EVENT_ERROR, "migrate: cannot encode the command");
		return ACT_REDRAW;
	}
	backend_post(c->b, m);
	console_say(c, EL_MESSAGE, "migrate sent: %s rank %d to %s", j->name,
	    r, backend_node_at(c->b, n)->spec->name);
	return ACT_REDRAW;
}

/* The rank is chosen: offer the nodes with a free slot, spares too. */
static int
action_migrate_rank(struct console *c, bool ok)
{
	struct job_state *j = console_job(c);
	int		 r = ok ? c->modal.map[c->modal.sel] : -1;

	if (r < 0 || j == NULL || job_done(j))
		return ACT_REDRAW;
	modal_pick(c, "migrate to which node?", action_migrate_node);
	c->modal.arg = r;
	for (int i = 0; i < backend_nnodes(c->b) && c->modal.nitems <
	    MODAL_ITEMS; i++) {
		struct node_view *nv = backend_node_at(c->b, i);
		int slots = j->spec.resources.device == DEVICE_CUDA ?
		    nv->spec->cuda_slots : nv->spec->cpu_slots;
		int free = slots - action_used(c, i);

		if (i == j->ranks[r].node || !nv->up || free <= 0)
			continue;
		c->modal.map[c->modal.nitems] = i;
		modal_add_item(c, "%-16s rack %-8s %d free slot%s%s",
		    nv->spec->name, nv->spec->rack, free, free == 1 ? "" : "s",
		    nv->spec->spare ? "  (spare)" : "");
	}
	if (c->modal.nitems == 0) {
		modal_close(c);
		console_say(c, EL_EVENT_WARN, "no node has a free slot for "
		    "rank %d", r);
	}
	return ACT_REDRAW;
}

int
action_migrate(struct console *c, int key)
{
	struct job_state *j = action_running_job(c);

	(void)key;
	if (j == NULL)
		return ACT_REDRAW;
	modal_pick(c, "migrate which rank?", action_migrate_rank);
	for (int r = 0; r < j->world && r < MODAL_ITEMS; r++) {
		const struct feed_rank *fr = feed_rank(&c->feed, j->name, r);

		c->modal.map[c->modal.nitems] = r;
		modal_add_item(c, "rank %-4d on %-16s step %ld", r,
		    backend_node_at(c->b, j->ranks[r].node)->spec->name,
		    fr != NULL ? fr->step : j->ranks[r].step);
	}
	if (c->sel[SCR_JOB] < c->modal.nitems && c->scr == SCR_JOB)
		c->modal.sel = c->rank < c->modal.nitems ? c->rank : 0;
	return ACT_REDRAW;
}

/* The job file is checked here first, so its errors show under the
 * prompt with file:line:col, and the prompt stays open to fix the path. */
static int
action_new_done(struct console *c, bool ok)
{
	struct spec_errors	 errs = { 0 };
	struct submit_opts	 so = { 0 };
	struct job_spec		 spec;
	char			 err[1024], path[sizeof c->modal.input];

	snprintf(path, sizeof path, "%s", c->modal.input);
	if (!ok || path[0] == '\0')
		return ACT_REDRAW;
	if (c->simulated) {
		console_say(c, EL_EVENT_WARN, "the simulated cluster takes no "
		    "jobs");
		return ACT_REDRAW;
	}
	c->modal.kind = MODAL_PROMPT;	/* reopened, unless all is well */
	c->modal.nerrors = 0;
	if (spec_load_job(path, &spec, &errs) != 0) {
		for (size_t i = 0; i < errs.n && i < MODAL_ERRORS; i++) {
			const struct spec_error *e = &errs.v[i];
			char	*out = c->modal.errors[i];
			size_t	 len = sizeof c->modal.errors[i];

			if (i == MODAL_ERRORS - 1 && errs.n > MODAL_ERRORS)
				snprintf(out, len, "... and %zu more (hunter "
				    "validate lists them)", errs.n - i);
			else if (e->line > 0)
				snprintf(out, len, "%s:%d:%d: %s", e->file,
				    e->line, e->col, e->msg);
			else
				snprintf(out, len, "%s: %s", e->file, e->msg);
			c->modal.nerrors++;
		}
		spec_errors_free(&errs);
		return ACT_REDRAW;
	}
	if (backend_submit(c->b, path, &so, err, sizeof err) != 0) {
		snprintf(c->modal.errors[0], sizeof c->modal.errors[0], "%s", err);
		c->modal.nerrors = 1;
		return ACT_REDRAW;
	}
	modal_close(c);
	snprintf(c->job, sizeof c->job, "%s", spec.name);
	console_say(c, EL_MESSAGE, "submitted %s", spec.name);
	return ACT_REDRAW;
}

int
action_new_job(struct console *c, int key)
{
	(void)key;
	modal_prompt(c, "job file to submit", "", action_new_done);
	return ACT_REDRAW;
}

int
action_theme(struct console *c, int key)
{
	int	 at = -1;

	(void)key;
	if (c->nthemes == 0) {
		console_say(c, EL_EVENT_WARN, "no themes found (set "
		    "HUNTER_THEME_DIR)");
		return ACT_REDRAW;
	}
	for (int i = 0; i < c->nthemes; i++) {
		if (strcmp(c->themes[i], c->theme.name) == 0)
			at = i;
	}
	for (int k = 1; k <= c->nthemes; k++) {
		const char *next = c->themes[(at + k) % c->nthemes];

		if (console_set_theme(c, next, true) == 0) {
			console_say(c, EL_MESSAGE, "theme %s", c->theme.name);
			break;
		}
	}
	return ACT_LAYOUT;
}

static int
action_quit_done(struct console *c, bool ok)
{
	c->quit = ok;
	return ACT_REDRAW;
}

int
action_quit(struct console *c, int key)
{
	int	 running = 0;

	(void)key;
	for (int i = 0; i < backend_njobs(c->b); i++)
		running += !job_done(backend_job_at(c->b, i));
	if (running == 0) {
		c->quit = true;
		return ACT_REDRAW;
	}
	modal_confirm(c, "detach", "jobs keep running; run `hunter` to "
	    "re-attach.  Detach now?", action_quit_done);
	return ACT_REDRAW;
}
