/*
 * screen-job.c: one job.  A summary box (state, epoch, step, loss,
 * accuracy, throughput; the autotuner's micro-batch and accumulation;
 * compression ratio and bytes per step when the ranks report them;
 * checkpoints), the loss per step and per epoch and the throughput as
 * charts, and the ranks with their node, step times, their processes'
 * CPU (and, on a wide screen, threads and GPU memory: their agent's
 * readings) and a straggler mark for a rank over twice the median step
 * time.  A program job
 * (hunter(1), PROGRAMS) shows its program instead of the compression,
 * and each rank's loss and its own numbers ("extra").  Left and right
 * switch jobs; Enter opens the selected rank's log.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tui/console.h"
#include "tui/draw.h"

enum { P_INFO = 2, P_LOSS, P_EPOCH, P_TPUT, P_RANKS, P_CKPT };

enum rank_field { RF_RANK, RF_NODE, RF_STATUS, RF_STEP, RF_STEP_MS,
	RF_COMM, RF_DATA, RF_SAMPLES, RF_RSS, RF_BEAT, RF_MARK, RF_LOSS,
	RF_EXTRA, RF_CPU, RF_THREADS, RF_GPU_MEM };

/* The process columns (cpu, threads, GPU memory) are its agent's. */
static const struct table_col job_cols_wide[] = {
	{ "rank", 4, true }, { "node", 0, false }, { "status", 8, false },
	{ "step", 8, true }, { "step ms", 8, true }, { "comm ms", 8, true },
	{ "data ms", 8, true }, { "samples/s", 9, true }, { "cpu%", 5, true },
	{ "rss", 10, true }, { "thr", 4, true }, { "gpu mem", 9, true },
	{ "beat", 5, true }, { "", 11, false },
};
static const enum rank_field job_fields_wide[] = { RF_RANK, RF_NODE,
	RF_STATUS, RF_STEP, RF_STEP_MS, RF_COMM, RF_DATA, RF_SAMPLES, RF_CPU,
	RF_RSS, RF_THREADS, RF_GPU_MEM, RF_BEAT, RF_MARK };
static const struct table_col job_cols_narrow[] = {
	{ "rank", 4, true }, { "node", 0, false }, { "status", 8, false },
	{ "step", 8, true }, { "step ms", 8, true }, { "comm ms", 8, true },
	{ "samples/s", 9, true }, { "cpu%", 5, true }, { "", 11, false },
};
static const enum rank_field job_fields_narrow[] = { RF_RANK, RF_NODE,
	RF_STATUS, RF_STEP, RF_STEP_MS, RF_COMM, RF_SAMPLES, RF_CPU, RF_MARK };
static const struct table_col job_cols_program[] = {
	{ "rank", 4, true }, { "node", 8, false }, { "status", 8, false },
	{ "step", 8, true }, { "loss", 8, true }, { "step ms", 8, true },
	{ "samples/s", 9, true }, { "cpu%", 5, true }, { "rss", 10, true },
	{ "beat", 5, true }, { "its own numbers", 0, false },
};
static const enum rank_field job_fields_program[] = { RF_RANK, RF_NODE,
	RF_STATUS, RF_STEP, RF_LOSS, RF_STEP_MS, RF_SAMPLES, RF_CPU, RF_RSS,
	RF_BEAT, RF_EXTRA };

/* The ranks table of a job: its columns, their fields, how many. */
struct job_layout {
	const struct table_col	*cols;
	const enum rank_field	*fields;
	int			 n;
};

struct job_ctx {
	struct console	*c;
	struct job_state *j;
	const enum rank_field *fields;
	double		 median;
};

/* The ranks panel's width: all columns from 129 on, else the main ones. */
static int
job_ranks_w(void)
{
	return COLS >= 120 ? COLS * 2 / 3 : COLS;
}

static bool
job_wide(void)
{
	return job_ranks_w() - 2 >= 129;
}

