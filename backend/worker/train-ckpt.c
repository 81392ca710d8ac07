/*
 * train-ckpt.c: the train loop's checkpoints (see train-internal.h).
 * Rank 0 writes; with compression every rank's compressor state is
 * gathered first, since the residuals differ per rank and a bit-identical
 * resume needs them all.  On a resume rank 0 reads the newest valid
 * checkpoint and every rank then takes rank 0's weights, optimizer state,
 * position and micro-batch, and its own compressor state.  With ZeRO-1
 * the optimizer's shards are gathered to rank 0 for a checkpoint and
 * handed out again from it on a resume (train-zero.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xmalloc.h"
#include "backend/worker/train-internal.h"

/* Each rank's compressor state, gathered to every rank: the residuals
 * differ per rank and a bit-identical resume needs them all.  NULL with
 * no compression. */
static uint8_t *
train_gather_compressor(struct trainer *t, size_t *each, char *err,
    size_t errlen)
{
	int	 world = t->cfg->world;
	size_t	*lens, sb;
	uint8_t	*mine, *all;

	if (t->comp == NULL)
		return NULL;
	sb = compressor_state_bytes(t->comp);
	mine = xmalloc(sb);
	all = xmalloc(sb * (size_t)world);
	lens = xcalloc((size_t)world, sizeof *lens);
	for (int r = 0; r < world; r++)
		lens[r] = sb;
	compressor_state_save(t->comp, mine);
	if (t->hooks->allgatherv(t->hooks->ctx, mine, all, lens, err,
	    errlen) != 0) {
		free(all);
		all = NULL;
	}
	free(mine);
	free(lens);
	*each = sb;
	return all;
}

struct ckpt_meta
train_ckpt_meta(const struct trainer *t)
{
	/* The loader position after the last step of an epoch is the
	 * start of the next one. */
	int		 rollover = t->step_in_epoch == t->epoch_steps;
	struct ckpt_meta cm = {
		.step = t->step, .epoch = t->epoch + rollover,
		.step_in_epoch = rollover ? 0 : t->step_in_epoch,
		.skew = rollover ? 0 : t->skew,
		.seed = t->job->train.seed,
		.world = t->cfg->world, .micro = t->micro, .accum = t->accum,
		.global = t->job->train.batch.global, .samples = train_data_samples(t),
		.run = t->cfg->run,
	};

	snprintf(cm.job, sizeof cm.job, "%s", t->job->name);
	return cm;
}

int
train_ckpt_write(struct trainer *t, const struct model *m,
    const struct optimizer *o, struct ckpt_meta *cm, char *err,
    size_t errlen)
{
	char	 path[4096];
	double	 at = train_prof_mark(t, TP_CKPT_WRITE, 0);

	if (checkpoint_write(t->cfg->checkpoint_dir, t->job->checkpoint.keep,
	    m, o, cm, path, sizeof path, err, errlen) != 0)
		return -1;
	train_prof_mark(t, TP_CKPT_WRITE, at);
	snprintf(t->last_path, sizeof t->last_path, "%s", path);
	train_event(t, EV_CHECKPOINT, "step %ld: %s", cm->step, t->last_path);
	return train_data_config(t, t->cfg->checkpoint_dir, err, errlen);
}

/*
 * Write a checkpoint of this step (rank 0 writes; every rank takes part
 * when `collective`, since the compressor state is gathered).  Every rank
 * reaches the same decision, so the gather never waits for a rank that
 * skips it.  One in the background goes first: finished with the group,
 * dropped without it.
 */
int
train_checkpoint(struct trainer *t, char *err, size_t errlen, int collective)
{
	struct ckpt_meta cm;
	struct ckpt_blob *blobs = NULL;
	struct optimizer *full = NULL;
	uint8_t		*states = NULL;
	size_t		 each = 0;
	int		 rc;
	double		 at;

	if (t->bg != NULL && !collective)
		train_ckpt_bg_drop(t);
	else if (t->bg != NULL && train_ckpt_bg_finish(t, err, errlen) != 0)
		return -1;
	if (t->cfg->checkpoint_dir == NULL || *t->cfg->checkpoint_dir == '\0' ||
	    t->last_ckpt == t->step)
		return 0;
	t->last_ckpt = t->step;
	cm = train_ckpt_meta(t);
	at = train_prof_mark(t, TP_CKPT_GATHER, 0);
	if (collective && t->comp != NULL &&
	    (states = train_gather_compressor(t, &each, err, errlen)) == NULL)
		return -1;
	if (t->zero) {
		if (!collective) {
			snprintf(err, errlen, "no checkpoint at step %ld: the "
			    "optimizer's shards (train.zero) are on the ranks "
			    "of the group that failed", t->step);
			return -1;
		}
		full = t->cfg->rank == 0 ? train_zero_full(t) : NULL;
		if (train_zero_gather(t, full, err, errlen) != 0) {
			optimizer_free(full);
			return -1;
		}
	}
	if (collective && (t->comp != NULL || t->zero))
		train_prof_mark(t, TP_CKPT_GATHER, at);
	if (t->cfg->rank != 0) {
		free(states);
		return 0;
	}
	if (states != NULL) {
		blobs = xcalloc((size_t)t->cfg->world, sizeof *blobs);
		for (int r = 0; r < t->cfg->world; r++) {
			snprintf(blobs[r].name, sizeof blobs[r].name,
			    "compressor.rank%d", r);
			blobs[r].data = states + (size_t)r * each;
			blobs[r].len = each;
		}
		cm.blobs = blobs;
		cm.nblobs = t->cfg->world;
	}
	rc = train_ckpt_write(t, t->model, full != NULL ? full : t->opt, &cm,
	    err, errlen);
	free(blobs);
	free(states);
	optimizer_free(full);
	return rc;
}

