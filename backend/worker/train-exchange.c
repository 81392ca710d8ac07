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

/* A rank's header in the exchange: its payload's length and its control
 * floats (loss, requests). */
struct xhdr {
	uint64_t	 len;
	float		 extra[MODEL_GRAD_EXTRA];
};
#define XHDR	sizeof(struct xhdr)

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
	/* A slot: the header, then the payload (at most max bytes). */
	t->cbuf = xmalloc(XHDR + max);
	t->call = xmalloc((XHDR + max) * (size_t)world);
	t->lens = xcalloc((size_t)world, sizeof *t->lens);
	/* Momentum correction folds momentum into what is sent. */
	if (compressor_owns_momentum(t->comp))
		t->opt->momentum = 0;
}

/*
 * The compressed exchange.  Every rank's header and payload go in slots
 * of one size, in one allgatherv: a size every rank knows without asking,
 * the largest payload any rank sent the step before, a thirty-second
 * more and 8 bytes (a payload's length moves little from one step to the
 * next: one top-k step in 468 overflowed, the first, and 3 threshold
 * steps), at most the compressor's bound.  A payload longer than its slot
 * says so by its length, and in that step (the first too: no slot yet)
 * the payloads go again in a second allgatherv of their exact lengths.
 * Each collective is a wait for the slowest rank and a wake-up: on two
 * ranks over Gloo the second had been a quarter of the step (the
 * profile of bench/slow-link).  The padding is sent and counted (5% more bytes for
 * top-k).  Every rank decodes the same bytes in rank order, so all end
 * with the same update, the bits of the two-collective exchange.
 */
static int
train_exchange_compressed(struct trainer *t, uint64_t *sent, char *err,
    size_t errlen)
{
	const struct train_hooks *h = t->hooks;
	struct model	*m = t->model;
	int		 world = t->cfg->world;
	size_t		 max = compressor_max_bytes(t->comp), slot = t->xslot;
	size_t		 each = XHDR + slot, lens[256], most = 0, off = 0;
	const uint8_t	*parts[256];
	struct xhdr	 mine, all[256];
	double		 epoch = t->epoch + (double)t->step_in_epoch /
	    (double)t->steps_per_epoch, at;
	bool		 fit = true;

	if (world > 256) {
		snprintf(err, errlen, "compressed exchange: at most 256 ranks");
		return -1;
	}
	at = train_prof_mark(t, TP_ENCODE, 0);
	memset(&mine, 0, sizeof mine);
	mine.len = compressor_encode(t->comp, m->grads, epoch, t->cbuf + XHDR,
	    max);
	at = train_prof_mark(t, TP_ENCODE, at);
	/* A checkpoint's chunk in flight: done before the exchange needs
	 * the link, and this rank's vote in the floats. */
	if (train_ckpt_bg_wait(t, err, errlen) != 0)
		return -1;
	at = train_prof_mark(t, TP_GATHER_HDR, 0);	/* the wait: its own row */
	memcpy(mine.extra, m->grads + m->n_params, sizeof mine.extra);
	memcpy(t->cbuf, &mine, XHDR);
	if (mine.len < slot)	/* no stale bytes on the wire */
		memset(t->cbuf + XHDR + mine.len, 0, slot - mine.len);
	for (int r = 0; r < world; r++)
		lens[r] = each;
	if (h->allgatherv(h->ctx, t->cbuf, t->call, lens, err, errlen) != 0)
		return -1;
	at = train_prof_mark(t, TP_GATHER_HDR, at);
	for (int r = 0; r < world; r++) {
		memcpy(&all[r], t->call + (size_t)r * each, XHDR);
		t->lens[r] = (size_t)all[r].len;
		if (t->lens[r] > max) {
			snprintf(err, errlen, "rank %d sent %zu compressed bytes, "
			    "more than %zu", r, t->lens[r], max);
			return -1;
		}
		fit &= t->lens[r] <= slot;
		most = t->lens[r] > most ? t->lens[r] : most;
		parts[r] = t->call + (size_t)r * each + XHDR;
	}
	if (!fit) {
		if (h->allgatherv(h->ctx, t->cbuf + XHDR, t->call, t->lens, err,
		    errlen) != 0)
			return -1;
		at = train_prof_mark(t, TP_GATHER_DATA, at);
		for (int r = 0; r < world; r++) {
			parts[r] = t->call + off;
			off += t->lens[r];
		}
	}
	if (compressor_decode_parts(t->comp, parts, t->lens, world,
	    m->grads) != 0) {
		snprintf(err, errlen, "a rank's compressed gradient is malformed");
		return -1;
	}
	memset(m->grads + m->n_params, 0, sizeof mine.extra);
	for (int r = 0; r < world; r++) {
		for (int k = 0; k < MODEL_GRAD_EXTRA; k++)
			m->grads[m->n_params + k] += all[r].extra[k];
	}
	train_prof_mark(t, TP_DECODE, at);
	*sent = each + (fit ? 0 : mine.len);
	/* The next slot, the same on every rank: from the same lengths. */
	t->xslot = most + most / 32 + 8 < max ? most + most / 32 + 8 : max;
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