static void
job_cell(void *ctx, int r, int col, char *buf, size_t len, enum elem *e)
{
	struct job_ctx	*x = ctx;
	struct rank_state *rs = &x->j->ranks[r];
	const struct feed_rank *fr = feed_rank(&x->c->feed, x->j->name, r);
	double		 age = (double)time(NULL) - rs->heartbeat;
	bool		 paused;

	switch (x->fields[col]) {
	case RF_RANK: snprintf(buf, len, "%d", r); break;
	case RF_NODE:
		snprintf(buf, len, "%s", backend_node_at(x->c->b,
		    rs->node)->spec->name);
		break;
	case RF_STATUS:
		paused = (rs->paused || (fr != NULL && fr->paused)) &&
		    rs->phase == RANK_RUNNING;
		snprintf(buf, len, "%s", paused ? "paused" :
		    rank_phase_name(rs->phase));
		*e = rs->phase == RANK_FAILED ? EL_EVENT_ERROR : paused ?
		    EL_PAUSED : rs->phase == RANK_LEFT ? EL_EVENT_WARN : EL_TEXT;
		break;
	case RF_STEP:
		fmt_num(buf, len, fr != NULL, "%.0f", (double)job_rank_step(x->c,
		    x->j, r));
		break;
	case RF_STEP_MS:
		fmt_num(buf, len, fr != NULL, "%.1f", fr ? fr->step_ms : 0);
		break;
	case RF_COMM:
		fmt_num(buf, len, fr != NULL, "%.1f", fr ? fr->comm_ms : 0);
		break;
	case RF_DATA:
		fmt_num(buf, len, fr != NULL, "%.2f", fr ? fr->data_wait_ms : 0);
		break;
	case RF_SAMPLES:
		fmt_si(buf, len, fr != NULL, fr ? fr->samples_per_s : 0);
		break;
	case RF_LOSS:
		fmt_num(buf, len, fr != NULL, "%.4f", fr ? fr->loss : 0);
		break;
	case RF_EXTRA:
		snprintf(buf, len, "%s", fr != NULL ? fr->extra : "");
		break;
	case RF_RSS: fmt_bytes(buf, len, rs->rss > 0, (double)rs->rss); break;
	case RF_CPU:
		fmt_num(buf, len, (rs->known & RM_BIT(PROC_CPU)) && rs->phase ==
		    RANK_RUNNING, "%.0f", rs->proc_cpu);
		break;
	case RF_THREADS:
		fmt_num(buf, len, (rs->known & RM_BIT(THREADS)) && rs->phase ==
		    RANK_RUNNING, "%.0f", (double)rs->threads);
		break;
	case RF_GPU_MEM:
		fmt_bytes(buf, len, (rs->known & RM_BIT(GPU_MEM)) != 0,
		    (double)rs->gpu_mem);
		break;
	case RF_BEAT: fmt_age(buf, len, rs->heartbeat > 0 && rs->phase ==
	    RANK_RUNNING, age); break;
	case RF_MARK:
		if (fr != NULL && x->median > 0 && fr->step_ms > 2 * x->median &&
		    rs->phase == RANK_RUNNING) {
			snprintf(buf, len, "%s straggler", glyphs->mark);
			*e = EL_STRAGGLER;
		}
		break;
	}
}

static double
job_key(void *ctx, int r, int col)
{
	struct job_ctx	*x = ctx;
	const struct feed_rank *fr = feed_rank(&x->c->feed, x->j->name, r);

	switch (x->fields[col]) {
	case RF_RANK: return r;
	case RF_STEP: return fr ? fr->step : -1;
	case RF_STEP_MS: return fr ? fr->step_ms : -1;
	case RF_COMM: return fr ? fr->comm_ms : -1;
	case RF_DATA: return fr ? fr->data_wait_ms : -1;
	case RF_SAMPLES: return fr ? fr->samples_per_s : -1;
	case RF_LOSS: return fr ? fr->loss : -1;
	case RF_RSS: return (double)x->j->ranks[r].rss;
	case RF_CPU: return x->j->ranks[r].known & RM_BIT(PROC_CPU) ?
	    x->j->ranks[r].proc_cpu : -1;
	case RF_THREADS: return (double)x->j->ranks[r].threads;
	case RF_GPU_MEM: return (double)x->j->ranks[r].gpu_mem;
	case RF_BEAT: return x->j->ranks[r].heartbeat;
	default: return 0;
	}
}

