/*
 * train-ckpt-bg.c: a periodic checkpoint of a compressed job whose
 * gather runs under the steps (checkpoint.background, on by default).
 *
 * A compressed job's checkpoint carries every rank's compressor state
 * (the residual, and the velocity with momentum correction: two floats a
 * parameter a rank), gathered to rank 0.  Gathered at once, that stalls
 * every rank for as long as the link takes: on bench/slow-link's
 * 100 Mbit/s link, 0.29-0.36 s a checkpoint for the mlp's 2.2 MB a rank,
 * a fifth of a 2-epoch run.  Here the checkpoint's step is snapshotted
 * instead (each rank's compressor state; on rank 0 the weights and the
 * optimizer too), and each rank's state goes to rank 0 in chunks,
 * point to point (comm_xfer_start), one a step: posted after a step and
 * moved by the transport during the next step's compute, when the link
 * has nothing else to carry.  Before its exchange a rank waits for the
 * chunk in flight, and a chunk that made it wait (over CKPT_BG_LATE) is a
 * vote, carried in the floats after the gradients (TRAIN_X_CKPT_LATE)
 * and so summed by the exchange: every rank halves the next chunk where
 * any rank voted, and doubles it otherwise, so all agree on each chunk's
 * size and it settles about what the link moves during the compute.
 * (Growing it by an eighth after the first vote, as TCP's congestion
 * avoidance would, was worse on both links of bench/slow-link: on 2
 * vCPUs the transport's thread competes with the ranks' compute, so a
 * vote comes early even where the link is fast, and the chunks stayed
 * small: 414 of them unshaped, against 61.)  Once
 * every rank's state is in, rank 0 writes the checkpoint of the
 * snapshotted step, the same bytes a checkpoint written at that step
 * would have.  Until then the newest checkpoint on disk is the one
 * before: a crash in between resumes from it, as a crash just before the
 * step would.  Any other checkpoint (asked for, a stop, the last)
 * finishes one in flight first, all at once; a failed group drops it.
 *
 * Only where the collectives have transfers (Gloo between hosts; shared
 * memory needs none), without ZeRO-1, and where rank 0's snapshot is at
 * most CKPT_BG_MAX bytes; elsewhere the checkpoint is gathered at once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/xmalloc.h"
#include "backend/worker/train-internal.h"

#define CKPT_BG_FIRST	(16 * 1024)	/* bytes of a rank's first chunk */
#define CKPT_BG_MIN	(4 * 1024)	/* and of its smallest */
#define CKPT_BG_LATE	50e-6		/* a wait longer is a vote */
#define CKPT_BG_MAX	((size_t)1 << 30)	/* rank 0's snapshot, at most */
#define CKPT_BG_RANKS	256

struct ckpt_bg {
	struct ckpt_meta cm;		/* the snapshotted step's */
	long		 prev_ckpt;	/* t->last_ckpt before it */
	size_t		 sb;		/* a rank's compressor state, bytes */
	uint8_t		*states;	/* rank 0: every rank's; else its own */
	float		*params;	/* rank 0: the weights */
	struct optimizer opt;		/* rank 0: the optimizer, its m and v
					 * copies of their own */
	size_t		 off, chunk;	/* sent of each rank's; in flight */
	uint32_t	 seq;		/* chunks posted, the transfers' tag */
	void		*x[CKPT_BG_RANKS];	/* in flight, by peer */
	int		 nx;
};

/* Rank 0's snapshot, bytes; the same figure on every rank. */
static size_t
bg_bytes(const struct trainer *t, size_t sb)
{
	return sb * (size_t)t->cfg->world + t->model->n_params *
	    sizeof(float) + optimizer_bytes(t->opt);
}

static void
bg_free(struct ckpt_bg *bg)
{
	free(bg->states);
	free(bg->params);
	free(bg->opt.m);
	free(bg->opt.v);
	free(bg);
}

/* Post the chunk at off of every state bound for rank 0: rank 0 receives
 * each other rank's, the others send their own. */
static int
bg_post(struct trainer *t, char *err, size_t errlen)
{
	const struct train_hooks *h = t->hooks;
	struct ckpt_bg	*bg = t->bg;
	size_t		 len = bg->sb - bg->off < bg->chunk ? bg->sb - bg->off :
			    bg->chunk;
	int		 rank = t->cfg->rank;
	void		*x;

	bg->seq++;
	for (int r = rank == 0 ? 1 : 0; r < (rank == 0 ? t->cfg->world : 1);
	    r++) {
		uint8_t	*at = rank == 0 ? bg->states + (size_t)r * bg->sb +
		    bg->off : bg->states + bg->off;

		if ((x = h->xfer_start(h->ctx, at, len, r, rank != 0, bg->seq,
		    err, errlen)) == NULL)
			return -1;
		bg->x[bg->nx++] = x;
	}
	bg->chunk = len;
	return 0;
}

/* Wait for every transfer in flight; the first error is kept. */
static int
bg_wait_all(struct trainer *t, char *err, size_t errlen)
{
	const struct train_hooks *h = t->hooks;
	struct ckpt_bg	*bg = t->bg;
	char		 why[512];
	int		 rc = 0;

	for (int i = 0; i < bg->nx; i++) {
		if (h->xfer_wait(h->ctx, bg->x[i], why, sizeof why) != 0 &&
		    rc == 0) {
			snprintf(err, errlen, "checkpoint of step %ld in the "
			    "background: %s", bg->cm.step, why);
			rc = -1;
		}
	}
	bg->nx = 0;
	return rc;
}

