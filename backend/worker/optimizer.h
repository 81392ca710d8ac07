/*
 * optimizer.h: the optimizer of one rank (its state buffers sit beside
 * the parameters, same layout) and the learning-rate schedule.  Each
 * optimizer of spec.h is one const struct optimizer_type in its own file
 * (optimizer-sgd.c, optimizer-adamw.c) and one line in optimizer.c's
 * table, indexed by enum spec_optim.
 */
#ifndef HUNTER_OPTIMIZER_H
#define HUNTER_OPTIMIZER_H

#include <stddef.h>

#include "backend/spec/spec.h"

struct optimizer;
struct pool;

struct optimizer_type {
	/* State buffers of n floats: 1 (m) or 2 (m and v). */
	int	 n_state;
	/* Its update runs on a pool (struct optimizer's). */
	int	 pooled;
	/* One update of params with grads at learning rate lr. */
	void	(*step)(struct optimizer *, float *params, const float *grads,
		    float lr);
};

struct optimizer {
	const struct optimizer_type *ops;
	enum spec_optim	 type;		/* its name, for checkpoints */
	size_t		 n;
	float		*m;		/* momentum, or Adam's first moment */
	float		*v;		/* Adam's second moment, else NULL */
	long		 t;		/* Adam steps taken */
	float		 momentum, weight_decay, beta1, beta2, eps;
	/* Ranges [off, off + len) left out of weight decay, in order. */
	size_t		*nd_off, *nd_len;
	int		 n_nd;
	/* The pool its update runs on when its type is pooled: OpenBLAS's
	 * threads at creation (lib/pool.h), as the model's; else NULL. */
	struct pool	*pool;
};

/* A run of the buffer and the weight decay it takes: the optimizer's
 * decay, or 0 in a range left out.  Fills *off and *len with the run
 * that starts at pos; returns its decay. */
float	optimizer_run(const struct optimizer *, size_t pos, size_t *len);

struct optimizer *optimizer_create(const struct job_spec *, size_t n);
void	optimizer_free(struct optimizer *);
/* Leave [off, off + len) out of weight decay (GPT-2's biases, LayerNorm
 * and embeddings); ranges come in order and do not overlap. */
void	optimizer_no_decay(struct optimizer *, size_t off, size_t len);
/* One update of params with grads at learning rate lr. */
void	optimizer_step(struct optimizer *, float *params, const float *grads,
	    float lr);
size_t	optimizer_bytes(const struct optimizer *);

/* The learning rate at step (0-based) of total: linear warm-up, then
 * constant or cosine decay to zero. */
double	lr_at(const struct job_spec *, long step, long total);

#endif
