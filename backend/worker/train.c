/*
 * train.c: the train loop of one rank.
 *
 * A step is accum micro-batches, each forward and backward into one
 * gradient buffer scaled by 1/global, then (with more than one rank) a
 * sum across ranks, then one optimizer update.  The samples a step sees
 * depend only on the seed and the global batch, so a resumed run, or one
 * with another world size, walks the same order.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <math.h>

#include <zlib.h>

#include "lib/clock.h"
#include "lib/xmalloc.h"
#include "backend/worker/train-internal.h"

void
train_event(struct trainer *t, enum event_kind kind, const char *fmt, ...)
{
	char	 reason[1024];
	va_list	 ap;

	if (t->hooks->on_event == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof reason, fmt, ap);
	va_end(ap);
	t->hooks->on_event(t->hooks->ctx, kind, reason);
}

/* The exchange this rank's steps go through, for the started event: the
 * effective method and density, since the job file may not say them. */
static const char *
train_exchange_said(const struct trainer *t, char *buf, size_t size)
{
	enum spec_compress	 m = t->job->compression.method;
	int			 epochs = t->job->compression.warmup_epochs;
	int			 steps = t->job->compression.warmup_steps;

	if (t->cfg->world < 2)
		snprintf(buf, size, "no exchange (1 rank)");
	else if (t->comp == NULL)
		snprintf(buf, size, "dense exchange (compression none)");
	else if (m == COMPRESS_FP16)
		snprintf(buf, size, "compression fp16");
	else {
		char	 warm[96] = "no warm-up";

		if (epochs > 0 || steps > 0)
			snprintf(warm, sizeof warm, "warming up from %g over "
			    "%.0d%s%s%.0d%s", t->job->compression.warmup_density,
			    epochs, epochs == 0 ? "" : epochs == 1 ? " epoch" :
			    " epochs", epochs > 0 && steps > 0 ? " or " : "",
			    steps, steps > 0 ? " steps" : "");
		snprintf(buf, size, "compression %s at density %g (%s)",
		    spec_compress_name(m), t->job->compression.density, warm);
	}
	return buf;
}

/* A cuda rank computes its micro-batches on the device; the host model
 * keeps the parameters of record (model-gpu.h). */
static int
train_setup_gpu(struct trainer *t, char *err, size_t errlen)
{
	char	 why[512];
	int	 oom;

	if ((t->gpu = model_gpu_create(t->model, t->micro, &oom, why,
	    sizeof why)) == NULL) {
		snprintf(err, errlen, "%s%s", oom ? "the device is out of "
		    "memory: " : "", why);
		return -1;
	}
	return model_gpu_set_params(t->gpu, t->model->params, err, errlen);
}

/* Load data, build the model and optimizer, resume if asked, and settle
 * the micro-batch (tuning it when the job says auto). */
static int
train_setup(struct trainer *t, char *err, size_t errlen)
{
	const struct job_spec *job = t->job;
	int		 world = t->cfg->world;
	int		 per_rank = job->train.batch.global / world;

	adascale_init(&t->ada);
	t->micro = job->train.batch.micro;	/* 0: auto, settled below */
	if (job->train.batch.global % world != 0 ||
	    (t->micro > 0 && per_rank % t->micro != 0)) {
		snprintf(err, errlen, "global batch %d is not a multiple of "
		    "%d ranks x micro-batch %d", job->train.batch.global, world,
		    t->micro);
		return -1;
	}
	if (train_data_open(t, err, errlen) != 0)
		return -1;
	t->total_steps = t->steps_per_epoch * job->train.epochs;
	t->epoch_steps = t->steps_per_epoch;
	/* Images evaluate EVAL_BATCH at a time; a token model's windows are
	 * far larger, and it evaluates a micro-batch at a time. */
	t->model = train_data_model(t, t->T > 0 ? (t->micro > 0 ? t->micro :
	    1) : t->micro > EVAL_BATCH ? t->micro : EVAL_BATCH);
	if (t->model == NULL) {
		snprintf(err, errlen, "no model type %d", job->model.type);
		return -1;
	}
	train_zero_setup(t);
	t->last_ckpt = -1;
	train_exchange_setup(t);
	train_overlap_setup(t);
	if (train_resume(t, err, errlen) != 0)
		return -1;
	if (t->micro == 0 && train_autotune(t, per_rank, err, errlen) != 0)
		return -1;
	t->accum = per_rank / t->micro;
	if (job->resources.device == DEVICE_CUDA)
		return train_setup_gpu(t, err, errlen);
	if (t->micro > t->model->max_batch)
		model_set_max_batch(t->model, t->micro);
	return 0;
}

