/*
 * backend.h: everything behind the screen, in the console's process.  It
 * owns the state directory (one backend per directory, by lock), the
 * journal, the rendezvous store, the links to the agents and the state
 * model of the jobs; front ends (hunter run, the console) drive it with
 * backend_poll() and see what happens through an observer.
 */
#ifndef HUNTER_BACKEND_H
#define HUNTER_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

#include "lib/series.h"
#include "backend/spec/spec.h"
#include "backend/proto/metrics.h"
#include "backend/proto/event.h"
#include "backend/proto/summary.h"
#include "backend/fleet/fleet.h"
#include "backend/sched/goodput.h"
#include "backend/core/job.h"
#include "backend/core/journal.h"
#include "backend/core/store.h"

#define NODE_GPUS_MAX	16	/* what an agent's frame lists at most */
#define NODE_HIST	240	/* samples of history: 4 minutes at 1 Hz */
#define NODE_HIST_ROWS	12	/* the node's rates kept (node_hist_rows) */
#define GPU_HIST_ROWS	8	/* each GPU's */

/*
 * The last minutes of a node's rates, one value a sample (< 0: unknown),
 * for the sparklines: row k is metric node_hist_rows()[k] of the node
 * table (every rate: bytes, packets, events a second, and the CPUs' and
 * disks' busy time), and of each GPU gpu_hist_rows()'s.
 */
struct node_hist {
	float		 v[NODE_HIST_ROWS][NODE_HIST];
	int		 head, len;
};

struct gpu_hist {
	float		 v[GPU_HIST_ROWS][NODE_HIST];
	int		 head, len;
};

struct node_view {
	const struct node_spec *spec;
	bool		 up;		/* its agent said hello on a live link */
	struct node_sample last;	/* the newest sample, validity bits */
	struct node_lists lists;	/* its CPUs, interfaces and disks */
	struct node_hist hist;
	struct gpu_hist	*ghist;		/* one a GPU, as many as ngpus_hist */
	int		 ngpus_hist;
	char		 build[128];	/* its hunter build id */
	struct {			/* what its hello said; "" unknown */
		char	 lib[64];	/* "OpenBLAS 0.3.21" */
		char	 kernel[64];	/* "Haswell" */
		char	 coretype[64];	/* OPENBLAS_CORETYPE, when set */
	}		 blas;
	struct gpu_sample gpus[NODE_GPUS_MAX];	/* the newest, validity bits */
	int		 ngpus;
	double		 sampled;	/* CLOCK_MONOTONIC of the newest sample */
	bool		 fs_low[2];	/* state, checkpoint fs: warned of */
	unsigned long	 frames;	/* metrics frames read */
	char		 down[256];	/* why a bound node (srun) is down;
					 * "" when up or not known */
};

/* The node metrics (enum node_metric) the rows of a node_hist keep, and
 * how many; the GPU metrics of a gpu_hist's (backend-nodes.c). */
const int	*node_hist_rows(int *n);
const int	*gpu_hist_rows(int *n);
/* Row k's i-th value (0 the oldest) of a history. */
float	node_hist_get(const struct node_hist *, int k, int i);
float	gpu_hist_get(const struct gpu_hist *, int k, int i);
/* The row of m in a node's history, or -1 when it is not kept. */
int	node_hist_row(enum node_metric);
int	gpu_hist_row(enum gpu_metric);

/*
 * A rank of a job.  Its phase is job.c's to move; the rest is what its
 * current process reported (rank_proc_reset clears it at each launch:
 * keep a member that a new process must not inherit in that list) and
 * the histories the charts and the detectors read.
 */
struct rank_state {
	int		 node;		/* index into the fleet */
	enum rank_phase	 phase;
	/* Its newest metrics, one member per row of the table of rank
	 * metrics (step, epoch, loss, ..., rss, heartbeat, pid, ...): a
	 * long or a double, named as the JSON field. */
	RANK_METRICS(RANK_METRIC_MEMBER)
	uint64_t	 known;		/* RM_BIT(id): that metric is known */
	bool		 paused;	/* it said it holds at a step */
	bool		 finished;	/* it said it trained to the end */
	double		 last_seen;	/* CLOCK_MONOTONIC of the last metrics */
	double		 kill_sent;	/* when a kill went out; 0 = none */
	/* Rebuilt from the journal by a re-attach: running as far as the
	 * journal knows, until its agent's hello lists it; absent_since is
	 * when a hello did not (its launch never arrived). */
	bool		 replayed;
	double		 absent_since;
	int		 exit_signal;	/* what ended it; 0 = none */
	char		 exit_reason[128];
	char		 said[256];	/* its own last word on failing (its
					 * failed event) */
	char		 last_line[256];	/* the last line it printed */
	struct series	 h_loss, h_samples, h_step_ms;	/* the charts' */
	struct series	 h_compute_ms, h_comm_ms, h_rss, h_step; /* detectors */
};