int
train_checkpoint_every(struct trainer *t, char *err, size_t errlen)
{
	int	 rc;

	if (t->cfg->checkpoint_dir == NULL || *t->cfg->checkpoint_dir == '\0' ||
	    t->last_ckpt == t->step)
		return 0;
	if ((rc = train_ckpt_bg_start(t, err, errlen)) != 0)
		return rc < 0 ? -1 : 0;
	return train_checkpoint(t, err, errlen, 1);
}

static void
train_skipped(void *ctx, const char *path, const char *what)
{
	train_event(ctx, EV_CHECKPOINT, "skipping %s", what);
	(void)path;
}

/*
 * Give every rank its compressor state from the checkpoint rank 0
 * resumed from.  Written by a group of the same size, each rank takes its
 * own.  Written by another (a resize), the residuals are folded: rank r
 * of the new group takes the sum of the old ranks r, r + world, r +
 * 2 world ..., so what the old group had not yet sent is neither lost nor
 * counted twice (the sum over ranks is what the exchange adds); a rank
 * with no old rank of its own starts from zero (docs/scheduling.md,
 * "A resize").
 */
static int
train_share_compressor(struct trainer *t, char *err, size_t errlen)
{
	const struct train_hooks *h = t->hooks;
	const struct ckpt_meta *cm = &t->resumed;
	int		 world = t->cfg->world;
	size_t		 sb = compressor_state_bytes(t->comp);
	int64_t		 have = cm->nblobs;
	uint8_t		*all;
	int		 rc = 0, rank = t->cfg->rank;

	for (int r = 0; have > 0 && r < cm->nblobs; r++)
		have = cm->blobs[r].len == sb ? have : 0;
	/* One rank: nothing to hand out, its own blobs are all there is. */
	if (h->broadcast != NULL && world > 1 &&
	    h->broadcast(h->ctx, &have, sizeof have, err, errlen) != 0)
		return -1;
	if (have == 0)
		return 0;
	if (have != world && rank == 0)
		train_event(t, EV_RESTARTED, "compressor state saved for %lld "
		    "ranks, now %d: the residuals are folded, rank r taking "
		    "the old ranks r, r + %d, ...", (long long)have, world, world);
	all = xmalloc(sb * (size_t)have);
	for (int r = 0; r < have && rank == 0; r++)
		memcpy(all + (size_t)r * sb, cm->blobs[r].data, sb);
	if (h->broadcast != NULL && world > 1 &&
	    h->broadcast(h->ctx, all, sb * (size_t)have, err, errlen) != 0) {
		free(all);
		return -1;
	}
	if (rank < have)
		rc = compressor_state_load(t->comp, all + (size_t)rank * sb, sb);
	for (int64_t r = rank + world; rc == 0 && r < have; r += world)
		rc = compressor_state_fold(t->comp, all + (size_t)r * sb, sb);
	if (rc != 0)
		snprintf(err, errlen, "the checkpoint's compressor state does not "
		    "fit this job's compression settings");
	free(all);
	return rc;
}

/* Give every rank rank 0's weights, optimizer state and position: the
 * initial weights, or what rank 0 resumed from. */
