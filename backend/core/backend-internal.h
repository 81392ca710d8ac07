/*
 * backend-internal.h: what the backend's files share: the struct itself
 * and the helpers that record and report.  Not for front ends.
 */
#ifndef HUNTER_BACKEND_INTERNAL_H
#define HUNTER_BACKEND_INTERNAL_H

#include <limits.h>
#include <pthread.h>

#include "lib/evloop.h"
#include "backend/proto/proto.h"
#include "backend/sched/policy.h"
#include "backend/core/backend.h"

struct metrics_http;
struct backend_link;

#define MAX_CONSOLE_PEERS	16
/* A console.sock client sends its command and reads the answer at once
 * (hunter ctl, a takeover); one that says nothing this long is gone. */
#define CONSOLE_IDLE_S		10
#define BACKEND_EVENTS_MAX	500

struct console_peer {
	struct backend	*b;
	int		 fd;
	struct evloop_fd *ev;		/* fd in the backend's loop */
	struct proto_reader rd;
	struct proto_queue q;		/* its answers */
	double		 last_seen;	/* CLOCK_MONOTONIC of its accept, its
					 * last whole request or the first
					 * byte of the one under way */
};

struct backend {
	char		 dir[PATH_MAX];
	int		 lock_fd;
	struct journal	*journal;
	struct store	*store;
	struct fleet	 fleet;
	const struct cluster_spec *cluster;
	/* The cluster as placement sees it: cluster's nodes, with each
	 * node's cuda slots cut to the GPUs its agent reports (hello). */
	struct cluster_spec placing;
	struct node_view *nodes;	/* parallel to fleet.nodes */
	int		*used;		/* slots taken per node */
	struct job_state *jobs;
	int		 njobs;
	json_t		*events;	/* the newest, oldest first */
	struct backend_observer obs;
	int		 console_fd;
	struct console_peer *peers[MAX_CONSOLE_PEERS];
	int		 npeers;
	bool		 detach;
	bool		 preempting;	/* backend_preempt was called */
	bool		 replayed;	/* the journal rebuilt the jobs once */
	/* The scheduler (backend-sched.c): its policy and settings, when
	 * it decides next, when it last counted attained service. */
	struct sched_config sched;
	const struct policy *sched_policy;
	double		 sched_next, sched_last;
	int		 replay_from;	/* the first of the jobs it rebuilt */
	double		 loop_at;	/* when the loop last polled */

	/* The event loop (backend-loop.c): console.sock, its clients and
	 * one link per node; the loop thread and the command queue
	 * (backend.c), whose posts ring the loop's wake-up. */
	struct evloop	*loop;
	struct evloop_fd *console_ev;
	struct backend_link *links;	/* parallel to fleet.nodes */
	struct evloop_timer *detect_timer;
	pthread_mutex_t	 mu;
	pthread_t	 thread;
	bool		 threaded, quit;
	bool		 in_loop;	/* handling frames or commands */
	json_t		*queue;		/* posted commands, guarded by qmu */
	pthread_mutex_t	 qmu;

	struct metrics_http *metrics;	/* the Prometheus endpoint, or NULL */
};

/* backend.c */
void	backend_emit(struct backend *, const json_t *msg);
void	backend_event(struct backend *, const char *job, enum event_kind,
	    int rank, const char *node, const char *fmt, ...)
	    __attribute__((format(printf, 6, 7)));
/* The same in two steps, for an event with fields of its own: a new
 * frame (NULL if the reason cannot be encoded), then journalled, counted
 * and shown (the caller still owns ev). */
json_t	*backend_event_new(struct backend *, const char *job, enum event_kind,
	    int rank, const char *node, const char *reason);
void	backend_event_raise(struct backend *, json_t *ev);
/* An event of a job (its ranks' too): counted by kind, and named with the
 * phase the job is in after it ("job_phase"). */
