/*
 * program.c: a rank of a program job (hunter(1), PROGRAMS), run by the
 * agent instead of `hunter worker`.  The launch carries argv, the
 * environment the backend made for the rank (torch.distributed's env://
 * names and HUNTER_*), the folder to run in and the stop grace.  The
 * process gets its own process group, stdout and stderr on the rank's
 * log pipe (ranklog.c) and one end of a socketpair as fd 3 (HUNTER_FD),
 * on which it may speak the line protocol (program-line.c).
 *
 * Commands reach a program that said hello as lines; one that never did
 * gets signals: checkpoint is SIGUSR1, stop SIGTERM, pause and resume
 * SIGSTOP and SIGCONT of its group.  A stop escalates: the line, SIGTERM
 * at half the grace, SIGKILL of the group at the grace.  Until it reports
 * metrics the agent beats for it, so a rank is not thought dead while it
 * starts; then its metrics are its heartbeat.  Its memory (the group's
 * RSS) is measured here, and a trial's rank over its limit is killed as
 * out of memory.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/xmalloc.h"
#include "backend/agent/program-internal.h"

extern char **environ;

/* A flooding rank's log file stops growing here. */
#define PROGRAM_LOG_MAX		(64LL << 20)
/* Refused protocol lines said on the wire, per rank. */
#define PROGRAM_BAD_SAID	5

static bool
program_env_has(const json_t *env, const char *entry)
{
	const char	*eq = strchr(entry, '=');
	const char	*k;
	json_t		*v;

	if (eq == NULL)
		return false;
	json_object_foreach((json_t *)env, k, v) {
		if (strlen(k) == (size_t)(eq - entry) &&
		    strncmp(k, entry, (size_t)(eq - entry)) == 0)
			return true;
	}
	return strncmp(entry, "HUNTER_FD=", 10) == 0 ||
	    strncmp(entry, "HUNTER_NODE=", 12) == 0;
}

/* The agent's environment, less what the rank's env sets, plus it. */
static char **
program_envp(struct agent *a, const json_t *env)
{
	size_t		 n = 0, k = 0;
	const char	*key;
	json_t		*v;
	char		**e;

	while (environ[n] != NULL)
		n++;
	e = xcalloc(n + json_object_size(env) + 3, sizeof *e);
	for (size_t i = 0; i < n; i++) {
		if (!program_env_has(env, environ[i]))
			e[k++] = xstrdup(environ[i]);
	}
	json_object_foreach((json_t *)env, key, v) {
		if (json_is_string(v))
			xasprintf(&e[k++], "%s=%s", key, json_string_value(v));
	}
	e[k++] = xstrdup("HUNTER_FD=3");
	xasprintf(&e[k++], "HUNTER_NODE=%s", a->node);
	return e;
}

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
		snprintf(err, errlen, "a program launch needs argv (a list) and "
		    "env (an object)");
		return NULL;
	}
	json_array_foreach(argv, i, v) {
		if (!json_is_string(v)) {
			snprintf(err, errlen, "program argv[%zu] is not a string",
			    i);
			return NULL;
		}
	}
	p = xcalloc(1, sizeof *p);
	p->argv = xcalloc(json_array_size(argv) + 1, sizeof *p->argv);
	json_array_foreach(argv, i, v)
		p->argv[i] = xstrdup(json_string_value(v));
	p->envp = program_envp(a, env != NULL ? env : json_object());
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
	for (int i = 0; p->envp[i] != NULL; i++)
		free(p->envp[i]);
	free(p->argv);
	free(p->envp);
	free(p->buf);
	json_decref(p->pending);
	json_decref(p->summary);
	free(p);
	w->prog = NULL;
}

/* A frame about this rank to the backend, tagged as a worker's are. */
static void
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

static void
program_event(struct agent *a, struct agent_worker *w, const char *kind,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void
program_event(struct agent *a, struct agent_worker *w, const char *kind,
    const char *fmt, ...)
{
	va_list	 ap;
	char	 why[600];

	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	program_send(a, w, json_pack("{s:s, s:s, s:s, s:i, s:s}", "t",
	    MSG_EVENT, "job", w->job, "kind", kind, "rank", w->rank, "reason",
	    why));
}

/* A line to the program; never blocks (a program that does not read
 * HUNTER_FD loses what does not fit). */
static void
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
		program_send(a, w, m);
		return;
	}
	/* Metrics and beats within the rate: the newest waits its turn. */
	json_decref(p->pending);
	p->pending = NULL;
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
	close(w->fd);
	w->fd = -1;
}