static int
train_share_state(struct trainer *t, char *err, size_t errlen)
{
	const struct train_hooks *h = t->hooks;
	size_t		 bytes = t->model->n_params * sizeof(float);
	int64_t		 pos[6] = { t->step, t->epoch, t->step_in_epoch,
	    t->opt->t, t->resumed.micro, t->skew };

	if (h->broadcast == NULL || t->cfg->world == 1) {
		t->tuned_micro = t->resumed.micro;
		t->epoch_steps = data_epoch_steps(train_epoch_samples(t),
		    t->job->train.batch.global, t->skew);
		return t->comp != NULL ? train_share_compressor(t, err, errlen) :
		    0;
	}
	if (h->broadcast(h->ctx, pos, sizeof pos, err, errlen) != 0 ||
	    h->broadcast(h->ctx, t->model->params, bytes, err, errlen) != 0)
		return -1;
	if (t->zero) {
		if (train_zero_scatter(t, err, errlen) != 0)
			return -1;
	} else if (h->broadcast(h->ctx, t->opt->m, bytes, err, errlen) != 0 ||
	    (t->opt->v != NULL &&
	    h->broadcast(h->ctx, t->opt->v, bytes, err, errlen) != 0))
		return -1;
	t->step = pos[0];
	t->epoch = (int)pos[1];
	t->step_in_epoch = pos[2];
	t->opt->t = pos[3];
	t->tuned_micro = (int)pos[4];
	t->skew = pos[5];
	t->epoch_steps = data_epoch_steps(train_epoch_samples(t),
	    t->job->train.batch.global, t->skew);
	t->last_ckpt = t->step;
	return t->comp != NULL ? train_share_compressor(t, err, errlen) : 0;
}

/*
 * Whether the checkpoint rank 0 loaded fits this job: written by this job
 * with its seed, global batch and training set (the model's shape the
 * load has checked), at a position inside the job: a step of an epoch
 * that has that many steps, an epoch the job has, a step count that is
 * that position, and Adam's count at it.  Otherwise err names the field
 * and both values.  World, micro-batch and accumulation may differ: the
 * order of the samples does not depend on them, and the micro-batch is
 * tuned afresh when the resumed one does not divide the rank's share.
 */
static int
train_resume_fits(const struct trainer *t, const struct ckpt_meta *cm,
    const char *path, char *err, size_t errlen)
{
	const struct job_spec *job = t->job;
	/* An adaptive batch resumes at another by samples (train_resume):
	 * its position is checked at the checkpoint's own batch, and Adam's
	 * count is the updates made, not a step of one batch. */
	int		 adaptive = job->train.batch.adaptive;
	int		 global = adaptive ? cm->global : job->train.batch.global;
	long		 n = train_epoch_samples(t);
	long		 spe = data_epoch_steps(n, global, 0);
	long		 steps = data_epoch_steps(n, global, cm->skew);
	long long	 want[3] = { job->train.batch.global, train_data_samples(t),
	    job->train.epochs };
	long long	 have[3] = { cm->global, cm->samples, cm->epoch };
	static const char *const what[3] = { "train.batch.global",
	    "the training set's samples", "epoch" };

	if (adaptive && (cm->global < job->train.batch.global_min ||
	    cm->global > job->train.batch.global_max)) {
		snprintf(err, errlen, "%s does not fit this job: its global "
		    "batch %d is outside train.batch.global [%d, %d]", path,
		    cm->global, job->train.batch.global_min,
		    job->train.batch.global_max);
		return -1;
	}
	want[0] = global;

	if (strcmp(cm->job, job->name) != 0) {
		snprintf(err, errlen, "%s does not fit this job: it is job "
		    "'%s''s, this is '%s'", path, cm->job, job->name);
		return -1;
	}
	if (cm->seed != job->train.seed) {
		snprintf(err, errlen, "%s does not fit this job: train.seed is "
		    "%llu in the checkpoint, %llu in the job", path,
		    (unsigned long long)cm->seed,
		    (unsigned long long)job->train.seed);
		return -1;
	}
	for (int i = 0; i < 2; i++) {
		if (have[i] != want[i]) {
			snprintf(err, errlen, "%s does not fit this job: %s is "
			    "%lld in the checkpoint, %lld in the job", path,
			    what[i], have[i], want[i]);
			return -1;
		}
	}
	if (have[2] > want[2] || (have[2] == want[2] && cm->step_in_epoch > 0)) {
		snprintf(err, errlen, "%s does not fit this job: it is at epoch "
		    "%d step %ld, past the job's %d epochs", path, cm->epoch + 1,
		    cm->step_in_epoch, job->train.epochs);
		return -1;
	}
	if (cm->step_in_epoch >= steps || cm->skew >= global) {
		char	 skew[48] = "";

		if (cm->skew > 0)
			snprintf(skew, sizeof skew, " (after a skew of %ld)",
			    cm->skew);
		snprintf(err, errlen, "%s does not fit this job: step_in_epoch is "
		    "%ld in the checkpoint%s, and an epoch of the job has %ld "
		    "steps", path, cm->step_in_epoch, skew, steps);
		return -1;
	}
	if (cm->step != cm->epoch * spe + cm->step_in_epoch + spe - steps ||
	    (!adaptive && t->opt->t != 0 && t->opt->t != cm->step)) {
		snprintf(err, errlen, "%s does not fit this job: step is %ld "
		    "(adam_t %ld) in the checkpoint, epoch %d x %ld steps + %ld "
		    "in the job", path, cm->step, t->opt->t, cm->epoch, spe,
		    cm->step_in_epoch);
		return -1;
	}
	return 0;
}

