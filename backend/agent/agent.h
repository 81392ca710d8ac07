/*
 * agent.h: `hunter agent`, one daemon per node.  It listens on
 * DIR/agent.sock, samples the node at 1 Hz into a ring, starts and reaps
 * the workers (each in its own process group, linked by a socketpair),
 * relays their frames to the backend and the backend's store answers back
 * to them (each link through a queue: a slow reader costs its metrics
 * and log lines, never the agent's attention), and keeps what a re-attaching backend needs: every worker's
 * state and the recent epoch, event, exit and summary frames of each job.
 * It keeps running when the backend goes away.
 */
#ifndef HUNTER_AGENT_H
#define HUNTER_AGENT_H

#include <stdbool.h>
#include <sys/types.h>

#include <jansson.h>

#include "lib/cmd-entry.h"
#include "lib/evloop.h"
#include "backend/proto/proto.h"
#include "backend/agent/sampler.h"

#define AGENT_MAX_WORKERS	64
#define AGENT_HISTORY_MAX	4096	/* frames kept for re-attach */
#define AGENT_RING_SECONDS	600	/* 10 minutes of node metrics at 1 Hz */
#define AGENT_GPUS		16	/* GPUs sampled at most */

/* Bytes of a worker's output line sent as one log frame (ranklog.c). */
#define RANKLOG_LINE	512

struct program_rank;

struct agent_worker {
	struct agent	*agent;
	pid_t		 pid;
	int		 fd;		/* -1 once closed */
	struct evloop_fd *ev;		/* fd in the agent's loop */
	struct proto_reader rd;
	struct proto_queue q;		/* commands and store answers to it */
	char		 job[64];
	int		 rank, world, generation;
	json_int_t	 run;		/* the backend's id of this launch */
	long		 seq[PROTO_SEQ_CMDS];	/* the highest forwarded */
	bool		 exited;
	json_t		*last_metrics;
	/* Its stdout and stderr (ranklog.c). */
	int		 out;		/* the pipe; -1 once closed */
	struct evloop_fd *out_ev;
	int		 logfd;		/* DIR/JOB.rankR.log; -1 if none */
	char		 line[RANKLOG_LINE + 1];
	size_t		 linelen;
	double		 rate_t0;	/* this second's start */
	int		 rate_n;	/* lines in it */
	long		 held;		/* lines kept from the wire */
	/* A rank of a program job (program.c); NULL for a hunter worker. */
	struct program_rank *prog;
};

struct agent_peer {
	struct agent	*agent;
	int		 fd;
	struct evloop_fd *ev;		/* fd in the agent's loop */
	struct proto_reader rd;
	struct proto_queue q;		/* what goes to it */
	bool		 is_backend;
};

struct agent {
	char		 node[64];
	char		 dir[4096];
	char		 exe[4096];
	int		 lfd;
	struct evloop	*loop;
	struct agent_peer **peers;	/* as many as connect */
	int		 npeers;
	struct agent_worker workers[AGENT_MAX_WORKERS];
	int		 nworkers;
	struct sampler	*sampler;
	struct sample_ring ring;
	json_t		*history;	/* array of frames, oldest first */
	json_t		*pending;	/* store requests waiting for a backend */
	double		 idle_since;
	int		 idle_exit_s;	/* 0 = never */
	bool		 quit;
	double		 blas_gflops;	/* sgemm, one thread; 0: not measured */
	double		 blas_err;	/* the reference check's, then */
	double		 blas_best_gflops; /* what cpuid allows, where the
					   operator's kernel is another */
	char		 blas_best_ran[32]; /* the core type that ran it */
};

/* Supervisor (supervisor.c). */
int	agent_spawn(struct agent *, const json_t *launch, char *err,
	    size_t errlen);
void	agent_reap(struct agent *);
void	agent_worker_input(struct agent *, struct agent_worker *);
void	agent_signal_workers(struct agent *, const char *job, int rank, int sig);
void	agent_forward_to_workers(struct agent *, const json_t *msg);
json_t	*agent_workers_json(const struct agent *);

/* The environment of a rank (rank-env.c): the agent's, less what env
 * (a program job's, or NULL) sets, plus it, plus the threads of the
 * rank's share of the cores, plus HUNTER_FD and HUNTER_NODE for a
 * program.  NULL-ended; agent_envp_free frees it. */
char	**agent_rank_envp(struct agent *, const json_t *launch,
	    const json_t *env, bool program);
void	agent_envp_free(char **);

/* A rank of a program job (program.c): prepared from its launch before
 * the fork, exec'd in the child, then fed, commanded, ticked (the next
 * deadline comes back) and ended with the fields its exit frame adds. */
struct program_rank *program_prepare(struct agent *, const json_t *launch,
	    char *err, size_t errlen);
void	program_exec(struct program_rank *) __attribute__((noreturn));
void	program_free(struct agent_worker *);
void	program_input(struct agent *, struct agent_worker *);
void	program_command(struct agent *, struct agent_worker *, const json_t *);
double	program_tick(struct agent *, double now);
void	program_exit(struct agent *, struct agent_worker *, int status,
	    json_t *exit_msg);
/* Its output: a line (out-of-memory words), a flood over rate lines a
 * second, and whether n more bytes may go to its log file. */
void	program_output_line(struct agent *, struct agent_worker *,
	    const char *line);
void	program_flood(struct agent *, struct agent_worker *, int rate);
bool	program_log_room(struct agent_worker *, size_t n);

/* A worker's output (ranklog.c): out is the pipe's read end, path the
 * rank's log file. */
void	ranklog_open(struct agent_worker *, int out, const char *path);
void	ranklog_input(struct agent *, struct agent_worker *);
void	ranklog_close(struct agent *, struct agent_worker *);
/* Make s[0..n) printable UTF-8 in place: controls and bad bytes -> '?'. */
void	ranklog_clean(char *s, size_t n);

/* The node's BLAS (agent-blas.c): for hello, and the measurement a
 * backend asks for (answered to p with an ok frame). */
json_t	*agent_blas_json(const struct agent *);
void	agent_bench_sgemm(struct agent *, struct agent_peer *p);

/* The peers on agent.sock (agent-peer.c): each accepted one is watched
 * by the agent's loop until it is closed. */
void	agent_accept(struct agent *);
void	agent_close_peer(struct agent *, struct agent_peer *, const char *why);

/* The daemon (agent.c). */
int	agent_signals_init(void);
void	agent_loop(struct agent *);
void	agent_stop_workers(struct agent *);
void	agent_to_backend(struct agent *, json_t *msg);
bool	agent_backend_attached(struct agent *);
void	agent_record(struct agent *, const json_t *msg);
void	agent_log(struct agent *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

/* `hunter agent --node NAME --dir DIR [--foreground] [--idle-exit S]`
 * (agent-main.c). */
extern const struct cmd_entry cmd_agent_entry;
/* `hunter agent --stdio ...`: relay stdin/stdout to the node's daemon,
 * starting it if needed (stdio.c). */
int	agent_stdio_main(const char *node, const char *dir, int idle_exit_s);

#endif
