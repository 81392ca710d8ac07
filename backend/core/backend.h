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

#include "backend/core/journal.h"
#include "backend/core/store.h"
#include "backend/fleet/fleet.h"
#include "backend/spec/spec.h"

enum rank_status { RANK_PENDING, RANK_RUNNING, RANK_EXITED, RANK_FAILED };

struct rank_state {
	int		 node;		/* index into the fleet */
	enum rank_status status;
	long		 pid;
	long		 step;
	int		 epoch;
	double		 loss, samples_per_s, step_ms, comm_ms, data_wait_ms;
	long		 rss;
	double		 heartbeat;	/* wall-clock seconds of the last metrics */
	char		 exit_reason[128];
};

struct job_state {
	char		 name[SPEC_NAME_MAX];
	char		 spec_file[SPEC_PATH_MAX];
	char		*yaml;		/* the job file's text */
	struct job_spec	 spec;
	int		 world, generation;
	long long	 run;		/* unique id of this launch */
	struct rank_state *ranks;
	char		 state[16];	/* running | finished | stopped | failed */
	json_t		*summary;	/* rank 0's, once it arrives */
	bool		 done;		/* every rank has exited */
};

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
};

struct submit_opts {
	bool	 resume;
	int	 stop_after_epochs;
	int	 trace_steps;
	int	 slow_data_ms;
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
 * for on console.sock, else 0. */
int		 backend_poll(struct backend *, int timeout_ms);
/* Ask every rank of job to checkpoint and stop at the same step. */
void		 backend_stop_job(struct backend *, const char *job);
struct job_state *backend_job(struct backend *, const char *name);
const char	*backend_state_dir(const struct backend *);
/* Close links and release the lock; agents and workers keep running. */
void		 backend_close(struct backend *);

#endif
