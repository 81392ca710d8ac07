/*
 * train-overlap.c: train.overlap, the dense exchange (or ZeRO-1's
 * reduce-scatter) overlapped with the backward pass, as PyTorch DDP's
 * reducer does.  The gradient is cut at layer boundaries into buckets of
 * about train.bucket_size, from the last layer back.  During the last
 * micro-batch's backward a communication thread sums each bucket, in
 * bucket order on every rank, as soon as the backward has passed the
 * layer its first tensor belongs to (from a layer's first tensor on
 * nothing is written later: a tie points back), and the update waits
 * only for the last bucket.  The control floats after the gradient ride
 * in the first bucket, set before the backward starts.
 *
 * Each element goes through the collective it went through without
 * overlap, over a smaller buffer: where the backend sums every element
 * in one order whatever the buffer (shm, auto within a host or between
 * two hosts, any backend on two ranks), the sums are bit for bit the
 * same; Gloo's ring over three or more ranks or hosts starts an
 * element's sum where its chunk of the buffer falls, so there every rank
 * agrees but the last bits may differ from a run without overlap.
 * A compressed exchange decides over the whole gradient (top-k's k-th
 * value, fp16's scale, the clip's norm before the bank), so it still
 * runs after the backward, as without overlap.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xmalloc.h"
#include "backend/worker/train-internal.h"

struct overlap {
	struct trainer	*t;
	pthread_t	 thread;
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv;
	int		 nb;
	size_t		*lo;		/* bucket b: [lo[b], b ? lo[b - 1] : n) */
	int		*layer;		/* final once this layer's backward is */
	size_t		*counts;	/* ZeRO-1: the bucket's part of shards */
	int		 done;		/* the backward is done down to it */
	int		 armed, quit, rc;
	char		 err[512];
};

/* Sum bucket b across the ranks (the control floats with the first;
 * with ZeRO-1, after the last). */
static int
overlap_bucket(struct overlap *o, int b, char *err, size_t errlen)
{
	struct trainer	*t = o->t;
	const struct train_hooks *h = t->hooks;
	size_t		 n = t->model->n_params, lo = o->lo[b];
	size_t		 hi = b == 0 ? n : o->lo[b - 1], at = 0;
	float		*g = t->model->grads;

	if (!t->zero)
		return h->allreduce(h->ctx, g + lo, hi - lo + (b == 0 ?
		    MODEL_GRAD_EXTRA : 0), err, errlen);
	for (int r = 0; r < t->cfg->world; r++) {
		size_t	a = at > lo ? at : lo, z = at + t->part[r];

		z = z < hi ? z : hi;
		o->counts[r] = z > a ? z - a : 0;
		at += t->part[r];
	}
	if (h->reduce_scatter(h->ctx, g + lo, hi - lo, o->counts, err,
	    errlen) != 0)
		return -1;
	return b < o->nb - 1 ? 0 : h->allreduce(h->ctx, g + n,
	    MODEL_GRAD_EXTRA, err, errlen);
}

static void *
overlap_main(void *arg)
{
	struct overlap	*o = arg;
	char		 err[512];
	int		 rc;

	pthread_mutex_lock(&o->mu);
	while (!o->quit) {
		if (!o->armed) {
			pthread_cond_wait(&o->cv, &o->mu);
			continue;
		}
		for (int b = 0; b < o->nb && o->rc == 0 && !o->quit; b++) {
			while (o->done > o->layer[b] && !o->quit)
				pthread_cond_wait(&o->cv, &o->mu);
			if (o->quit)
				break;
			pthread_mutex_unlock(&o->mu);
			rc = overlap_bucket(o, b, err, sizeof err);
			pthread_mutex_lock(&o->mu);
			if (rc != 0) {
				o->rc = -1;
				snprintf(o->err, sizeof o->err, "bucket %d of %d: "
				    "%s", b + 1, o->nb, err);
			}
		}
		o->armed = 0;
		pthread_cond_broadcast(&o->cv);
	}
	pthread_mutex_unlock(&o->mu);
	return NULL;
}

/* model_backward's hook: layer i is done. */
static void
overlap_layer(void *ctx, int i)
{
	struct overlap	*o = ctx;

	pthread_mutex_lock(&o->mu);
	o->done = i;
	pthread_cond_broadcast(&o->cv);
	pthread_mutex_unlock(&o->mu);
}

void
train_overlap_setup(struct trainer *t)
{
	const struct model *m = t->model;
	struct overlap	*o;
	size_t		 cap = t->job->train.bucket_size / sizeof(float);
	size_t		 end = m->n_params;

	if (!t->job->train.overlap || t->cfg->world < 2 || t->comp != NULL ||
	    t->job->resources.device == DEVICE_CUDA ||
	    t->hooks->allreduce == NULL || m->n_params == 0)
		return;
	o = xcalloc(1, sizeof *o);
	o->t = t;
	o->lo = xcalloc((size_t)m->n_layers + 1, sizeof *o->lo);
	o->layer = xcalloc((size_t)m->n_layers + 1, sizeof *o->layer);
	o->counts = xcalloc((size_t)t->cfg->world, sizeof *o->counts);
	/* Close a bucket at the first layer boundary past the cap; the
	 * last one ends at offset 0. */
	for (int i = m->n_layers - 1; i >= 0; i--) {
		size_t	lo = m->layers[i].param_lo;

		if (lo < end && (end - lo >= cap || lo == 0)) {
			o->lo[o->nb] = lo;
			o->layer[o->nb++] = i;
			end = lo;
		}
	}
	pthread_mutex_init(&o->mu, NULL);
	pthread_cond_init(&o->cv, NULL);
	if (pthread_create(&o->thread, NULL, overlap_main, o) != 0) {
		fprintf(stderr, "train: cannot start the exchange thread\n");
		abort();
	}
	t->ovl = o;
}

int
train_overlap_buckets(const struct trainer *t)
{
	return t->ovl != NULL ? t->ovl->nb : 0;
}

void
train_overlap_arm(struct trainer *t)
{
	struct overlap	*o = t->ovl;

	pthread_mutex_lock(&o->mu);
	o->done = t->model->n_layers;
	o->rc = 0;
	o->armed = 1;
	pthread_cond_broadcast(&o->cv);
	pthread_mutex_unlock(&o->mu);
	t->model->on_backward = overlap_layer;
	t->model->on_backward_ctx = o;
}

int
train_overlap_wait(struct trainer *t, char *err, size_t errlen)
{
	struct overlap	*o = t->ovl;
	int		 rc;

	t->model->on_backward = NULL;
	pthread_mutex_lock(&o->mu);
	o->done = -1;
	pthread_cond_broadcast(&o->cv);
	while (o->armed)
		pthread_cond_wait(&o->cv, &o->mu);
	if ((rc = o->rc) != 0)
		snprintf(err, errlen, "%s", o->err);
	pthread_mutex_unlock(&o->mu);
	return rc;
}

void
train_overlap_free(struct trainer *t)
{
	struct overlap	*o = t->ovl;

	if (o == NULL)
		return;
	pthread_mutex_lock(&o->mu);
	o->quit = 1;
	pthread_cond_broadcast(&o->cv);
	pthread_mutex_unlock(&o->mu);
	pthread_join(o->thread, NULL);
	pthread_mutex_destroy(&o->mu);
	pthread_cond_destroy(&o->cv);
	free(o->lo);
	free(o->layer);
	free(o->counts);
	free(o);
	t->ovl = NULL;
}
