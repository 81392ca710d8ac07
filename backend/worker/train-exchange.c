/*
 * train-exchange.c: what a step's gradient goes through between ranks:
 * a sum by allreduce (with train.zero a reduce-scatter, train-zero.c),
 * or, with compression and more than one rank, the
 * compressed exchange, each rank's encoded gradient to every rank.  The
 * control floats after the gradients (loss, requests) ride along either
 * way.  HUNTER_PROFILE times each part (train-profile.c).
 */
#include <stdio.h>
#include <string.h>

#include "lib/xmalloc.h"
#include "backend/worker/train-internal.h"

void
train_exchange_setup(struct trainer *t)
{
	const struct job_spec *job = t->job;
	int		 world = t->cfg->world;
	size_t		 max;

	if (job->compression.method == COMPRESS_NONE || world < 2 ||
	    t->hooks->allgatherv == NULL)
		return;
	t->comp = compressor_create(job, t->model->n_params,
	    job->train.seed ^ (uint64_t)t->cfg->rank);
	max = compressor_max_bytes(t->comp);
	t->cbuf = xmalloc(max);
	t->call = xmalloc(max * (size_t)world);
	t->lens = xcalloc((size_t)world, sizeof *t->lens);
	/* Momentum correction folds momentum into what is sent. */
	if (compressor_owns_momentum(t->comp))
		t->opt->momentum = 0;
}

/*
 * The compressed exchange.  First every rank's header -- its payload
 * length and its control floats (loss, requests) -- in one small
 * allgatherv of fixed size, then the payloads themselves.  Every rank
 * decodes the same bytes in rank order, so all end with the same update.
 */
struct xhdr {
	uint64_t	 len;
	float		 extra[MODEL_GRAD_EXTRA];
};

static int
train_exchange_compressed(struct trainer *t, uint64_t *sent, char *err,
    size_t errlen)
{
	const struct train_hooks *h = t->hooks;
	struct model	*m = t->model;
	int		 world = t->cfg->world;
	struct xhdr	 mine, all[256];
	size_t		 hlens[256];
	double		 epoch = t->epoch + (double)t->step_in_epoch /
	    (double)t->steps_per_epoch;

	if (world > 256) {
		snprintf(err, errlen, "compressed exchange: at most 256 ranks");
		return -1;
	}
	double		 at = train_prof_mark(t, TP_ENCODE, 0);

	memset(&mine, 0, sizeof mine);
	mine.len = compressor_encode(t->comp, m->grads, epoch, t->cbuf,
	    compressor_max_bytes(t->comp));
	at = train_prof_mark(t, TP_ENCODE, at);
	memcpy(mine.extra, m->grads + m->n_params, sizeof mine.extra);
	for (int r = 0; r < world; r++)
		hlens[r] = sizeof mine;
	if (h->allgatherv(h->ctx, &mine, all, hlens, err, errlen) != 0)
		return -1;
	at = train_prof_mark(t, TP_GATHER_HDR, at);
	for (int r = 0; r < world; r++) {
		t->lens[r] = (size_t)all[r].len;
		if (t->lens[r] > compressor_max_bytes(t->comp)) {
			snprintf(err, errlen, "rank %d sent %zu compressed bytes, "
			    "more than %zu", r, t->lens[r],
			    compressor_max_bytes(t->comp));
			return -1;
		}
	}
	if (h->allgatherv(h->ctx, t->cbuf, t->call, t->lens, err, errlen) != 0)
		return -1;
	at = train_prof_mark(t, TP_GATHER_DATA, at);
	if (compressor_decode(t->comp, t->call, t->lens, world, m->grads) != 0) {
		snprintf(err, errlen, "a rank's compressed gradient is malformed");
		return -1;
	}
	memset(m->grads + m->n_params, 0, sizeof mine.extra);
	for (int r = 0; r < world; r++) {
		for (int k = 0; k < MODEL_GRAD_EXTRA; k++)
			m->grads[m->n_params + k] += all[r].extra[k];
	}
	train_prof_mark(t, TP_DECODE, at);
	*sent = sizeof mine + mine.len;
	return 0;
}

int
train_exchange(struct trainer *t, uint64_t *sent, char *err, size_t errlen)
{
	const struct train_hooks *h = t->hooks;
	size_t		 n = t->model->n_params;

	*sent = 0;
	if (t->ovl != NULL) {	/* summed during the backward */
		if (train_overlap_wait(t, err, errlen) != 0)
			return -1;
		*sent = (n + MODEL_GRAD_EXTRA) * sizeof(float);
	} else if (t->comp != NULL) {
		if (train_exchange_compressed(t, sent, err, errlen) != 0)
			return -1;
	} else if (t->zero) {
		if (train_zero_exchange(t, err, errlen) != 0)
			return -1;
		*sent = (n + MODEL_GRAD_EXTRA) * sizeof(float);
	} else if (h->allreduce != NULL && t->cfg->world > 1) {
		double	 at = train_prof_mark(t, TP_ALLREDUCE, 0);

		if (h->allreduce(h->ctx, t->model->grads, n + MODEL_GRAD_EXTRA,
		    err, errlen) != 0)
			return -1;
		train_prof_mark(t, TP_ALLREDUCE, at);
		*sent = (n + MODEL_GRAD_EXTRA) * sizeof(float);
	}
	if (t->cfg->world > 1) {
		t->bytes_sent += *sent;
		t->bytes_dense += n * sizeof(float);
	}
	return 0;
}