void
program_command(struct agent *a, struct agent_worker *w, const json_t *msg)
{
	struct program_rank *p = w->prog;
	const char	*cmd = json_string_value(json_object_get(msg, "cmd"));
	double		 now = clock_mono();

	if (w->exited)
		return;
	if (p->speaks && (strcmp(cmd, "stop") == 0 || strcmp(cmd, "pause") == 0 ||
	    strcmp(cmd, "resume") == 0 || strcmp(cmd, "checkpoint") == 0))
		program_write(a, w, json_pack("{s:s, s:s, s:O?}", "t", "cmd",
		    "cmd", cmd, "seq", json_object_get(msg, "seq")));
	if (strcmp(cmd, "stop") == 0) {
		if (p->stop_asked)
			return;
		p->stop_asked = true;
		if (p->sigstopped) {
			kill(-w->pid, SIGCONT);
			p->sigstopped = p->paused = false;
		}
		if (p->speaks)
			p->term_at = now + p->grace_s / 2;
		else
			kill(w->pid, SIGTERM);
		p->kill_at = now + p->grace_s;
	} else if (p->speaks)
		return;
	else if (strcmp(cmd, "checkpoint") == 0) {
		kill(w->pid, SIGUSR1);
		program_event(a, w, "signal", "rank %d: SIGUSR1 (checkpoint) to "
		    "pid %ld; the program does not speak the protocol, so it "
		    "declares no checkpoint", w->rank, (long)w->pid);
	} else if (strcmp(cmd, "pause") == 0 && !p->sigstopped) {
		kill(-w->pid, SIGSTOP);
		p->sigstopped = p->paused = true;
		program_event(a, w, "paused", "rank %d: SIGSTOP to its process "
		    "group (the program does not speak the protocol); warning: "
		    "its peers' collective timeouts may fire while it is held",
		    w->rank);
	} else if (strcmp(cmd, "resume") == 0 && p->sigstopped) {
		kill(-w->pid, SIGCONT);
		p->sigstopped = p->paused = false;
		program_event(a, w, "resumed", "rank %d: SIGCONT to its process "
		    "group", w->rank);
	}
}

/* The resident memory of process group pgid, in bytes (every process
 * in it: a program's data loader workers count too). */
static long
program_rss(pid_t pgid)
{
	DIR		*d = opendir("/proc");
	struct dirent	*de;
	long		 total = 0, page = sysconf(_SC_PAGESIZE);

	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		char	 path[64], buf[1024], *rp;
		long	 pg = 0, rss = 0;
		ssize_t	 n;
		int	 fd;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/stat", de->d_name);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		n = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		/* After the name in parentheses: state ppid pgrp ..., and
		 * rss is the 22nd field after it. */
		if ((rp = strrchr(buf, ')')) == NULL ||
		    sscanf(rp + 2, "%*c %*d %ld", &pg) != 1 || pg != pgid)
			continue;
		if (sscanf(rp + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u "
		    "%*u %*u %*u %*d %*d %*d %*d %*d %*d %*u %*u %ld", &rss) == 1)
			total += rss * page;
	}
	closedir(d);
	return total;
}

static double
program_rank_tick(struct agent *a, struct agent_worker *w, double now)
{
	struct program_rank *p = w->prog;
	double		 next = now + 1;
	bool		 beat;
	json_t		*m;

	if (p->pending != NULL && now - p->sent_t >= PROGRAM_METRICS_EVERY) {
		m = p->pending;
		p->pending = NULL;
		p->sent_t = now;
		program_send(a, w, m);
	} else if (p->pending != NULL && p->sent_t + PROGRAM_METRICS_EVERY < next)
		next = p->sent_t + PROGRAM_METRICS_EVERY;
	if (now >= p->next_rss) {
		p->rss = program_rss(w->pid);
		p->next_rss = now + (p->trial ? 0.1 : 1.0);
		if (p->rss_limit > 0 && p->rss > p->rss_limit && !p->oom) {
			p->oom = true;
			snprintf(p->reason, sizeof p->reason, "out of memory: its "
			    "RSS of %.1f MiB is over memory_per_rank (%.1f MiB); "
			    "killed by the agent", p->rss / 1048576.0,
			    p->rss_limit / 1048576.0);
			kill(-w->pid, SIGCONT);
			kill(-w->pid, SIGKILL);
		}
	}
	if (p->next_rss < next)
		next = p->next_rss;
	/* Beat while it starts (before its hello, and after it up to
	 * program.startup while no metrics came), while it says it is idle
	 * (as long again), while held, and always for a program that never
	 * speaks. */
	beat = !p->speaks || p->paused || (!p->reported &&
	    now < p->hello_t + p->startup_s) || (p->idle &&
	    now < p->idle_t + p->startup_s);
	if (p->speaks && !p->reported && !p->startup_said &&
	    now >= p->hello_t + p->startup_s) {
		p->startup_said = true;
		program_event(a, w, "warning", "rank %d said hello %.0f s ago "
		    "and has reported no metrics (program.startup %.0f s); its "
		    "heartbeat stops here", w->rank, now - p->hello_t,
		    p->startup_s);
	}
	if (beat && now >= p->next_beat) {
		p->next_beat = now + 1;
		program_send(a, w, json_pack("{s:s, s:s, s:s, s:i, s:b, s:I}",
		    "t", MSG_METRICS, "scope", "rank", "job", w->job, "rank",
		    w->rank, "beat", 1, "step", (json_int_t)p->step));
	}
	if (beat && p->next_beat < next)
		next = p->next_beat;
	if (p->term_at > 0 && now >= p->term_at) {
		p->term_at = 0;
		kill(w->pid, SIGTERM);
	}
	if (p->kill_at > 0 && now >= p->kill_at) {
		p->kill_at = 0;
		snprintf(p->reason, sizeof p->reason, "still running %.0f s "
		    "after the stop: program.stop_grace", p->grace_s);
		kill(-w->pid, SIGCONT);
		kill(-w->pid, SIGKILL);
	}
	if (p->term_at > 0 && p->term_at < next)
		next = p->term_at;
	if (p->kill_at > 0 && p->kill_at < next)
		next = p->kill_at;
	return next;
}