static struct job_layout
job_layout(const struct job_state *j)
{
#define NCOLS(a)	((int)(sizeof a / sizeof a[0]))
	if (j != NULL && j->spec.kind == JOB_PROGRAM)
		return (struct job_layout){ job_cols_program, job_fields_program,
		    NCOLS(job_cols_program) };
	if (job_wide())
		return (struct job_layout){ job_cols_wide, job_fields_wide,
		    NCOLS(job_cols_wide) };
	return (struct job_layout){ job_cols_narrow, job_fields_narrow,
	    NCOLS(job_cols_narrow) };
#undef NCOLS
}

static void
job_table(struct console *c, struct job_ctx *x, struct table_model *m)
{
	struct job_layout l = job_layout(x->j);

	*m = (struct table_model){ .cols = l.cols, .ncols = l.n,
	    .nrows = x->j->world, .cell = job_cell, .key = job_key, .ctx = x,
	    .sort_col = c->sort_col[SCR_JOB], .sort_desc = c->sort_desc[SCR_JOB],
	    .filter = c->filter[SCR_JOB], .focused = true };
	x->fields = l.fields;
}

/* What a program job runs, in place of the compression line. */
static void
job_program_line(struct job_state *j, WINDOW *w, int wd, int nck)
{
	char	 argv[256];
	size_t	 off = 0;

	argv[0] = '\0';
	for (int i = 0; i < j->spec.program.argc && off < sizeof argv - 1; i++)
		off += (size_t)snprintf(argv + off, sizeof argv - off, "%s%s",
		    i > 0 ? " " : "", spec_program_str(j->spec.program.argv,
		    j->spec.program.argc, i));
	draw_textf(w, 3, 2, wd - 4, EL_TEXT, "program: %s  stop grace %.0fs  "
	    "checkpoints: %d", argv, j->spec.program.stop_grace_s, nck);
}

static float
job_series_get(const void *ctx, int i)
{
	return series_get(ctx, i);
}

static float
job_epoch_get(const void *ctx, int i)
{
	return (float)json_number_value(json_object_get(json_array_get(ctx,
	    (size_t)i), "loss"));
}

static float
job_val_get(const void *ctx, int i)
{
	return (float)json_number_value(json_object_get(json_array_get(ctx,
	    (size_t)i), "val_loss"));
}

static void
job_chart(struct console *c, int id, int y, int x, int h, int w, uint64_t key,
    const char *title, struct chart_model *m)
{
	WINDOW	*win = console_panel(c, id, y, x, h, w, key);

	if (win == NULL)
		return;
	draw_box(win, title, false);
	widget_draw(W_CHART, win, (struct rect){ 1, 1, h - 2, w - 2 }, m);
}

/* Checkpoint events of the job, newest first, from row y on. */
static int
job_checkpoints(struct console *c, WINDOW *w, int y, int rows, int wd,
    const char *job, bool count_only)
{
	int	 n = 0;

	for (int i = c->feed.len - 1; i >= 0; i--) {
		const struct logline *l = feed_line(&c->feed, i);
		char	 t[16];
		time_t	 s = (time_t)l->t;

		if (strcmp(l->kind, "checkpoint") != 0 || strcmp(l->job, job) != 0)
			continue;
		if (!count_only && n < rows) {
			strftime(t, sizeof t, "%H:%M:%S", localtime(&s));
			draw_textf(w, y + n, 2, wd - 4, EL_TEXT, "%s %s", t,
			    l->text);
		}
		n++;
	}
	return n;
}

