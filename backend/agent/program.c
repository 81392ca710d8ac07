/*
 * program.c: a rank of a program job (hunter(1), PROGRAMS), run by the
 * agent instead of `hunter worker`.  The launch carries argv, the
 * environment the backend made for the rank (torch.distributed's env://
 * names and HUNTER_*), the folder to run in and the stop grace.  The
 * process gets its own process group, stdout and stderr on the rank's
 * log pipe (ranklog.c) and one end of a socketpair as fd 3 (HUNTER_FD),
 * on which it may speak the line protocol (program-line.c).
 *
 * What it writes there is read here and sent on; the commands, the
 * beats, its memory and its end are program-watch.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/errf.h"
#include "lib/xmalloc.h"
#include "backend/agent/program-internal.h"

extern char **environ;

/* Refused protocol lines said on the wire, per rank. */
#define PROGRAM_BAD_SAID	5

static const char *
program_getenv(char **envp, const char *name)
{
	size_t	 n = strlen(name);

	for (; *envp != NULL; envp++) {
		if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
			return *envp + n + 1;
	}
	return NULL;
}

/* Whether argv[0] can run, as execvp will look for it from dir; if not,
 * the reason. */
static void
program_lookup(struct program_rank *p)
{
	const char	*a0 = p->argv[0], *path, *s, *colon;
	char		 cand[8192];

	if (strchr(a0, '/') != NULL) {
		snprintf(cand, sizeof cand, "%s%s%s", a0[0] == '/' ? "" : p->dir,
		    a0[0] == '/' ? "" : "/", a0);
		if (access(cand, X_OK) != 0)
			snprintf(p->reason, sizeof p->reason, "argv[0] %.200s is "
			    "not an executable on node %s (%s)", cand, p->node,
			    strerror(errno));
		return;
	}
	if ((path = program_getenv(p->envp, "PATH")) == NULL)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (s = path; ; s = colon + 1) {
		colon = strchr(s, ':');
		snprintf(cand, sizeof cand, "%.*s/%s", colon != NULL ?
		    (int)(colon - s) : (int)strlen(s), s, a0);
		if (access(cand, X_OK) == 0)
			return;
		if (colon == NULL)
			break;
	}
	snprintf(p->reason, sizeof p->reason, "argv[0] '%.64s' is not on the "
	    "PATH of node %s", a0, p->node);
}

struct program_rank *
program_prepare(struct agent *a, const json_t *launch, char *err,
    size_t errlen)
{
	const json_t	*pg = json_object_get(launch, "program");
	const json_t	*argv = json_object_get(pg, "argv");
	const json_t	*env = json_object_get(pg, "env");
	struct program_rank *p;
	size_t		 i;
	json_t		*v;

	if (!json_is_array(argv) || json_array_size(argv) == 0 ||
	    (env != NULL && !json_is_object(env))) {
		errf(err, errlen, "a program launch needs argv (a list) and "
		    "env (an object)");
		return NULL;
	}
	json_array_foreach(argv, i, v) {
		if (!json_is_string(v)) {
			errf(err, errlen, "program argv[%zu] is not a string",
			    i);
			return NULL;
		}
	}
	p = xcalloc(1, sizeof *p);
	p->argv = xcalloc(json_array_size(argv) + 1, sizeof *p->argv);
	json_array_foreach(argv, i, v)
		p->argv[i] = xstrdup(json_string_value(v));
	p->envp = agent_rank_envp(a, launch, env, true);
	snprintf(p->dir, sizeof p->dir, "%s",
	    json_string_value(json_object_get(pg, "dir")) ?: a->dir);
	snprintf(p->job, sizeof p->job, "%s",
	    json_string_value(json_object_get(launch, "job")));
	snprintf(p->node, sizeof p->node, "%s", a->node);
	p->rank = (int)json_integer_value(json_object_get(launch, "rank"));
	p->rank0 = p->rank == 0;
	p->grace_s = json_number_value(json_object_get(pg, "stop_grace_s"));
	p->startup_s = json_is_number(json_object_get(pg, "startup_s")) ?
	    json_number_value(json_object_get(pg, "startup_s")) : 300;
	p->oom_code = (int)json_integer_value(json_object_get(pg,
	    "oom_exit_code"));
	p->trial = json_is_true(json_object_get(pg, "trial"));
	p->rss_limit = (long)json_integer_value(json_object_get(pg,
	    "rss_limit"));
	p->test_acc = -1;
	p->epoch = -1;
	p->buf = xmalloc(PROGRAM_LINE_MAX);
	program_lookup(p);
	if (p->reason[0] != '\0')
		agent_log(a, "%s rank %d: %s (PATH=%.300s)", p->job, p->rank,
		    p->reason, program_getenv(p->envp, "PATH") ?: "");
	return p;
}

