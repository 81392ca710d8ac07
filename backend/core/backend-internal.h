/*
 * backend-internal.h: what the backend's files share: the struct itself
 * and the helpers that record and report.  Not for front ends.
 */
#ifndef HUNTER_BACKEND_INTERNAL_H
#define HUNTER_BACKEND_INTERNAL_H

#include <limits.h>
#include <pthread.h>

#include "backend/core/backend.h"

#define MAX_CONSOLE_PEERS	16
#define BACKEND_EVENTS_MAX	500

struct console_peer {
	int		 fd;
	struct proto_reader rd;
};

struct backend {
	char		 dir[PATH_MAX];
	int		 lock_fd;
	struct journal	*journal;
	struct store	*store;
	struct fleet	 fleet;
	const struct cluster_spec *cluster;
	struct node_view *nodes;	/* parallel to fleet.nodes */
	int		*used;		/* slots taken per node */
	struct job_state *jobs;
	int		 njobs;
	json_t		*events;	/* the newest, oldest first */
	struct backend_observer obs;
	int		 console_fd;
	struct console_peer peers[MAX_CONSOLE_PEERS];
	int		 npeers;
	bool		 detach;
	double		 next_reconnect;

	/* The loop thread and the command queue (backend.c). */
	pthread_mutex_t	 mu;
	pthread_t	 thread;
	bool		 threaded, quit;
	int		 wake[2];	/* a byte here wakes poll() */
	json_t		*queue;		/* posted commands, guarded by qmu */
	pthread_mutex_t	 qmu;
};

/* backend.c */
void	backend_emit(struct backend *, const json_t *msg);
void	backend_event(struct backend *, const char *job, const char *kind,
	    int rank, const char *node, const char *fmt, ...)
	    __attribute__((format(printf, 6, 7)));
void	backend_report_node(void *ctx, const char *node, const char *err);
void	backend_run_commands(struct backend *);

/* backend-jobs.c */
void	backend_job_done(struct backend *, struct job_state *);
void	backend_command(struct backend *, const json_t *cmd);

/* backend-poll.c */
int	backend_poll_locked(struct backend *, int timeout_ms);

#endif
