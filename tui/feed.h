/*
 * feed.h: what the console keeps of the frames the backend shows it
 * (its observer): per-rank figures the state model does not hold
 * (micro-batch, accumulation, bytes and compression per step, paused),
 * the lines of the event pane and the logs screen, and change counters
 * that tell the loop which panels need a redraw.  Written by the
 * backend thread with the backend lock held; read under the same lock.
 */
#ifndef HUNTER_FEED_H
#define HUNTER_FEED_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "backend/spec/spec.h"
#include "tui/theme.h"

struct feed_rank {
	bool	 has;		/* a metrics frame with a step came */
	long	 step;
	int	 epoch;
	double	 loss, samples_per_s, step_ms, comm_ms, data_wait_ms;
	bool	 has_tune;
	int	 micro, accum;
	bool	 has_bytes, has_ratio, has_density;
	double	 bytes_sent, ratio;	/* per step; dense / sent */
	double	 density;		/* the compressor's, now */
	bool	 paused;
	char	 extra[160];		/* a program's own numbers, as text */
};

struct feed_job {
	char		 name[SPEC_NAME_MAX];
	long long	 run;
	struct feed_rank *ranks;
	int		 nranks;
};

struct logline {
	double	 t;		/* wall clock */
	char	 job[SPEC_NAME_MAX];
	int	 rank;		/* -1: the job or the cluster */
	char	 node[SPEC_NAME_MAX];
	char	 kind[16];	/* an event kind, or log, epoch, console */
	int	 severity;	/* event.h's: info, warn, error */
	char	*text;		/* sanitized */
};

#define FEED_LOG_MAX	4096

struct feed {
	struct feed_job	*jobs;
	int		 njobs;
	struct logline	 log[FEED_LOG_MAX];
	int		 head, len;
	uint64_t	 gen_nodes, gen_jobs, gen_events;
};

/* The observer: hand it to backend_opts.obs with the feed as ctx. */
void	feed_on_frame(void *ctx, const json_t *msg);
/* A line of the events and logs: kind is an event kind's name, or log,
 * epoch, summary, console; severity event.h's. */
void	feed_add(struct feed *, const char *job, int rank, const char *node,
	    const char *kind, int severity, const char *text);
struct feed_job *feed_job(struct feed *, const char *name);
/* NULL when nothing came for that rank yet. */
const struct feed_rank *feed_rank(struct feed *, const char *job, int rank);
bool	feed_paused(struct feed *, const char *job);
/* i = 0 is the oldest line kept. */
const struct logline *feed_line(const struct feed *, int i);
/* The colour of a line: its severity's. */
enum elem feed_line_elem(const struct logline *);
void	feed_free(struct feed *);

#endif