void
program_exec(struct program_rank *p)
{
	int	 fd;

	if ((fd = open("/dev/null", O_RDONLY)) >= 0 && fd != 0) {
		dup2(fd, 0);
		close(fd);
	}
	if (chdir(p->dir) != 0) {
		fprintf(stderr, "hunter agent: cannot run in %s: %s\n", p->dir,
		    strerror(errno));
		_exit(126);
	}
	environ = p->envp;
	execvp(p->argv[0], p->argv);
	fprintf(stderr, "hunter agent: cannot run %s: %s\n", p->argv[0],
	    strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

void
program_free(struct agent_worker *w)
{
	struct program_rank *p = w->prog;

	if (p == NULL)
		return;
	for (int i = 0; p->argv[i] != NULL; i++)
		free(p->argv[i]);
	agent_envp_free(p->envp);
	free(p->argv);
	free(p->buf);
	json_decref(p->pending);
	json_decref(p->summary);
	free(p);
	w->prog = NULL;
}

void
program_send(struct agent *a, struct agent_worker *w, json_t *msg)
{
	json_object_set_new(msg, "node", json_string(a->node));
	json_object_set_new(msg, "run", json_integer(w->run));
	json_object_set_new(msg, "generation", json_integer(w->generation));
	if (json_is_true(json_object_get(msg, "beat")) ||
	    strcmp(proto_type(msg), MSG_METRICS) == 0) {
		json_object_set_new(msg, "pid", json_integer(w->pid));
		json_object_set_new(msg, "heartbeat", json_real((double)time(NULL)));
		if (w->prog->rss > 0)
			json_object_set_new(msg, "rss", json_integer(w->prog->rss));
		if (json_is_true(json_object_get(msg, "beat")))
			json_object_set_new(msg, "paused",
			    json_boolean(w->prog->paused));
		else {
			json_decref(w->last_metrics);
			w->last_metrics = json_deep_copy(msg);
		}
	}
	agent_record(a, msg);
	agent_to_backend(a, msg);
}

void
program_event(struct agent *a, struct agent_worker *w, enum event_kind kind,
    const char *fmt, ...)
{
	va_list	 ap;
	char	 why[600];

	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	program_send(a, w, json_pack("{s:s, s:s, s:s, s:i, s:s}", "t",
	    MSG_EVENT, "job", w->job, "kind", event_kind_name(kind), "rank",
	    w->rank, "reason", why));
}

void
program_write(struct agent *a, struct agent_worker *w, json_t *line)
{
	char	*s = json_dumps(line, JSON_COMPACT);
	size_t	 n = strlen(s);

	s = xrealloc(s, n + 2);
	s[n++] = '\n';
	if (w->fd >= 0 && send(w->fd, s, n, MSG_DONTWAIT | MSG_NOSIGNAL) !=
	    (ssize_t)n)
		agent_log(a, "%s rank %d: a line to the program was lost: %s",
		    w->job, w->rank, strerror(errno));
	free(s);
	json_decref(line);
}

/* A line refused: said on the logs screen, the first few times. */
static void
program_refuse(struct agent *a, struct agent_worker *w, const char *err)
{
	char	 text[1500];

	if (w->prog->bad_lines++ >= PROGRAM_BAD_SAID)
		return;
	snprintf(text, sizeof text, "HUNTER_FD: refused a line: %s%s", err,
	    w->prog->bad_lines == PROGRAM_BAD_SAID ? " (further refused lines "
	    "are not shown)" : "");
	ranklog_clean(text, strlen(text));
	program_send(a, w, json_pack("{s:s, s:s, s:i, s:s}", "t", MSG_LOG,
	    "job", w->job, "rank", w->rank, "line", text));
}

static void
program_line(struct agent *a, struct agent_worker *w, const char *line,
    size_t len)
{
	struct program_rank *p = w->prog;
	double		 now = clock_mono();
	bool		 spoke = p->speaks;
	char		 err[1400];
	json_t		*m;

	m = program_line_frame(p, line, len, now, err, sizeof err);
	if (p->speaks && !spoke) {
		agent_log(a, "%s rank %d speaks the protocol", w->job, w->rank);
		program_write(a, w, json_pack("{s:s, s:i, s:s}", "t", "hello",
		    "proto", 1, "node", a->node));
	}
	if (err[0] != '\0')
		program_refuse(a, w, err);
	if (m == NULL)
		return;
	if (strcmp(proto_type(m), MSG_METRICS) != 0) {
		/* The metrics held back go first: the last ones before an
		 * epoch or a checkpoint are part of it. */
		if (p->pending != NULL) {
			p->sent_t = now;
			program_send(a, w, p->pending);
			p->pending = NULL;
		}
		program_send(a, w, m);
		return;
	}
	/* Metrics and beats within the rate wait their turn: the newest
	 * figures win, and what only the one before said goes along with
	 * them; a beat does not displace metrics, which beat too. */
	if (p->pending != NULL) {
		bool	 beat = json_is_true(json_object_get(m, "beat"));
		bool	 held = json_is_true(json_object_get(p->pending, "beat"));

		if (beat && !held) {
			json_decref(m);
			m = p->pending;
		} else {
			if (!beat && !held)
				json_object_update_missing(m, p->pending);
			json_decref(p->pending);
		}
		p->pending = NULL;
	}
	if (now - p->sent_t >= PROGRAM_METRICS_EVERY) {
		p->sent_t = now;
		program_send(a, w, m);
	} else
		p->pending = m;
}

void
program_input(struct agent *a, struct agent_worker *w)
{
	struct program_rank *p = w->prog;
	char		 chunk[4096];
	ssize_t		 n = 0;
	int		 reads = 0;

	/* Bounded, so a program that floods HUNTER_FD does not keep the
	 * agent from its other ranks. */
	while (reads++ < 16 && (n = recv(w->fd, chunk, sizeof chunk,
	    MSG_DONTWAIT)) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			if (chunk[i] == '\n') {
				if (!p->skipping)
					program_line(a, w, p->buf, p->len);
				p->len = 0;
				p->skipping = false;
			} else if (p->skipping)
				continue;
			else if (p->len == PROGRAM_LINE_MAX) {
				program_refuse(a, w, "a line over 64 KiB");
				p->skipping = true;
				p->len = 0;
			} else
				p->buf[p->len++] = chunk[i];
		}
	}
	if (reads > 16 || (n < 0 && (errno == EAGAIN || errno == EINTR)))
		return;
	evloop_fd_del(w->ev);
	w->ev = NULL;
	close(w->fd);
	w->fd = -1;
}