static void
job_info_box(struct console *c, struct job_state *j, WINDOW *w, int wd)
{
	struct job_info	 ji;
	char		 step[24], loss[24], acc[24], sps[24], bps[24], ratio[24];
	char		 dens[24], opt[24];
	char		 title[160];
	int		 x = 2, nck;
	long		 ob = 0;

	/* Optimizer state a rank: the largest shard with train.zero. */
	for (int r = 0; r < j->world; r++)
		ob = j->ranks[r].optimizer_bytes > ob ?
		    j->ranks[r].optimizer_bytes : ob;

	nck = job_checkpoints(c, w, 0, 0, wd, j->name, true);
	job_info(c, j, &ji);
	snprintf(title, sizeof title, "job %s", j->name);
	draw_box(w, title, false);
	x += draw_text(w, 1, x, wd - 4, ji.state_e, ji.state);
	if (ji.tokens)		/* a language model: no accuracy */
		draw_textf(w, 1, x, wd - 2 - x, EL_TEXT, "  epoch %d/%d  step "
		    "%s  loss %s  val %s  ppl %s  tokens/s %s  MFU %s",
		    ji.epoch, ji.epochs, fmt_num(step, sizeof step, ji.has_step,
		    "%.0f", (double)ji.step), fmt_num(loss, sizeof loss,
		    ji.has_loss, "%.4f", ji.loss), fmt_num(acc, sizeof acc,
		    ji.has_val, "%.4f", ji.val_loss), fmt_num(ratio, sizeof ratio,
		    ji.has_val, "%.2f", exp(ji.val_loss)), fmt_si(sps, sizeof sps,
		    ji.has_samples, ji.tokens_per_s), fmt_num(dens, sizeof dens,
		    ji.has_mfu, "%.1f%%", 100 * ji.mfu));
	else
		draw_textf(w, 1, x, wd - 2 - x, EL_TEXT, "  epoch %d/%d  step "
		    "%s  loss %s  acc %s  samples/s %s", ji.epoch, ji.epochs,
		    fmt_num(step, sizeof step, ji.has_step, "%.0f",
		    (double)ji.step), fmt_num(loss, sizeof loss, ji.has_loss,
		    "%.4f", ji.loss), fmt_num(acc, sizeof acc, ji.has_acc, "%.4f",
		    ji.acc), fmt_si(sps, sizeof sps, ji.has_samples,
		    ji.samples_per_s));
	x = 2;
	if (ji.has_tune)
		x += draw_textf(w, 2, x, wd - 4, EL_TEXT, "autotune: micro-batch "
		    "%d %s accum %d", ji.micro, glyphs->times, ji.accum);
	else
		x += draw_text(w, 2, x, wd - 4, EL_TEXT_DIM, "autotune: waiting "
		    "for the first step");
	draw_textf(w, 2, x, wd - 2 - x, EL_TEXT, "   ranks %d/%d running, "
	    "generation %d", ji.running, j->world, j->generation);
	if (j->spec.kind == JOB_PROGRAM) {
		job_program_line(j, w, wd, nck);
		return;
	}
	draw_textf(w, 3, 2, wd - 4, EL_TEXT, "compression: %s  density %s  "
	    "ratio %s  bytes/step %s  checkpoints: %d  optimizer %s/rank%s",
	    spec_compress_name(j->spec.compression.method),
	    fmt_num(dens, sizeof dens, ji.has_density, "%.4g", ji.density),
	    fmt_num(ratio, sizeof ratio, ji.has_ratio, "%.1fx", ji.ratio),
	    fmt_bytes(bps, sizeof bps, ji.has_bytes, ji.bytes_step), nck,
	    fmt_bytes(opt, sizeof opt, ob > 0, (double)ob),
	    j->spec.train.zero ? " (ZeRO-1)" : "");
}

