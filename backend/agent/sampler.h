/*
 * sampler.h: the node's metrics (struct node_sample and struct
 * node_lists, the tables in backend/proto/metrics.h) read from /proc and
 * /sys: CPUs (each, their clocks and throttling), load, pressure stall,
 * memory and page faults, interfaces and TCP retransmits, disks, the file
 * systems of the state and checkpoint directories, RAPL and hwmon; and
 * the processes of the ranks the agent runs.  A value that cannot be
 * read keeps its validity bit clear.  Rates (CPU shares, bytes/s) come
 * from the difference between two samples, so the first sample has them
 * invalid.
 */
#ifndef HUNTER_SAMPLER_H
#define HUNTER_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "backend/proto/metrics.h"

struct sampler;

/* root is "" for the real system, or a directory that mirrors /proc and
 * /sys (for tests: ROOT/proc/stat, ROOT/sys/class/powercap/...). */
struct sampler	*sampler_create(const char *root);
void		 sampler_free(struct sampler *);
/* For tests: the monotonic clock, in seconds, that rates are taken
 * against; NULL puts back CLOCK_MONOTONIC. */
void		 sampler_set_clock(struct sampler *, double (*now)(void));
/* The directories whose file systems are sampled (real paths, not under
 * the root): the node's state directory and where checkpoints go; a
 * directory not made yet counts as its nearest parent.  NULL: unknown. */
void		 sampler_set_dirs(struct sampler *, const char *state,
		    const char *ckpt);
/* Take one sample now; lists may be NULL. */
void		 sampler_sample(struct sampler *, struct node_sample *,
		    struct node_lists *);

/* A rank's processes: its pid and whether its whole process group
 * counts (a program's, whose children are its data loaders). */
struct proc_want {
	long		 pid;
	bool		 group;
};

/*
 * The process rows (RM_PROC_MASK) of each of n ranks into out[i]: CPU
 * percent of one core, threads, voluntary and involuntary context
 * switches a second, open fds and, from the GPUs' process lists, the GPU
 * memory they hold; each GPU process found to be a rank's gets its owner.
 * Rates are against the last call that saw the same pid.
 */
void		 sampler_procs(struct sampler *, const struct proc_want *,
		    int n, struct gpu_sample *gpus, int ngpus,
		    struct rank_report *out);


/* A fixed-size ring of the most recent samples. */
struct sample_ring {
	struct node_sample *v;
	size_t		 cap, head, len;
};

void	sample_ring_init(struct sample_ring *, size_t cap);
void	sample_ring_free(struct sample_ring *);
void	sample_ring_push(struct sample_ring *, const struct node_sample *);
/* i = 0 is the oldest kept sample; NULL past the end. */
const struct node_sample *sample_ring_get(const struct sample_ring *, size_t i);

#endif