/* The faults a test asks for (--inject), after the step they follow;
 * slow=MS sleeps inside the step's compute instead (train_step). */
static void
train_inject(struct trainer *t)
{
	const struct train_config *c = t->cfg;

	if (c->leak_bytes > 0) {
		t->leaks = xreallocarray(t->leaks, (size_t)t->nleaks + 1,
		    sizeof *t->leaks);
		t->leaks[t->nleaks] = xmalloc((size_t)c->leak_bytes);
		memset(t->leaks[t->nleaks++], 0xa5, (size_t)c->leak_bytes);
	}
	if (c->crash_at > 0 && t->step == c->crash_at) {
		fprintf(stderr, "injected crash at step %ld\n", t->step);
		abort();
	}
}

/* Act on the controls every rank agreed on at this step. */
static int
train_control(struct trainer *t, unsigned agreed, char *err, size_t errlen)
{
	const struct train_hooks *h = t->hooks;

	if (agreed == 0)
		return 0;
	if (h->agreed != NULL)
		h->agreed(h->ctx, agreed);
	if (agreed & (1u << CTL_CHECKPOINT)) {
		t->last_ckpt = -1;	/* write even if one exists for this step */
		if (train_checkpoint(t, err, errlen, 1) != 0)
			train_event(t, EV_CHECKPOINT, "%s", err);
	}
	if (agreed & (1u << CTL_STOP))
		t->stop = 1;
	else if ((agreed & (1u << CTL_PAUSE)) && h->paused != NULL &&
	    h->paused(h->ctx))
		t->stop = 1;
	return 0;
}

/* The control floats after the gradient: this rank's share of the loss,
 * its requests and, for the adaptive schedule, |g_b|^2 of its own mean
 * gradient (the noise scale's). */
static void
train_controls(struct trainer *t, double loss)
{
	const struct train_hooks *h = t->hooks;
	float		*x = t->model->grads + t->model->n_params;
	unsigned	 req = h->requests != NULL ? h->requests(h->ctx) : 0;

	x[0] = (float)loss;
	for (int c = 0; c < CTL_COUNT; c++)
		x[1 + c] = (req >> c) & 1;
	if (t->job->train.lr.schedule == SCHEDULE_ADAPTIVE)
		x[1 + CTL_COUNT] = (float)(train_sumsq(t->model->grads,
		    t->model->n_params) * t->cfg->world * t->cfg->world);
}

/*
 * What a step measured, as the rank's metrics carry it (metrics.h),
 * for the on_step hook.  Unknown is left out, never a number that looks
 * like one: a step's dense bytes, the noise scale before AdaScale has
 * one, a gradient norm without clipping, the compression on one rank.
 */