struct submit_opts {
	bool	 resume;
	int	 stop_after_epochs;
	int	 trace_steps;
	int	 slow_data_ms;
	int	 slow_sample_us;	/* every generation: a device linear
					 * in its samples */
	/* Faults for tests (--inject), each on one rank (-1: every rank),
	 * for the first launch only. */
	int	 slow_ms, slow_rank;
	long	 leak_bytes;
	int	 leak_rank;
	long	 crash_at;
	int	 crash_rank;
	int	 log_flood, log_flood_rank;	/* lines a second a rank prints */
};

/* Commands that travel to the workers with a sequence number. */
enum job_cmd { JOB_CMD_STOP, JOB_CMD_PAUSE, JOB_CMD_CHECKPOINT,
	JOB_CMD_RESUME, JOB_CMD_COUNT };

/* What the scheduler knows of a job's goodput (backend-sched.c): its
 * steps' cost by configuration, averaged, the newest noise scale, the
 * goodput now (samples/s at its batch's efficiency), its attained
 * service and the batch it runs at. */
#define GOODPUT_CONFIGS_MAX	16
struct job_goodput {
	struct goodput_obs obs[GOODPUT_CONFIGS_MAX];
	long		 n[GOODPUT_CONFIGS_MAX];	/* steps seen of each */
	int		 nobs;
	double		 noise_scale;	/* samples; < 0 unknown */
	double		 goodput;	/* known once a rank reported speed */
	bool		 known;
	double		 attained;	/* slot-seconds */
	/* The global batch and base learning rate of the generation that
	 * runs (sched_batch): an adaptive job's choice for its world, the
	 * spec's otherwise; batch 0: not chosen yet (after an attach, until
	 * rank 0 reports its global_batch). */
	int		 batch, batch_world;
	double		 lr;
};

struct job_state {
	char		 name[SPEC_NAME_MAX];
	char		 spec_file[SPEC_PATH_MAX];
	char		*yaml;		/* the job file's text */
	struct job_spec	 spec;
	int		 world, generation;
	long long	 run;		/* unique id of this launch */
	struct rank_state *ranks;
	enum job_phase	 phase;		/* job.c's to move (job.h) */
	double		 phase_since;	/* CLOCK_MONOTONIC of the last move */
	/* Why it failed, or why it waits in the queue ("" = nothing to say);
	 * hunter run prints it with the summary. */
	char		 reason[512];
	struct job_summary sum;		/* rank 0's; sum.have 0 until then */
	json_t		*epochs;	/* epoch frames, in order */
	json_t		*evals;		/* eval frames (train.eval_every) */
	double		 submitted;	/* CLOCK_MONOTONIC, for the queue order */
	double		 started;	/* CLOCK_MONOTONIC, the first launch */
	/* The wall clock's seconds of its first launch, by this backend or
	 * one before it (the journal's "job" records carry it), and of the
	 * end a replayed "job_end" record says; 0 = unknown, or not yet.
	 * The summary's wall_s is the job's from them. */
	double		 first_ts, end_ts;
	struct submit_opts opts;	/* as submitted */
	long		 seq[JOB_CMD_COUNT];
	int		 restarts;
	int		 early_failovers;	/* of ranks that failed before
					 * their first step */
	struct {			/* a re-formation under way (phase
					 * REFORMING or RESIZING) */
		int	*node_of;	/* the placement to relaunch with */
		int	 world;		/* its ranks (a resize: not world) */
		enum event_kind kind;	/* migrated | failover | restarted */
		char	 reason[256];
		double	 since;		/* CLOCK_MONOTONIC */
		bool	 waiting;	/* for a silent node to answer */
		double	 wait_since;	/* CLOCK_MONOTONIC */
		double	 heard_since;	/* every node heard: 0 = not yet */
	} restart;
	double		 grace_until;	/* detectors wait after a launch */
	double		 fail_since;	/* a rank failed; its failover is due */
	struct {			/* counted since the submit or attach */
		long	 failovers, checkpoints;
		long long bytes_sent, bytes_dense;	/* every rank's */
		bool	 bytes_known;	/* a rank has reported them */
		long	 events[EV_COUNT];	/* by kind */
	} total;
	struct job_goodput gp;		/* the scheduler's (backend-sched.c) */
	bool		 owned;		/* submitted to or attached by this
					 * backend, not history it replayed */
	struct job_series *series;	/* its saved series (backend-series.c) */
	struct program_state *prog;	/* a program job's (core's own) */
};