double
program_tick(struct agent *a, double now)
{
	double	 next = now + 1, t;

	for (int i = 0; i < a->nworkers; i++) {
		struct agent_worker *w = &a->workers[i];

		if (w->prog == NULL || w->exited)
			continue;
		if ((t = program_rank_tick(a, w, now)) < next)
			next = t;
	}
	return next;
}

void
program_output_line(struct agent *a, struct agent_worker *w, const char *line)
{
	const char	*words = program_oom_words(line);

	(void)a;
	if (words != NULL && w->prog->reason[0] == '\0')
		snprintf(w->prog->reason, sizeof w->prog->reason, "out of "
		    "memory: it said \"%.200s\"", line);
}

void
program_flood(struct agent *a, struct agent_worker *w, int rate)
{
	if (w->prog->flood_said)
		return;
	w->prog->flood_said = true;
	program_event(a, w, "warning", "rank %d prints more than %d lines a "
	    "second: the logs screen gets %d a second, the rest stay in "
	    "%s.rank%d.log on %s (up to %lld MiB)", w->rank, rate, rate, w->job,
	    w->rank, a->node, PROGRAM_LOG_MAX >> 20);
}

bool
program_log_room(struct agent_worker *w, size_t n)
{
	static const char full[] = "\n[hunter agent: this log reached its "
	    "limit; the rest of the rank's output is not kept]\n";

	if (w->prog->logged >= PROGRAM_LOG_MAX)
		return false;
	w->prog->logged += (long long)n;
	if (w->prog->logged < PROGRAM_LOG_MAX)
		return true;
	if (write(w->logfd, full, sizeof full - 1) < 0) {
		/* the limit stands either way */
	}
	return false;
}

void
program_exit(struct agent *a, struct agent_worker *w, int status, json_t *msg)
{
	struct program_rank *p = w->prog;
	int		 code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	const char	*state;
	json_t		*s;

	/* What it wrote before it died (its last metrics, a checkpoint
	 * declared) is read before its exit is reported. */
	if (w->fd >= 0)
		program_input(a, w);
	if (p->pending != NULL) {
		program_send(a, w, p->pending);
		p->pending = NULL;
	}
	if (p->oom_code > 0 && code == p->oom_code && !p->oom) {
		p->oom = true;
		snprintf(p->reason, sizeof p->reason, "out of memory: it exited "
		    "with the declared status %d (program.oom_exit_code)", code);
	}
	if (code != 0 && strncmp(p->reason, "out of memory", 13) == 0)
		p->oom = true;
	if (code == 0 && !p->oom)
		p->reason[0] = '\0';	/* it ended well after all */
	if (p->rank0) {
		state = p->stop_asked ? "stopped" : code != 0 ? "failed" :
		    "finished";
		s = p->summary != NULL ? json_deep_copy(p->summary) :
		    json_object();
		json_object_set_new(s, "t", json_string(MSG_SUMMARY));
		json_object_set_new(s, "job", json_string(w->job));
		json_object_set_new(s, "state", json_string(state));
		if (json_object_get(s, "steps") == NULL)
			json_object_set_new(s, "steps", json_integer(p->step));
		json_object_set_new(s, "world", json_integer(w->world));
		if (json_object_get(s, "test_acc") == NULL && p->test_acc >= 0)
			json_object_set_new(s, "test_acc", json_real(p->test_acc));
		json_object_set_new(s, "checkpoint", json_string(""));
		program_send(a, w, s);
	}
	if (p->oom)
		json_object_set_new(msg, "oom", json_true());
	if (p->reason[0] != '\0')
		json_object_set_new(msg, "reason", json_string(p->reason));
	if (p->rss > 0)
		json_object_set_new(msg, "rss", json_integer(p->rss));
}
