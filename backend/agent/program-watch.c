/*
 * program-watch.c: a running rank of a program job, watched by its agent.
 * Commands reach a program that said hello as lines; one that never did
 * gets signals: checkpoint is SIGUSR1 (refused, with the reason, when the
 * program has no handler for it), stop SIGTERM, pause and resume SIGSTOP
 * and SIGCONT of its group.  A stop escalates: the line, SIGTERM
 * at half the grace, SIGKILL of the group at the grace.  Until it reports
 * metrics the agent beats for it, so a rank is not thought dead while it
 * starts; then its metrics are its heartbeat.  Its memory (the group's
 * RSS) is measured here, and a trial's rank over its limit is killed as
 * out of memory; its output is searched for the words of an out of
 * memory, and its log file is bounded.  Its end is reported with why.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/clock.h"
#include "backend/proto/proto.h"
#include "backend/agent/program-internal.h"

/* A flooding rank's log file stops growing here. */
#define PROGRAM_LOG_MAX		(64LL << 20)

/* Whether process pid catches sig, from SigCgt in /proc/PID/status:
 * 1, 0, or -1 when that cannot be read.  A process that does not catch
 * SIGUSR1 is ended by it (its default action), or ignores it. */
static int
program_catches(pid_t pid, int sig)
{
	char			 path[64], line[256];
	unsigned long long	 mask;
	int			 caught = -1;
	FILE			*f;

	snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL) {
		if (sscanf(line, "SigCgt: %llx", &mask) == 1) {
			caught = (int)((mask >> (sig - 1)) & 1);
			break;
		}
	}
	fclose(f);
	return caught;
}

/* A checkpoint for a program that never said hello: SIGUSR1 when it
 * handles the signal; else refused, since the signal would end it (or be
 * ignored) and hunter would count its own signal as the rank's failure. */
static void
program_signal_checkpoint(struct agent *a, struct agent_worker *w)
{
	int	 caught = program_catches(w->pid, SIGUSR1);

	if (caught == 1) {
		kill(w->pid, SIGUSR1);
		program_event(a, w, EV_SIGNAL, "rank %d: SIGUSR1 (checkpoint) to "
		    "pid %ld; the program does not speak the protocol, so it "
		    "declares no checkpoint", w->rank, (long)w->pid);
		return;
	}
	program_event(a, w, EV_REFUSED, "rank %d: checkpoint refused, no "
	    "signal sent: the program (pid %ld) has not said hello on "
	    "HUNTER_FD and %s SIGUSR1, whose default action would end it; "
	    "to checkpoint on request, speak the line protocol or handle "
	    "SIGUSR1 (hunter(1), PROGRAMS)", w->rank, (long)w->pid,
	    caught == 0 ? "has no handler for" : "cannot be seen to handle");
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
	else if (strcmp(cmd, "checkpoint") == 0)
		program_signal_checkpoint(a, w);
	else if (strcmp(cmd, "pause") == 0 && !p->sigstopped) {
		kill(-w->pid, SIGSTOP);
		p->sigstopped = p->paused = true;
		program_event(a, w, EV_PAUSED, "rank %d: SIGSTOP to its process "
		    "group (the program does not speak the protocol); warning: "
		    "its peers' collective timeouts may fire while it is held",
		    w->rank);
	} else if (strcmp(cmd, "resume") == 0 && p->sigstopped) {
		kill(-w->pid, SIGCONT);
		p->sigstopped = p->paused = false;
		program_event(a, w, EV_RESUMED, "rank %d: SIGCONT to its process "
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
		program_event(a, w, EV_WARNING, "rank %d said hello %.0f s ago "
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
	program_event(a, w, EV_WARNING, "rank %d prints more than %d lines a "
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
		if (json_object_get(s, "epochs") == NULL && p->epoch >= 0)
			json_object_set_new(s, "epochs", json_integer(p->epoch));
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