static void
train_step_report(struct trainer *t, struct rank_report *r, double t0,
    double t1, double t2, double wait, uint64_t sent)
{
	r->step = t->step;
	r->epoch = t->epoch;
	r->step_ms = (clock_mono() - t0) * 1e3;
	r->data_wait_ms = wait * 1e3;
	r->compute_ms = (t1 - t0) * 1e3 - r->data_wait_ms;
	r->comm_ms = (t2 - t1) * 1e3;
	r->bytes_sent = (long)sent;
	r->bytes_sent_total = (long)t->bytes_sent;
	r->bytes_dense_total = (long)t->bytes_dense;
	r->optimizer_bytes = (long)optimizer_bytes(t->opt);
	r->density = t->comp != NULL ? compressor_density(t->comp) : 1;
	r->micro_batch = t->micro;
	r->accum = t->accum;
	r->global_batch = t->job->train.batch.global;
	r->valid |= RM_BIT(STEP) | RM_BIT(EPOCH) | RM_BIT(LOSS) | RM_BIT(LR) |
	    RM_BIT(STEP_MS) | RM_BIT(COMPUTE_MS) | RM_BIT(COMM_MS) |
	    RM_BIT(DATA_WAIT_MS) | RM_BIT(BYTES_SENT) |
	    RM_BIT(BYTES_SENT_TOTAL) | RM_BIT(BYTES_DENSE_TOTAL) |
	    RM_BIT(OPTIMIZER_BYTES) | RM_BIT(DENSITY) | RM_BIT(MICRO_BATCH) |
	    RM_BIT(ACCUM) | RM_BIT(LR_GAIN) | RM_BIT(GLOBAL_BATCH);
	if (r->step_ms > 0) {
		r->samples_per_s = 1000.0 * t->job->train.batch.global /
		    r->step_ms;
		r->valid |= RM_BIT(SAMPLES_PER_S);
		if (t->T > 0) {
			r->tokens_per_s = r->samples_per_s * t->T;
			r->valid |= RM_BIT(TOKENS_PER_S);
		}
	}
	if (t->bytes_sent > 0) {	/* nothing is exchanged on one rank */
		r->compression_ratio = (double)t->bytes_dense /
		    (double)t->bytes_sent;
		r->valid |= RM_BIT(COMPRESSION);
	}
	if (r->grad_norm > 0)
		r->valid |= RM_BIT(GRAD_NORM);
	t->hooks->on_step(t->hooks->ctx, r);
}

/* One optimizer step: accum micro-batches, the exchange, the update.
 * The loss, one float per control (stop, pause, checkpoint), with
 * lr.schedule: adaptive the local gradient's squared norm, and with a
 * checkpoint in the background this rank's vote on its next chunk
 * (train-ckpt-bg.c) ride in the MODEL_GRAD_EXTRA floats after the
 * gradients (train_controls, the exchange), so every
 * rank learns the global loss and agrees on the controls at the same
 * step.  With train.overlap the floats are set before the last
 * backward, and the exchange runs during it (train-overlap.c). */