void	backend_event_note(struct backend *, json_t *ev);
void	backend_report_node(void *ctx, const char *node, const char *err);
void	backend_run_commands(struct backend *);

/* The cluster to place on: b->placing once it is set up, else the
 * cluster as given (the simulator's). */
static inline const struct cluster_spec *
backend_placing(const struct backend *b)
{
	return b->placing.nodes != NULL ? &b->placing : b->cluster;
}

/* job.c: a job's life (job.h).  The only writers of a job's and a
 * rank's phase: each move is checked against the tables, journalled with
 * its reason and raised as a "phase" event; -1 when the move is not in
 * the tables (refused, or an abort under HUNTER_STRICT_PHASES). */
int	job_set_phase(struct backend *, struct job_state *, enum job_phase,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int	rank_set_phase(struct backend *, struct job_state *, int r,
	    enum rank_phase, const char *fmt, ...)
	    __attribute__((format(printf, 5, 6)));
/* A phase rebuilt from the journal (backend-attach.c): not a move, so
 * nothing is journalled or raised. */
void	job_restore_phase(struct job_state *, enum job_phase);
void	rank_restore_phase(struct job_state *, int r, enum rank_phase);
/* The journal's record of j's re-formation under way (j->restart): its
 * kind, reason, world and placement; job_regroup writes it before the
 * phase moves, and a rotation again after the job's launch record. */
void	job_journal_decision(struct backend *, struct job_state *);
/* REFORMING or RESIZING: the group stops, to start again. */
bool	job_reforming(const struct job_state *);
int	job_ranks_running(const struct job_state *);
/* Once no rank of j runs: the next generation if it re-forms, a
 * failover if a rank failed and it may, else the verdict and the end. */
void	job_settle(struct backend *, struct job_state *);
/* j ends in a final phase: slots freed, store scope dropped, journalled. */
void	job_end(struct backend *, struct job_state *, enum job_phase,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Rank r's exit frame; rank r failed (sig 0: not by a signal) for why. */
void	job_rank_exit(struct backend *, struct job_state *, int r,
	    const json_t *msg);
void	job_rank_failed(struct backend *, struct job_state *, int r, int sig,
	    const char *why);
/* A frame of rank r of the live generation came (PLACING -> RUNNING). */
void	job_rank_seen(struct backend *, struct job_state *, int r);
/* An event rank r sent: finished, paused, resumed move the job; a
 * failed one is the rank's own word on why. */
void	job_rank_event(struct backend *, struct job_state *, int r,
	    const json_t *ev);
/* Re-form j with node_of as its placement: stop every rank at one step,
 * then relaunch them all as the next generation from the newest
 * checkpoint.  -1 if one is already under way or the job is not live. */
int	job_reform(struct backend *, struct job_state *, const int *node_of,
	    enum event_kind kind, const char *fmt, ...)
	    __attribute__((format(printf, 5, 6)));
/* A re-formation with world ranks on node_of (a resize: a RESIZING
 * phase, and a resized event at the relaunch).  -1 as job_reform. */
int	job_resize(struct backend *, struct job_state *, const int *node_of,
	    int world, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Move a failed rank to a free spare and re-form, or give up. */
void	job_failover(struct backend *, struct job_state *);
/* Checkpoint at a step and end (STOPPING); at once with no rank running. */
void	job_stop(struct backend *, struct job_state *, const char *why);
/* Slots of node n that j may take; spares count. */
int	job_node_free(struct backend *, const struct job_state *, int n);

/* backend-jobs.c */
/* A new job called name at the end of b->jobs, zeroed, in phase. */
struct job_state *backend_new_job(struct backend *, const char *name,
	    enum job_phase);
void	backend_schedule(struct backend *);
/* The ranks of j become world: new ones pending, those past it gone. */
void	backend_set_world(struct job_state *, int world);
/* Journal, announce (with placement's note, place.h) and launch j. */
void	backend_launch_job(struct backend *, struct job_state *,
	    const char *note);
/* Every rank of the old generation has exited: place and launch the next
 * one with the re-formation's placement (job_settle calls it). */
void	backend_relaunch(struct backend *, struct job_state *);
/* For tests: the backend dies here (SIGKILL) when HUNTER_CRASH_AT names
 * the point, as a backend killed at that instant would. */
void	backend_crash_point(const char *point);
/* Launch every rank of j again, in place, as the next generation (a
 * program job's autotune trials and its run after them). */
void	backend_launch_generation(struct backend *, struct job_state *);
/* "local0, local0, local2, local2" for events, a Slurm node with its
 * address: "n1 (10.0.0.11)" (a static buffer). */
const char *placement_text(struct backend *, const struct job_state *);
/* The journal's batched fsync, and its rotation once it is full: the new
 * file starts with the launch records of the live jobs, so a backend
 * that re-attaches finds them there. */
void	backend_journal_tick(struct backend *, double now);
/* The store scope of j's run and generation (store.h): "RUN.gN". */
void	backend_store_scope(const struct job_state *, char *buf, size_t len);

/* backend-command.c */
int	backend_command(struct backend *, const json_t *cmd);
/* Every job of this backend (not the history it replayed): name, phase,
 * ranks and their range, nodes, batch, micro-batch and accumulation,
 * goodput, age and attained service (hunter jobs). */
json_t	*backend_jobs_json(struct backend *);
/* Send a sequenced command to every node that hosts one of j's ranks. */
void	backend_send_cmd(struct backend *, struct job_state *, enum job_cmd);

/* backend-sched.c: the scheduler.  Its policy and settings from the
 * cluster file, else config.yaml, else goodput every 60 s; -1 with err on
 * an unknown policy.  sched_observe takes rank 0's metrics into the job's
 * goodput; sched_tick decides every interval and carries it out. */
int	sched_open(struct backend *, const struct sched_config *cluster,
	    const struct sched_config *user, char *err, size_t errlen);
void	sched_observe(struct job_state *, const struct rank_state *);
/* Settle j->gp.batch and lr for the generation about to launch at
 * j->world on its placement (an adaptive job's choice, docs/scheduling.md
 * "The batch of an adaptive job"; kept while the world stays). */
void	sched_batch(struct job_state *);
void	sched_tick(struct backend *, double now);

/* backend-migrate.c: the operator's migrate command: {rank, node}.  0,
 * or -1 refused (with an event saying why). */
int	backend_migrate(struct backend *, struct job_state *, const json_t *cmd);

/* backend-bound.c: nodes whose agent lives only as long as its link
 * (fleet_node.bound: srun steps).  A connect that fails marks the node
 * down with the launcher's reason, and placement leaves it out; a link
 * that ends loses its ranks (failover, as for a dead agent); a hello
 * brings it back. */
void	backend_node_down(struct backend *, int node, const char *why);
void	backend_link_lost(struct backend *, struct fleet_node *);
void	backend_node_back(struct backend *, int node);
/* backend-preempt.c: a job of a preempted backend has ended. */
void	backend_preempt_done(struct backend *, struct job_state *);

/* backend-detect.c: the detectors (backend/sched/detect.h) over each
 * live job, and their decisions applied; once a second. */
void	detect_tick(struct backend *, double now);
/* Whether the agent of node n is linked and was heard from within the
 * last s seconds (it sends its node's metrics every second). */
bool	backend_node_heard(const struct backend *, int n, double s);
/* Probe node n's link (at most once a second): the agent's answer sets
 * fleet_node.answered to the time the ping was sent. */
void	backend_node_ping(struct backend *, int n, double now);
#define BACKEND_STALL_S	2.0
/* Called once a poll returns: when the loop itself was held up (more
 * than BACKEND_STALL_S past its timeout), the ranks' heartbeats and the
 * nodes' last frames count from now. */
void	backend_after_stall(struct backend *, double now, int timeout_ms);

/* backend-series.c: the job's counters and saved series, from each
 * frame of the job before the state model takes it (valid: proto_kind
 * said k). */
void	backend_series_frame(struct backend *, struct job_state *, int rank,
	    enum proto_kind k, const json_t *msg);
/* Its bytes counters from rank's metrics frame (not a beat). */
void	backend_series_count(struct job_state *, int rank, const json_t *msg);
/* Open j's saved series: fresh for a new run, else appended to. */
void	backend_series_open(struct backend *, struct job_state *, bool fresh);
void	backend_series_close(struct job_state *);

/* backend-prom.c: the loop's turn for the exporters: a rendering when a
 * scrape asks for one, and the saved series of jobs that are over
 * closed.  backend_prom_publish renders now (the last, at close). */
void	backend_export_tick(struct backend *);
void	backend_prom_publish(struct backend *);
/* A node not heard from for five of its 1 Hz samples is down. */
#define NODE_STALE_S	5.0
/* The value of row fd at base + at in its unit for Prometheus. */
double	prom_value(const struct metric_field *, const void *base, size_t at);
/* Whether a node's agent is linked and heard from. */
bool	node_heard(const struct node_view *, double now);
/* backend-prom-node.c: the node, list, GPU and BLAS series. */
void	prom_nodes(FILE *, struct backend *, double now);
/* backend-console.c: console.sock's clients.  Take a client waiting on
 * console.sock (into the loop), or refuse it when full. */
void	backend_console_accept(struct backend *);
void	backend_console_close(struct backend *, struct console_peer *);
/* Close the clients silent for CONSOLE_IDLE_S. */
void	backend_console_reap(struct backend *, double now);

/* backend-loop.c: the loop, its wake-up and its timers (-1 with errno
 * when no wake-up pipe could be made), and freeing them. */
int	backend_loop_open(struct backend *);
void	backend_loop_free(struct backend *);
/* One turn: handle what is ready, or wait up to timeout_ms for it.  It
 * takes the state lock itself, while it handles, not while it waits.
 * -1 once a detach was asked for on console.sock, else 0. */
int	backend_loop_once(struct backend *, int timeout_ms);

/* backend-poll.c */
/* The link of fn is readable: its frames; it can take more: what waits
 * for it.  Either may find the link gone and close it. */
void	backend_node_input(struct backend *, struct fleet_node *);
void	backend_node_output(struct backend *, struct fleet_node *);
/* A rank's metrics frame (valid: proto_kind said PK_METRICS) into the
 * state model and the detectors' series; the simulator's too. */
void	backend_rank_metrics(struct job_state *, int rank, const json_t *m);
/* The job and rank (-1: none) a frame from an agent is about, if it is
 * one of ours: its run and generation live. */
struct job_state *backend_frame_job(struct backend *, const json_t *msg,
	    int *rank);

/* backend-nodes.c */
/* A node's metrics frame (valid) into node n's view and its ranks'. */
void	backend_node_metrics(struct backend *, int n, const json_t *m);
/* What a node's hello says of it: its BLAS, its last minute's samples. */
void	backend_node_hello(struct node_view *, const json_t *hello);
/* The view's sample and GPUs onto its histories (the simulator's too). */
void	backend_node_push(struct node_view *);
/* What a view holds allocated. */
void	backend_node_free(struct node_view *);

/* backend-sim-node.c: a simulated node's walk, and node i's whole sample
 * (its lists and GPUs too) made from it. */
struct rng;
struct sim_walk {
	double	 cpu, mem, rx, tx, load;	/* percent, bytes, bytes/s */
	bool	 busy;			/* it hosts a rank */
	double	 t;			/* wall clock */
	double	 up;			/* seconds it has run */
};
void	sim_node_sample(struct node_view *, int i, const struct sim_walk *,
	    struct rng *);

#endif
