/*
 * sampler.h: the node's metrics (struct node_sample, the table in
 * backend/proto/metrics.h) read from /proc, and from RAPL (powercap) and
 * hwmon where they are readable.  A value that cannot be read keeps its
 * validity bit clear.  Rates (CPU shares, bytes/s) come from the
 * difference between two samples, so the first sample has them invalid.
 */
#ifndef HUNTER_SAMPLER_H
#define HUNTER_SAMPLER_H

#include <stddef.h>

#include "backend/proto/metrics.h"

struct sampler;

/* root is "" for the real system, or a directory that mirrors /proc and
 * /sys (for tests: ROOT/proc/stat, ROOT/sys/class/powercap/...). */
struct sampler	*sampler_create(const char *root);
void		 sampler_free(struct sampler *);
/* For tests: the monotonic clock, in seconds, that rates are taken
 * against; NULL puts back CLOCK_MONOTONIC. */
void		 sampler_set_clock(struct sampler *, double (*now)(void));
/* Take one sample now. */
void		 sampler_sample(struct sampler *, struct node_sample *);

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