/* An adaptive batch resumed at another: the same sample offset in the
 * epoch, the step recomputed for the new batch (data_resume_pos). */
static void
train_resume_batch(struct trainer *t, const struct ckpt_meta *cm)
{
	struct data_pos	 p;
	long		 seen = cm->skew + cm->step_in_epoch * (long)cm->global;

	data_resume_pos(train_epoch_samples(t), t->job->train.batch.global,
	    cm->epoch, seen, &p);
	t->epoch = p.epoch;
	t->step_in_epoch = p.step_in_epoch;
	t->skew = p.skew;
	t->step = p.step;
	train_event(t, EV_RESTARTED, "global batch %d -> %d: %ld samples of "
	    "epoch %d seen, resuming at its step %ld (skew %ld), step %ld",
	    cm->global, t->job->train.batch.global, seen, cm->epoch + 1,
	    p.step_in_epoch, p.skew, p.step);
}

/* Rank 0 resumes from the newest valid checkpoint, if asked; then every
 * rank gets rank 0's state.  A checkpoint that does not fit the job fails
 * the rank before its first step, and the checkpoints stay as they are. */
int
train_resume(struct trainer *t, char *err, size_t errlen)
{
	struct ckpt_meta cm;
	char		 path[4096];
	int		 rc;

	/* What a killed run of the job was writing is of no use now. */
	if (t->cfg->rank == 0 && t->cfg->checkpoint_dir != NULL &&
	    *t->cfg->checkpoint_dir != '\0' && (rc = checkpoint_clean(
	    t->cfg->checkpoint_dir, t->job->name, t->cfg->run)) > 0)
		train_event(t, EV_CHECKPOINT, "removed %d temporary file%s an "
		    "earlier run of %s left in %s", rc, rc == 1 ? "" : "s",
		    t->job->name, t->cfg->checkpoint_dir);
	if (!t->cfg->resume || t->cfg->rank != 0)
		return train_share_state(t, err, errlen);
	/* ZeRO-1: the whole state, handed out in train_share_state. */
	if (t->zero)
		t->full = train_zero_full(t);
	rc = checkpoint_resume(t->cfg->checkpoint_dir, t->job->name,
	    t->model, t->full != NULL ? t->full : t->opt, &cm, path,
	    sizeof path, train_skipped, t, err, errlen);
	if (t->full != NULL)
		t->opt->t = t->full->t;
	if (rc != 0 && t->full != NULL) {
		optimizer_free(t->full);
		t->full = NULL;
	}
	if (rc < 0)
		return -1;
	if (rc == 1) {
		train_event(t, EV_RESTARTED, "no checkpoint in %s; starting "
		    "from step 0", t->cfg->checkpoint_dir);
		return train_share_state(t, err, errlen);
	}
	if (train_resume_fits(t, &cm, path, err, errlen) != 0) {
		checkpoint_meta_free(&cm);
		return -1;
	}
	t->resumed = cm;		/* keeps the compressor blobs */
	t->step = cm.step;
	t->epoch = cm.epoch;
	t->step_in_epoch = cm.step_in_epoch;
	t->skew = cm.skew;
	snprintf(t->last_path, sizeof t->last_path, "%s", path);
	train_event(t, EV_RESTARTED, "resumed from %s at step %ld (epoch %d)",
	    path, cm.step, cm.epoch + 1);
	if (cm.global != t->job->train.batch.global)
		train_resume_batch(t, &cm);
	t->last_ckpt = t->step;
	return train_share_state(t, err, errlen);
}

/* A step failed (a peer died mid-exchange): the parameters and the
 * optimizer are still those after t->step steps, so rank 0 saves them;
 * the failover then loses no step. */
void
train_rescue(struct trainer *t)
{
	char	 err[512];

	if (t->cfg->rank != 0 || t->step == t->last_ckpt)
		return;
	if (t->zero) {
		train_event(t, EV_CHECKPOINT, "no rescue checkpoint at step %ld: "
		    "the optimizer's shards (train.zero) went with the group",
		    t->step);
		return;
	}
	/* No gather now: the group is gone, so the compressor state is not
	 * saved and a resume from here starts it afresh. */
	if (train_checkpoint(t, err, sizeof err, 0) == 0)
		train_event(t, EV_CHECKPOINT, "saved step %ld after the group "
		    "failed", t->step);
}