static int
train_step(struct trainer *t, double *loss, double *wait, char *err,
    size_t errlen)
{
	const struct train_hooks *h = t->hooks;
	struct model	*m = t->model;
	size_t		 n = m->n_params;
	float		 scale = 1.0f / ((float)t->job->train.batch.global *
			    (t->T > 0 ? (float)t->T : 1.0f));
	double		 t0 = clock_mono(), t1, t2, w0 = *wait, local = 0;
	struct rank_report r = { 0 };
	unsigned	 agreed = 0;
	uint64_t	 sent = 0;
	int		 adaptive = t->job->train.lr.schedule == SCHEDULE_ADAPTIVE;

	memset(m->grads, 0, (n + MODEL_GRAD_EXTRA) * sizeof(float));
	if (t->gpu != NULL && model_gpu_zero_grads(t->gpu, err, errlen) != 0)
		return -1;
	for (int a = 0; a < t->accum; a++) {
		const struct batch *b = loader_next(t->loader, wait);

		if (b == NULL) {
			snprintf(err, errlen, "data loader ended early at "
			    "step %ld", t->step);
			return -1;
		}
		struct model_input in = { .x = b->x, .y = b->y, .tok = b->tok,
		    .tgt = b->tgt };

		train_dump_inputs(t, b);
		if (t->gpu != NULL) {
			if (model_gpu_step(t->gpu, &in, b->n, scale, &local,
			    err, errlen) != 0)
				return -1;
			continue;
		}
		local += model_forward(m, &in, b->n, NULL);
		if (t->ovl != NULL && a == t->accum - 1) {
			train_controls(t, local * scale);
			train_overlap_arm(t);
		}
		model_backward(m, &in, b->n, scale);
		if (t->cfg->slow_sample_us > 0) {	/* --inject slow-sample */
			long us = (long)t->cfg->slow_sample_us * b->n;

			nanosleep(&(struct timespec){ us / 1000000,
			    (us % 1000000) * 1000L }, NULL);
		}
	}
	if (t->gpu != NULL && model_gpu_get_grads(t->gpu, m->grads, err,
	    errlen) != 0)
		return -1;
	if (t->cfg->slow_ms > 0)	/* --inject slow: a slow device */
		nanosleep(&(struct timespec){ t->cfg->slow_ms / 1000,
		    (t->cfg->slow_ms % 1000) * 1000000L }, NULL);
	if (t->ovl == NULL)
		train_controls(t, local * scale);
	t1 = clock_mono();
	train_prof_add(t, TP_DATA, *wait - w0);
	train_prof_add(t, TP_COMPUTE, t1 - t0 - (*wait - w0));
	if (train_exchange(t, &sent, err, errlen) != 0)
		return -1;
	t2 = clock_mono();
	for (int c = 0; c < CTL_COUNT; c++)
		agreed |= (m->grads[n + 1 + c] > 0) << c;
	r.loss = m->grads[n];
	*loss += r.loss;
	r.lr = lr_at(t->job, t->step, t->total_steps);
	r.lr_gain = 1;
	if (adaptive) {
		double	 s;

		if (train_grad_sumsq(t, &s, err, errlen) != 0)
			return -1;
		r.lr_gain = adascale_update(&t->ada, m->grads[n + 1 + CTL_COUNT] /
		    t->cfg->world, s, t->micro * t->accum, t->cfg->world);
		r.noise_scale = t->ada.noise_scale;
		if (r.noise_scale >= 0)
			r.valid |= RM_BIT(NOISE_SCALE);
		r.lr *= r.lr_gain;
	}
	train_dump_grads(t, r.loss, r.lr);
	if (t->job->train.grad_clip > 0 && train_grad_clip(t,
	    t->job->train.grad_clip, &r.grad_norm, err, errlen) != 0)
		return -1;
	if (train_zero_update(t, (float)r.lr, err, errlen) != 0)
		return -1;
	t->step++;
	t->step_in_epoch++;
	train_dump_params(t);
	/* After the count: a rescue checkpoint then saves this step. */
	if (t->gpu != NULL && model_gpu_set_params(t->gpu, m->params, err,
	    errlen) != 0)
		return -1;
	train_prof_mark(t, TP_UPDATE, t2);
	if (h->on_step != NULL)
		train_step_report(t, &r, t0, t1, t2, *wait - w0, sent);
	train_inject(t);
	if (train_ckpt_bg_next(t, err, errlen) != 0)
		return -1;
	return train_control(t, agreed, err, errlen);
}

static void
train_report(struct trainer *t, double loss, double secs, double wait)
{
	struct epoch_report r = { 0 };
	struct train_eval e;

	if (t->cfg->rank != 0 || t->hooks->on_epoch == NULL)
		return;
	train_data_eval(t, &e);
	t->last_eval = e;
	t->last_eval_step = t->step;
	t->has_last_eval = true;
	r.job = t->job->name;
	r.epoch = t->epoch + 1;
	r.epochs = t->job->train.epochs;
	r.step = t->step;
	r.loss = loss / (double)t->steps_per_epoch;
	r.has_acc = e.has_acc;
	r.test_acc = e.acc;
	r.test_loss = e.loss;
	r.tokens = t->T;
	r.samples_per_s = secs > 0 ? t->steps_per_epoch *
	    (double)t->job->train.batch.global / secs : 0;
	r.data_wait_pct = secs > 0 ? 100.0 * wait / secs : 0;
	r.lr = lr_at(t->job, t->step - 1, t->total_steps);
	t->hooks->on_epoch(t->hooks->ctx, &r);
}

/* train.eval_every: rank 0 evaluates between steps (the others wait for
 * it at the next exchange). */