/* Every state is in: rank 0 writes the snapshotted step's checkpoint.
 * A write that fails (a full disk) is said, as train.c says a periodic
 * one's; the training goes on, and the one before stays the newest
 * (last_ckpt stays, as there: every rank must decide alike). */
static void
bg_complete(struct trainer *t)
{
	struct ckpt_bg	*bg = t->bg;
	struct ckpt_blob *blobs;
	struct model	 m;
	char		 err[512];

	t->bg = NULL;
	if (t->cfg->rank == 0) {
		blobs = xcalloc((size_t)t->cfg->world, sizeof *blobs);
		for (int r = 0; r < t->cfg->world; r++) {
			snprintf(blobs[r].name, sizeof blobs[r].name,
			    "compressor.rank%d", r);
			blobs[r].data = bg->states + (size_t)r * bg->sb;
			blobs[r].len = bg->sb;
		}
		bg->cm.blobs = blobs;
		bg->cm.nblobs = t->cfg->world;
		m = *t->model;
		m.params = bg->params;
		if (train_ckpt_write(t, &m, &bg->opt, &bg->cm, err,
		    sizeof err) != 0) {
			train_event(t, EV_CHECKPOINT, "%s", err);
		}
		free(blobs);
	}
	bg_free(bg);
}

int
train_ckpt_bg_start(struct trainer *t, char *err, size_t errlen)
{
	const struct job_spec *job = t->job;
	struct ckpt_bg	*bg;
	size_t		 sb, n = t->model->n_params;
	int		 world = t->cfg->world;

	if (!job->checkpoint.background || t->comp == NULL || t->zero ||
	    world < 2 || world > CKPT_BG_RANKS || t->gpu != NULL ||
	    t->hooks->xfer_start == NULL || t->hooks->xfer_wait == NULL)
		return 0;
	sb = compressor_state_bytes(t->comp);
	if (sb == 0 || bg_bytes(t, sb) > CKPT_BG_MAX)
		return 0;
	if (t->bg != NULL && train_ckpt_bg_finish(t, err, errlen) != 0)
		return -1;
	bg = xcalloc(1, sizeof *bg);
	bg->cm = train_ckpt_meta(t);
	bg->prev_ckpt = t->last_ckpt;
	bg->sb = sb;
	bg->states = xmalloc(t->cfg->rank == 0 ? sb * (size_t)world : sb);
	compressor_state_save(t->comp, bg->states);
	if (t->cfg->rank == 0) {
		bg->params = xmalloc(n * sizeof *bg->params);
		memcpy(bg->params, t->model->params, n * sizeof *bg->params);
		bg->opt = *t->opt;
		bg->opt.m = xmalloc(t->opt->n * sizeof *bg->opt.m);
		memcpy(bg->opt.m, t->opt->m, t->opt->n * sizeof *bg->opt.m);
		if (t->opt->v != NULL) {
			bg->opt.v = xmalloc(t->opt->n * sizeof *bg->opt.v);
			memcpy(bg->opt.v, t->opt->v, t->opt->n *
			    sizeof *bg->opt.v);
		}
	}
	bg->chunk = CKPT_BG_FIRST;
	t->bg = bg;
	t->last_ckpt = t->step;
	if (bg_post(t, err, errlen) != 0) {
		train_ckpt_bg_drop(t);
		return -1;
	}
	return 1;
}

int
train_ckpt_bg_wait(struct trainer *t, char *err, size_t errlen)
{
	struct ckpt_bg	*bg = t->bg;
	double		 at;

	if (bg == NULL)
		return 0;
	at = clock_mono();
	if (bg_wait_all(t, err, errlen) != 0)
		return -1;
	at = clock_mono() - at;
	train_prof_add(t, TP_CKPT_BG, at);
	t->model->grads[t->model->n_params + TRAIN_X_CKPT_LATE] =
	    at > CKPT_BG_LATE;
	return 0;
}

int
train_ckpt_bg_next(struct trainer *t, char *err, size_t errlen)
{
	struct ckpt_bg	*bg = t->bg;
	size_t		 next;

	if (bg == NULL)
		return 0;
	bg->off += bg->chunk;
	if (bg->off >= bg->sb) {
		bg_complete(t);
		return 0;
	}
	next = t->model->grads[t->model->n_params + TRAIN_X_CKPT_LATE] > 0 ?
	    bg->chunk / 2 : bg->chunk * 2;
	bg->chunk = next < CKPT_BG_MIN ? CKPT_BG_MIN : next;
	if (bg_post(t, err, errlen) != 0) {
		train_ckpt_bg_drop(t);
		return -1;
	}
	return 0;
}

int
train_ckpt_bg_finish(struct trainer *t, char *err, size_t errlen)
{
	struct ckpt_bg	*bg = t->bg;

	if (bg == NULL)
		return 0;
	if (bg_wait_all(t, err, errlen) != 0) {
		train_ckpt_bg_drop(t);
		return -1;
	}
	bg->off += bg->chunk;
	if (bg->off < bg->sb) {
		bg->chunk = bg->sb - bg->off;
		if (bg_post(t, err, errlen) != 0 ||
		    bg_wait_all(t, err, errlen) != 0) {
			train_ckpt_bg_drop(t);
			return -1;
		}
		bg->off = bg->sb;
	}
	bg_complete(t);
	return 0;
}

void
train_ckpt_bg_drop(struct trainer *t)
{
	struct ckpt_bg	*bg = t->bg;
	char		 why[512];

	if (bg == NULL)
		return;
	(void)bg_wait_all(t, why, sizeof why);
	/* Never written: the newest on disk is the one before. */
	if (t->last_ckpt == bg->cm.step)
		t->last_ckpt = bg->prev_ckpt;
	t->bg = NULL;
	bg_free(bg);
}
