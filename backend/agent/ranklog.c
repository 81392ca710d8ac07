/*
 * ranklog.c: what a worker prints.  Its stdout and stderr are one pipe to
 * the agent, which appends every byte to DIR/JOB.rankR.log, as before,
 * and sends each line to the backend as a `log` frame (job, rank, line),
 * so the console's logs screen shows a rank's own words: a Gloo or NCCL
 * warning, a sanitizer report, the last line before a crash.
 *
 * A line is cut at RANKLOG_LINE bytes, its control characters and any
 * byte that is not UTF-8 become '?', and a rank gets at most
 * RANKLOG_RATE lines a second on the wire; the rest stay in the file and
 * the next line sent says how many were held back.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/net.h"
#include "lib/utf8.h"
#include "backend/agent/agent.h"

#define RANKLOG_RATE	20
#define RANKLOG_READS	64

void
ranklog_open(struct agent_worker *w, int out, const char *path)
{
	w->out = out;
	w->linelen = 0;
	w->rate_t0 = 0;
	w->rate_n = 0;
	w->held = 0;
	net_set_nonblock(out, 1);
	if ((w->logfd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC |
	    O_NOFOLLOW, 0600)) < 0)
		w->logfd = -1;		/* the lines still go to the backend */
}

void
ranklog_clean(char *s, size_t n)
{
	unsigned char	*u = (unsigned char *)s;
	size_t		 i = 0, k;

	while (i < n) {
		if (u[i] < 0x80) {
			if ((u[i] < 0x20 && u[i] != '\t') || u[i] == 0x7f)
				u[i] = '?';
			i++;
		} else if ((k = utf8_seq(u + i, n - i)) == 0)
			u[i++] = '?';
		else
			i += k;
	}
}

/* Send the line held in w (if any) as a log frame, within the rate. */
static void
ranklog_line(struct agent *a, struct agent_worker *w)
{
	double	 now = clock_mono();
	char	 text[RANKLOG_LINE + 64];
	json_t	*msg;

	if (w->linelen > 0 && w->line[w->linelen - 1] == '\r')
		w->linelen--;
	ranklog_clean(w->line, w->linelen);
	w->line[w->linelen] = '\0';
	w->linelen = 0;
	if (w->prog != NULL)
		program_output_line(a, w, w->line);
	if (now - w->rate_t0 >= 1.0) {
		w->rate_t0 = now;
		w->rate_n = 0;
	}
	if (w->rate_n++ >= RANKLOG_RATE) {
		if (w->prog != NULL)
			program_flood(a, w, RANKLOG_RATE);
		w->held++;
		return;
	}
	if (w->held > 0) {
		snprintf(text, sizeof text, "(%ld lines held back, in %s.rank%d"
		    ".log on this node) %s", w->held, w->job, w->rank, w->line);
		w->held = 0;
	} else
		snprintf(text, sizeof text, "%s", w->line);
	ranklog_clean(text, strlen(text));	/* a cut may split a character */
	msg = json_pack("{s:s, s:s, s:i, s:s, s:I, s:i, s:s}", "t", MSG_LOG,
	    "job", w->job, "rank", w->rank, "node", a->node, "run", w->run,
	    "generation", w->generation, "line", text);
	if (msg != NULL)
		agent_to_backend(a, msg);	/* takes msg */
}

void
ranklog_input(struct agent *a, struct agent_worker *w)
{
	char	 buf[4096];
	ssize_t	 n;
	int	 reads = 0;

	/* At most RANKLOG_READS reads a call: a rank that never stops
	 * printing must not keep the agent from its other work. */
	while (reads++ < RANKLOG_READS &&
	    (n = read(w->out, buf, sizeof buf)) > 0) {
		if (w->logfd >= 0 && (w->prog == NULL ||
		    program_log_room(w, (size_t)n)) &&
		    write(w->logfd, buf, (size_t)n) != n)
			agent_log(a, "%s rank %d: writing its log: %s", w->job,
			    w->rank, strerror(errno));
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] == '\n') {
				ranklog_line(a, w);
				continue;
			}
			w->line[w->linelen++] = buf[i];
			if (w->linelen == RANKLOG_LINE)
				ranklog_line(a, w);
		}
	}
	if (reads > RANKLOG_READS)
		return;			/* more next time */
	if (n == 0 || (errno != EAGAIN && errno != EINTR))
		ranklog_close(a, w);
}

void
ranklog_close(struct agent *a, struct agent_worker *w)
{
	if (w->out < 0)
		return;
	if (w->linelen > 0)
		ranklog_line(a, w);
	evloop_fd_del(w->out_ev);
	w->out_ev = NULL;
	close(w->out);
	w->out = -1;
	if (w->logfd >= 0)
		close(w->logfd);
	w->logfd = -1;
}