static void
train_eval_every(struct trainer *t)
{
	struct train_eval e;
	int	 every = t->job->train.eval_every;

	if (every <= 0 || t->step % every != 0 || t->cfg->rank != 0 ||
	    t->hooks->on_eval == NULL ||
	    t->step_in_epoch == t->epoch_steps)	/* the epoch's does */
		return;
	train_data_eval(t, &e);
	t->hooks->on_eval(t->hooks->ctx, t->step, &e.loss, e.has_acc ?
	    &e.acc : NULL);
}

/* The rank's own account of how the run ended (summary.h's state). */
static void
train_summary_state(struct train_summary *sum, const char *state)
{
	snprintf(sum->f.state, sizeof sum->f.state, "%s", state);
	sum->f.have |= (uint64_t)1 << SUMMARY_F_state;
}

/* The run's figures into the summary; the bytes are every rank's. */
static int
train_summary_counts(struct trainer *t, struct train_summary *sum,
    long first_step, double train_s, double wait_s, char *err,
    size_t errlen)
{
	const struct train_hooks *h = t->hooks;
	struct job_summary *f = &sum->f;
	uint64_t	 counters[2] = { t->bytes_sent, t->bytes_dense };

	snprintf(f->job, sizeof f->job, "%s", t->job->name);
	f->have |= (uint64_t)1 << SUMMARY_F_job;
	SUMMARY_SET(f, steps, t->step);
	SUMMARY_SET(f, epochs, t->epoch);
	SUMMARY_SET(f, world, t->cfg->world);
	if (train_s > 0) {
		SUMMARY_SET(f, samples_per_s, (t->step - first_step) *
		    (double)t->job->train.batch.global / train_s);
		SUMMARY_SET(f, data_wait_pct, 100.0 * wait_s / train_s);
		if (t->T > 0)
			SUMMARY_SET(f, tokens_per_s, f->samples_per_s * t->T);
	}
	SUMMARY_SET(f, optimizer_bytes, (long long)optimizer_bytes(t->opt));
	if (h->sum_u64 != NULL && t->cfg->world > 1 &&
	    h->sum_u64(h->ctx, counters, 2, err, errlen) != 0)
		return -1;
	SUMMARY_SET(f, bytes_sent, (long long)counters[0]);
	SUMMARY_SET(f, bytes_dense, (long long)counters[1]);
	SUMMARY_SET(f, micro_batch, t->micro);
	SUMMARY_SET(f, accum, t->accum);
	snprintf(f->checkpoint, sizeof f->checkpoint, "%s", t->last_path);
	f->have |= (uint64_t)1 << SUMMARY_F_checkpoint;
	return 0;
}

int
train_run(const struct train_config *cfg, const struct train_hooks *hooks,
    struct train_summary *sum, char *err, size_t errlen)
{
	struct trainer	 t = { .cfg = cfg, .hooks = hooks, .job = cfg->job };
	int		 end_epoch = cfg->job->train.epochs, rc = -1;
	double		 t0 = clock_mono(), train_s = 0, wait_s = 0;
	long		 first_step;
	int		 stopped = 0;
	char		 said[160];
	struct loader_source src;

	memset(sum, 0, sizeof *sum);
	train_summary_state(sum, "failed");
	if (cfg->stop_after_epochs > 0 && cfg->stop_after_epochs < end_epoch)
		end_epoch = cfg->stop_after_epochs;
	train_prof_init(&t);
	if (train_setup(&t, err, errlen) != 0)
		goto out;
	first_step = t.step;
	train_dump_start(&t);
	train_data_source(&t, &src);
	t.loader = loader_start(&src, cfg->job->train.seed,
	    cfg->job->train.batch.global, cfg->world, cfg->rank, t.accum,
	    cfg->data_inline ? 0 : cfg->job->data.prefetch, t.epoch,
	    t.step_in_epoch, end_epoch);
	loader_set_delay_ms(t.loader, cfg->slow_data_ms);
	train_event(&t, EV_STARTED, "%s: %s, %zu parameters, micro-batch %d x "
	    "accum %d x %d ranks, %s%s%.0d%s", cfg->job->name,
	    t.model->type->name, t.model->n_params, t.micro, t.accum,
	    cfg->world, train_exchange_said(&t, said, sizeof said),
	    t.ovl != NULL ? ", the exchange overlapped, buckets: " : "",
	    train_overlap_buckets(&t),	/* %.0d: nothing for 0 */
	    cfg->data_inline || cfg->job->data.prefetch == 0 ? ", batches "
	    "loaded by the rank itself (no prefetch thread)" : "");