/* Whether j has ended (FINISHED, STOPPED or FAILED). */
bool	job_done(const struct job_state *);
/* Whether rank 0's summary has come. */
static inline bool
job_has_summary(const struct job_state *j)
{
	return j->sum.have != 0;
}

struct program_state;

struct backend_observer {
	void	*ctx;
	/* Frames as they arrive (epoch, event, summary, step, metrics), and
	 * the backend's own events, in the same shape. */
	void	(*on_frame)(void *ctx, const json_t *msg);
};

struct backend_opts {
	const char		*state_dir;	/* NULL = statedir_path() */
	const struct cluster_spec *cluster;
	bool			 takeover;
	struct backend_observer	 obs;
	/* ADDR:PORT of the Prometheus endpoint (hunter(1), METRICS), or
	 * NULL for none.  A port in use or a bad address fails the open. */
	const char		*metrics;
};

struct backend;

struct backend	*backend_open(const struct backend_opts *, char *err,
		    size_t errlen);
/* Place and launch a job.  0, or -1 with err (e.g. it cannot fit). */
int		 backend_submit(struct backend *, const char *spec_file,
		    const struct submit_opts *, char *err, size_t errlen);
/* Find the journal's running job (name NULL = the newest) and follow it. */
int		 backend_attach(struct backend *, const char *name, char *err,
		    size_t errlen);
/* Handle I/O for up to timeout_ms.  Returns -1 once a detach was asked
 * for on console.sock, else 0.  Not to be called once backend_start()
 * runs the loop in its own thread. */
int		 backend_poll(struct backend *, int timeout_ms);

/*
 * The console's way in: backend_start() runs the event loop in a thread
 * of its own.  The state (jobs, nodes, events) may then be read only
 * between backend_lock() and backend_unlock(); a front end that must not
 * wait uses backend_trylock() and draws its previous frame when it fails.
 * Commands go through backend_post(), which never blocks on I/O.
 */
int		 backend_start(struct backend *);
void		 backend_lock(struct backend *);
int		 backend_trylock(struct backend *);	/* 0 when taken */
void		 backend_unlock(struct backend *);
/* Queue a command (owned by the callee): {"cmd": "stop"|"pause"|
 * "resume"|"checkpoint"|"migrate"|"submit", "job", "rank", "node",
 * "file"}.  Its outcome shows as events. */
void		 backend_post(struct backend *, json_t *cmd);
/* Whether the loop thread saw a detach request. */
bool		 backend_detached(struct backend *);

int		 backend_njobs(struct backend *);
struct job_state *backend_job_at(struct backend *, int i);
int		 backend_nnodes(struct backend *);
struct node_view *backend_node_at(struct backend *, int i);
/* The newest events (an array of event frames, oldest first). */
const json_t	*backend_events(struct backend *);
/* The Prometheus exposition of the state now (hunter(1), METRICS):
 * malloc'd text, its length in *len. */
char		*backend_metrics_text(struct backend *, size_t *len);
/* Ask every rank of job to checkpoint and stop at the same step (a job
 * with no rank running ends at once). */
void		 backend_stop_job(struct backend *, const char *job);
/* Preemption or a time limit (Slurm's SIGTERM or SIGUSR1; why names
 * it): every running job checkpoints and stops at one step, queued ones
 * are dropped, nothing is launched or failed over any more, and the
 * journal says so.  Returns the number of jobs still to end. */
int		 backend_preempt(struct backend *, const char *why);
struct job_state *backend_job(struct backend *, const char *name);
const char	*backend_state_dir(const struct backend *);
/* Close links and release the lock; agents and workers keep running. */
void		 backend_close(struct backend *);

#endif
