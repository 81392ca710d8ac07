/*
 * program-internal.h: what the agent keeps of a rank of a program job
 * (hunter(1), PROGRAMS; docs/programs.md): the process's line protocol
 * on HUNTER_FD, the commands it was sent and how they escalate, its
 * memory and the words that say it ran out of it.  program.c runs the
 * process and reads its lines, program-line.c turns them into frames,
 * program-watch.c sends it commands and watches it.
 */
#ifndef HUNTER_PROGRAM_INTERNAL_H
#define HUNTER_PROGRAM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "backend/proto/event.h"
#include "backend/agent/agent.h"

/* The longest line a program may write on HUNTER_FD. */
#define PROGRAM_LINE_MAX	65536
/* The most extra numeric fields a metrics line carries to the screen. */
#define PROGRAM_EXTRA_MAX	16
/* What it reports goes out at most this often (seconds). */
#define PROGRAM_METRICS_EVERY	0.2

struct program_rank {
	/* For the child, made before the fork. */
	char		**argv, **envp;
	char		 dir[4096];
	char		 job[64], node[64];
	int		 rank;
	bool		 rank0;

	/* The protocol. */
	char		*buf;		/* a line being read */
	size_t		 len;
	bool		 skipping;	/* inside a line over the limit */
	int		 bad_lines;	/* refused lines, said up to a few */
	bool		 speaks;	/* it said hello */
	bool		 reported;	/* a metrics line came */
	double		 hello_t;	/* CLOCK_MONOTONIC */
	double		 startup_s;	/* after hello, until metrics */
	bool		 startup_said;
	bool		 idle;		/* said idle: beat until metrics */
	double		 idle_t;
	json_t		*pending;	/* metrics held back by the rate */
	double		 sent_t;	/* the last metrics sent */
	long		 step;		/* the last step it reported */
	double		 prev_t, prev_samples;	/* for samples/s */
	long		 prev_step;
	bool		 has_prev;
	double		 test_acc;	/* of its last epoch line; -1 */
	long		 epoch;		/* of its last epoch line; -1 */
	json_t		*summary;	/* what its summary line said */

	/* Commands. */
	bool		 paused;	/* held (acknowledged or SIGSTOP) */
	bool		 sigstopped;
	bool		 stop_asked;
	double		 grace_s;
	double		 term_at, kill_at;	/* escalation; 0 = none */
	double		 next_beat;

	/* Memory and the end. */
	bool		 trial;
	long		 rss, rss_limit;	/* bytes; limit 0 = none */
	double		 next_rss;
	int		 oom_code;	/* 0 = none declared */
	bool		 oom;
	char		 reason[320];	/* why it ended, when known */
	bool		 flood_said;
	long long	 logged;	/* bytes written to its log file */
};

/* program.c: a frame about this rank to the backend, tagged as a
 * worker's are; an event of kind about it; a line to the program, which
 * never blocks (a program that does not read HUNTER_FD loses what does
 * not fit). */
void	program_send(struct agent *, struct agent_worker *, json_t *msg);
void	program_event(struct agent *, struct agent_worker *, enum event_kind,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void	program_write(struct agent *, struct agent_worker *, json_t *line);

/* program-line.c: the frame a protocol line asks for, or NULL: none to send (a hello, a
 * summary kept for the end, a line refused: err says why, or "" when
 * nothing is wrong).  A metrics frame is tagged with job and rank; the
 * agent adds rss, pid and the heartbeat.  now is CLOCK_MONOTONIC. */
json_t	*program_line_frame(struct program_rank *, const char *line,
	    size_t len, double now, char *err, size_t errlen);
/* The words in an output line that say the process ran out of memory
 * (PyTorch's CPU and CUDA messages, Python's, C++'s), or NULL. */
const char *program_oom_words(const char *line);

#endif