	train_summary_state(sum, "finished");
	while (t.epoch < end_epoch && !stopped) {
		double	 loss = 0, wait = 0, e0 = clock_mono(), secs;

		while (t.step_in_epoch < t.epoch_steps && !stopped) {
			if (train_step(&t, &loss, &wait, err, errlen) != 0) {
				train_rescue(&t);
				train_summary_state(sum, "failed");
				goto out;
			}
			train_eval_every(&t);
			if (cfg->job->checkpoint.every_steps > 0 &&
			    t.step % cfg->job->checkpoint.every_steps == 0 &&
			    train_checkpoint_every(&t, err, errlen) != 0)
				train_event(&t, EV_CHECKPOINT, "%s", err);
			stopped = t.stop;
		}
		secs = clock_mono() - e0;
		train_s += secs;
		wait_s += wait;
		if (t.step_in_epoch == t.epoch_steps) {
			train_report(&t, loss, secs, wait);
			t.epoch++;
			t.step_in_epoch = t.skew = 0;
			t.epoch_steps = t.steps_per_epoch;
		}
	}
	if (t.epoch < cfg->job->train.epochs)
		train_summary_state(sum, "stopped");
	/* A checkpoint that cannot be written (a full disk) is reported
	 * and the previous ones stay; the training itself did not fail, but
	 * what it trained is not saved, and the summary says so. */
	if (train_checkpoint(&t, err, errlen, 1) != 0) {
		train_event(&t, EV_CHECKPOINT, "%s", err);
		snprintf(sum->f.checkpoint_error, sizeof sum->f.checkpoint_error,
		    "%s", err);
		sum->f.have |= (uint64_t)1 << SUMMARY_F_checkpoint_error;
	}
	/* The last collective before rank 0 evaluates alone: the others
	 * must not wait on it. */
	if (train_summary_counts(&t, sum, first_step, train_s, wait_s, err,
	    errlen) != 0)
		goto out;
	/* What was not measured is left out: a stopped job is not
	 * evaluated. */
	if (strcmp(sum->f.state, "finished") == 0 && cfg->rank == 0) {
		struct train_eval e = t.last_eval;

		/* The last epoch's, when no step came after it. */
		if (!t.has_last_eval || t.last_eval_step != t.step)
			train_data_eval(&t, &e);
		if (e.has_acc)
			SUMMARY_SET(&sum->f, test_acc, e.acc);
		else {
			SUMMARY_SET(&sum->f, val_loss, e.loss);
			SUMMARY_SET(&sum->f, perplexity, exp(e.loss));
		}
	}
	snprintf(sum->params_crc32, sizeof sum->params_crc32, "%08lx",
	    crc32(crc32(0L, Z_NULL, 0), (const Bytef *)t.model->params,
	    (uInt)(t.model->n_params * sizeof(float))));
	rc = 0;
out:
	train_ckpt_bg_drop(&t);
	SUMMARY_SET(&sum->f, wall_s, clock_mono() - t0);
	train_prof_print(&t);
	loader_stop(t.loader);
	model_gpu_free(t.gpu);
	model_free(t.model);
	train_overlap_free(&t);
	optimizer_free(t.opt);
	optimizer_free(t.full);
	free(t.part);
	compressor_free(t.comp);
	checkpoint_meta_free(&t.resumed);
	free(t.cbuf);
	free(t.call);
	free(t.lens);
	for (long i = 0; i < t.nleaks; i++)
		free(t.leaks[i]);
	free(t.leaks);
	train_data_close(&t);
	return rc;
}