static void
job_draw(struct console *c)
{
	struct job_state *j = console_job(c);
	int		 H = console_height(), W = COLS, top = console_top();
	int		 ih = 5, ch = (H - ih) * 2 / 5, bh, rw;
	uint64_t	 key = console_mix(console_mix(c->ui_gen, c->feed.gen_jobs),
			    c->feed.gen_events);
	struct job_ctx	 x = { .c = c, .j = j };
	struct table_model tm;
	struct chart_model cm;
	int		 order[4096], n;
	WINDOW		*w;

	if (j == NULL) {
		if ((w = console_panel(c, P_INFO, top, 0, H, W, key)) != NULL) {
			draw_box(w, "job", false);
			draw_text(w, 1, 2, W - 4, EL_TEXT_DIM, "no job yet: n "
			    "submits one");
		}
		return;
	}
	ch = ch < 6 ? 6 : ch;
	bh = H - ih - ch;
	/* A program's own numbers need the width; its checkpoints are
	 * counted on the program line. */
	rw = j->spec.kind == JOB_PROGRAM ? W : job_ranks_w();
	if ((w = console_panel(c, P_INFO, top, 0, ih, W, key)) != NULL)
		job_info_box(c, j, w, W);
	cm = (struct chart_model){ job_series_get, &j->ranks[0].h_loss,
	    j->ranks[0].h_loss.len, EL_CHART_LINE, "%.4f", "waiting for steps" };
	job_chart(c, P_LOSS, top + ih, 0, ch, W / 2, key, "loss per step", &cm);
	/* A language model's middle chart is its validation loss, at every
	 * train.eval_every; an image model's the loss of each epoch. */
	if (j->spec.data.format != FORMAT_IMAGES && json_array_size(j->evals) > 0)
		cm = (struct chart_model){ job_val_get, j->evals,
		    (int)json_array_size(j->evals), EL_CHART_EPOCH, "%.4f",
		    "no evaluation yet" };
	else
		cm = (struct chart_model){ job_epoch_get, j->epochs,
		    (int)json_array_size(j->epochs), EL_CHART_EPOCH, "%.4f",
		    "no epoch yet" };
	job_chart(c, P_EPOCH, top + ih, W / 2, ch, W / 4, key,
	    cm.get == job_val_get ? "validation loss" : "loss per epoch", &cm);
	cm = (struct chart_model){ job_series_get, &j->ranks[0].h_samples,
	    j->ranks[0].h_samples.len, EL_CHART_LINE, "%.0f", "waiting for steps" };
	job_chart(c, P_TPUT, top + ih, W / 2 + W / 4, ch, W - W / 2 - W / 4, key,
	    j->spec.data.format != FORMAT_IMAGES ? "samples/s (windows)" :
	    "samples/s", &cm);
	x.median = job_median_step_ms(c, j);
	job_table(c, &x, &tm);
	n = table_order(&tm, order, 4096);
	tm.sel = 0;
	for (int i = 0; i < n; i++) {
		if (order[i] == c->rank)
			tm.sel = i;
	}
	if (n > 0)
		c->rank = order[tm.sel];
	w = console_panel(c, P_RANKS, top + ih + ch, 0, bh, rw, key);
	if (w != NULL) {
		draw_box(w, "ranks", true);
		widget_draw(W_TABLE, w, (struct rect){ 1, 1, bh - 2, rw - 2 }, &tm);
	}
	if (rw < W && (w = console_panel(c, P_CKPT, top + ih + ch, rw, bh,
	    W - rw, key)) != NULL) {
		draw_box(w, "checkpoints", false);
		if (job_checkpoints(c, w, 1, bh - 2, W - rw, j->name, false) == 0)
			draw_text(w, 1, 2, W - rw - 4, EL_TEXT_DIM, "none yet");
	}
}

static int
job_move(struct console *c, int dy, int dx)
{
	struct job_state *j = console_job(c);
	struct job_ctx	 x = { .c = c, .j = j };
	struct table_model tm;
	int		 order[4096], n, p = 0, nj = backend_njobs(c->b);

	if (j == NULL)
		return ACT_NONE;
	if (dx != 0) {
		for (int i = 0; i < nj; i++) {
			if (backend_job_at(c->b, i) == j) {
				j = backend_job_at(c->b, (i + dx + nj) % nj);
				break;
			}
		}
		snprintf(c->job, sizeof c->job, "%s", j->name);
		c->rank = 0;
		return ACT_REDRAW;
	}
	job_table(c, &x, &tm);
	n = table_order(&tm, order, 4096);
	for (int i = 0; i < n; i++) {
		if (order[i] == c->rank)
			p = i;
	}
	p += dy;
	p = p < 0 ? 0 : p >= n ? n - 1 : p;
	if (n > 0)
		c->rank = order[p];
	return ACT_REDRAW;
}

static int
job_enter(struct console *c)
{
	if (console_job(c) == NULL)
		return ACT_NONE;
	c->scr = SCR_LOGS;
	c->log_rank = c->rank;
	c->scroll[SCR_LOGS] = 0;
	return ACT_LAYOUT;
}

static int
job_sort(struct console *c)
{
	struct job_layout l = job_layout(console_job(c));
	int	*col = &c->sort_col[SCR_JOB], ncols = l.n;
	const struct table_col *cols = l.cols;

	*col = *col + 1 >= ncols - 1 ? -1 : *col + 1;
	c->sort_desc[SCR_JOB] = *col > 0 && cols[*col].right;
	return ACT_REDRAW;
}

const struct screen screen_job = {
	.name = "job",
	.about = "loss and throughput charts, ranks, autotune, compression, "
	    "checkpoints",
	.filter_what = "filter ranks (any column)",
	.draw = job_draw,
	.nav = job_move,
	.enter = job_enter,
	.sort = job_sort,
};
