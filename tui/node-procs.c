/*
 * node-procs.c: the lower half of a node's detail view (node-detail.h):
 * each GPU with every field NVML gave (its utilisations with a
 * sparkline, frame buffer, clocks, temperatures, power and energy, PCIe
 * and NVLink, ECC, remapped rows, XID errors, throttle reasons), then
 * the node's processes: every running rank with its job, its CPU, RSS,
 * threads, context switches, fds and GPU memory (from its agent), then
 * the GPU processes that are no rank's.  Up and Down pick a process,
 * Enter opens its job; PgUp and PgDn scroll a view taller than the
 * screen; Left and Right go to the next node.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tui/console.h"
#include "tui/draw.h"
#include "tui/node-detail.h"

/* A GPU metric as text. */
static const char *
gm(char *buf, size_t n, const struct gpu_sample *gs, enum gpu_metric m,
    const char *fmt, double scale)
{
	return fmt_num(buf, n, gpu_sample_valid(gs, m), fmt, gs->v[m] * scale);
}

static const char *
gm_bytes(char *buf, size_t n, const struct gpu_sample *gs, enum gpu_metric m)
{
	return dv_bytes(buf, n, gpu_sample_valid(gs, m), gs->v[m]);
}

static const char *
gm_si(char *buf, size_t n, const struct gpu_sample *gs, enum gpu_metric m)
{
	return dv_si(buf, n, gpu_sample_valid(gs, m), gs->v[m]);
}

static struct hist_ref *
gh(struct dview *d, int g, enum gpu_metric m)
{
	struct hist_ref *r = &d->refs[d->nrefs < DV_REFS ? d->nrefs++ :
	    DV_REFS - 1];

	*r = (struct hist_ref){ NULL, g < d->nv->ngpus_hist ?
	    &d->nv->ghist[g] : NULL, g < d->nv->ngpus_hist ?
	    gpu_hist_row(m) : -1 };
	return r;
}

/* One GPU: a flow of its fields from row y; the next row. */
static int
dv_gpu(struct dview *d, int g, int y)
{
	const struct gpu_sample *gs = &d->nv->gpus[g];
	struct flow	 f;
	char		 a[32], b[32], v[96];
	bool		 wide = d->cols >= 120;

	flow_start(&f, d, 0, d->cols, y);
	snprintf(v, sizeof v, "GPU%d", gs->index);
	flow_field(&f, NULL, v, EL_TITLE, NULL);
	flow_field(&f, NULL, gs->name[0] ? gs->name : glyphs->unknown, EL_TEXT,
	    NULL);
	f.x0 = 2;		/* its lines after the first, indented */
	f.width = d->cols - 2;
	flow_field(&f, "util", gm(a, sizeof a, gs, GM_UTIL, "%.0f%%", 1),
	    EL_TEXT, gh(d, g, GM_UTIL));
	flow_field(&f, "copy", gm(a, sizeof a, gs, GM_MEM_UTIL, "%.0f%%", 1),
	    EL_TEXT, wide ? gh(d, g, GM_MEM_UTIL) : NULL);
	flow_field(&f, "enc", gm(a, sizeof a, gs, GM_ENC_UTIL, "%.0f%%", 1),
	    EL_TEXT, NULL);
	flow_field(&f, "dec", gm(a, sizeof a, gs, GM_DEC_UTIL, "%.0f%%", 1),
	    EL_TEXT, NULL);
	snprintf(v, sizeof v, "%s/%s", gm_bytes(a, sizeof a, gs, GM_MEM_USED),
	    gm_bytes(b, sizeof b, gs, GM_MEM_TOTAL));
	flow_field(&f, "fb", v, EL_TEXT, NULL);
	flow_field(&f, "free", gm_bytes(a, sizeof a, gs, GM_MEM_FREE), EL_TEXT,
	    NULL);
	snprintf(v, sizeof v, "%s/%sMHz", gm(a, sizeof a, gs, GM_SM_CLOCK,
	    "%.0f", 1), gm(b, sizeof b, gs, GM_MEM_CLOCK, "%.0f", 1));
	flow_field(&f, "clk", v, EL_TEXT, NULL);
	flow_field(&f, "temp", gm(a, sizeof a, gs, GM_TEMP, "%.0fC", 1),
	    EL_TEXT, NULL);
	flow_field(&f, "hbm", gm(a, sizeof a, gs, GM_MEM_TEMP, "%.0fC", 1),
	    EL_TEXT, NULL);
	flow_field(&f, "power", gm(a, sizeof a, gs, GM_POWER, "%.0fW", 1),
	    EL_TEXT, NULL);
	flow_field(&f, "energy", gm(a, sizeof a, gs, GM_ENERGY, "%.1fkJ",
	    1e-3), EL_TEXT, NULL);
	snprintf(v, sizeof v, "%s%s %s%s", glyphs->utf8 ? "\u2193" : "rx ",
	    gm_si(a, sizeof a, gs, GM_PCIE_RX), glyphs->utf8 ? "\u2191" :
	    "tx ", gm_si(b, sizeof b, gs, GM_PCIE_TX));
	flow_field(&f, "pcie", v, EL_TEXT, wide ? gh(d, g, GM_PCIE_RX) : NULL);
	flow_field(&f, "rpl", gm(a, sizeof a, gs, GM_PCIE_REPLAYS, "%.0f", 1),
	    EL_TEXT, NULL);
	snprintf(v, sizeof v, "%s%s %s%s", glyphs->utf8 ? "\u2193" : "rx ",
	    gm_si(a, sizeof a, gs, GM_NVLINK_RX), glyphs->utf8 ? "\u2191" :
	    "tx ", gm_si(b, sizeof b, gs, GM_NVLINK_TX));
	flow_field(&f, "nvlink", v, EL_TEXT, wide ? gh(d, g, GM_NVLINK_RX) :
	    NULL);
	snprintf(v, sizeof v, "%s/%s", gm(a, sizeof a, gs, GM_ECC_CORR, "%.0f",
	    1), gm(b, sizeof b, gs, GM_ECC_UNCORR, "%.0f", 1));
	flow_field(&f, "ecc", v, gpu_sample_valid(gs, GM_ECC_UNCORR) &&
	    gs->v[GM_ECC_UNCORR] > 0 ? EL_EVENT_ERROR : EL_TEXT, NULL);
	snprintf(v, sizeof v, "%s/%s", gm(a, sizeof a, gs, GM_REMAP_CORR,
	    "%.0f", 1), gm(b, sizeof b, gs, GM_REMAP_UNCORR, "%.0f", 1));
	flow_field(&f, "remap", v, EL_TEXT, NULL);
	flow_field(&f, "pend", gm(a, sizeof a, gs, GM_REMAP_PENDING, "%.0f", 1),
	    EL_TEXT, NULL);
	flow_field(&f, "fail", gm(a, sizeof a, gs, GM_REMAP_FAILED, "%.0f", 1),
	    gpu_sample_valid(gs, GM_REMAP_FAILED) && gs->v[GM_REMAP_FAILED] > 0 ?
	    EL_EVENT_ERROR : EL_TEXT, NULL);
	if (gpu_sample_valid(gs, GM_XID_LAST))
		snprintf(v, sizeof v, "%.0f (last %.0f)", gs->v[GM_XID],
		    gs->v[GM_XID_LAST]);
	else
		gm(v, sizeof v, gs, GM_XID, "%.0f", 1);
	flow_field(&f, "xid", v, gpu_sample_valid(gs, GM_XID) && gs->v[GM_XID] >
	    0 ? EL_EVENT_ERROR : EL_TEXT, NULL);
	flow_field(&f, "thr", gpu_sample_valid(gs, GM_THROTTLE) ?
	    gpu_throttle_text(gs->v[GM_THROTTLE], v, sizeof v) : glyphs->unknown,
	    gpu_sample_valid(gs, GM_THROTTLE) && gs->v[GM_THROTTLE] > 1 ?
	    EL_EVENT_WARN : EL_TEXT, NULL);
	return flow_end(&f);
}

int
dv_gpus(struct dview *d, int y)
{
	for (int g = 0; d->nv->up && g < d->nv->ngpus; g++)
		y = dv_gpu(d, g, y);
	return y;
}

/* A row of the process list: a rank of a job, or a GPU process. */
struct dproc {
	struct job_state *j;		/* NULL: no rank's */
	int		 r;
	long		 pid;
	double		 gpu_mem;	/* a GPU process's; < 0 unknown */
};

#define DV_PROCS	256

/* The node's processes: its running ranks by job, then the GPU
 * processes that are no rank's, the largest first. */
static int
dv_proc_list(struct dview *d, struct dproc *p, int max)
{
	struct backend	*b = d->c->b;
	int		 n = 0, node = d->c->node;

	for (int k = 0; k < backend_njobs(b); k++) {
		struct job_state *j = backend_job_at(b, k);

		for (int r = 0; !job_done(j) && r < j->world && n < max; r++) {
			if (j->ranks[r].node == node &&
			    j->ranks[r].phase == RANK_RUNNING)
				p[n++] = (struct dproc){ j, r, j->ranks[r].pid,
				    -1 };
		}
	}
	for (int g = 0; d->nv->up && g < d->nv->ngpus; g++) {
		const struct gpu_sample *gs = &d->nv->gpus[g];

		for (int i = 0; i < gs->nprocs && n < max; i++) {
			bool	 rank = gs->procs[i].owner > 0;

			for (int k = 0; k < n && !rank; k++)
				rank = p[k].pid == gs->procs[i].pid;
			if (!rank)
				p[n++] = (struct dproc){ NULL, -1,
				    gs->procs[i].pid, gs->procs[i].mem };
		}
	}
	return n;
}

static bool
rs_known(const struct rank_state *rs, enum rank_metric m)
{
	return (rs->known >> m) & 1;
}

static const struct {
	const char	*title;
	int		 width;
	bool		 right;
} dv_cols[] = {
	{ "pid", 7, true }, { "job", 14, false }, { "rank", 4, true },
	{ "cpu%", 5, true }, { "rss", 6, true }, { "thr", 4, true },
	{ "ctx/s vol/inv", 13, true }, { "fds", 5, true },
	{ "gpu mem", 7, true },
};
#define DV_NCOLS	((int)(sizeof dv_cols / sizeof dv_cols[0]))

/* The cells of row p into t. */
static void
dv_proc_cells(const struct dproc *p, char t[][48])
{
	const struct rank_state *rs = p->j != NULL ? &p->j->ranks[p->r] : NULL;
	char	 a[24], b[24];

	fmt_num(t[0], 48, p->pid > 0, "%.0f", (double)p->pid);
	snprintf(t[1], 48, "%s", p->j != NULL ? p->j->name : "(gpu only)");
	fmt_num(t[2], 48, rs != NULL, "%.0f", (double)p->r);
	fmt_num(t[3], 48, rs != NULL && rs_known(rs, RM_PROC_CPU), "%.0f",
	    rs != NULL ? rs->proc_cpu : 0);
	dv_bytes(t[4], 48, rs != NULL && rs_known(rs, RM_RSS), rs != NULL ?
	    (double)rs->rss : 0);
	fmt_num(t[5], 48, rs != NULL && rs_known(rs, RM_THREADS), "%.0f",
	    rs != NULL ? (double)rs->threads : 0);
	snprintf(t[6], 48, "%s/%s", fmt_num(a, sizeof a, rs != NULL &&
	    rs_known(rs, RM_CTX_VOL), "%.0f", rs != NULL ? rs->ctx_voluntary :
	    0), fmt_num(b, sizeof b, rs != NULL && rs_known(rs, RM_CTX_INVOL),
	    "%.0f", rs != NULL ? rs->ctx_involuntary : 0));
	fmt_num(t[7], 48, rs != NULL && rs_known(rs, RM_FDS), "%.0f",
	    rs != NULL ? (double)rs->fds : 0);
	if (rs != NULL)
		dv_bytes(t[8], 48, rs_known(rs, RM_GPU_MEM), (double)rs->gpu_mem);
	else
		dv_bytes(t[8], 48, p->gpu_mem >= 0, p->gpu_mem);
}

/* One line of the table: the header's titles, or a row's cells. */
static void
dv_proc_line(struct dview *d, int y, char t[][48], enum elem e)
{
	int	 x = 1;

	for (int c = 0; c < DV_NCOLS && x < d->cols; c++) {
		int	 w = dv_cols[c].width;

		if (dv_cols[c].right)
			dv_text(d, y, x + w - draw_width(t[c]) > x ? x + w -
			    draw_width(t[c]) : x, w, e, t[c]);
		else
			dv_text(d, y, x, w, e, t[c]);
		x += w + 1;
	}
}

int
dv_procs(struct dview *d, int y)
{
	struct dproc	 p[DV_PROCS];
	char		 t[DV_NCOLS][48];
	int		 n = dv_proc_list(d, p, DV_PROCS);

	d->nprocs = n;
	d->sel_row = -1;
	if (d->c->detail_sel >= n)
		d->c->detail_sel = n > 0 ? n - 1 : 0;
	for (int c = 0; c < DV_NCOLS; c++)
		snprintf(t[c], sizeof t[c], "%s", dv_cols[c].title);
	if (dv_visible(d, y))
		draw_fill(d->w, y - d->top, 0, d->cols, EL_HEADER);
	dv_proc_line(d, y, t, EL_HEADER);
	if (n == 0)
		dv_text(d, y + 1, 2, d->cols - 4, EL_TEXT_DIM, "no process of a "
		    "job here");
	for (int i = 0; i < n; i++) {
		bool	 sel = i == d->c->detail_sel;

		dv_proc_cells(&p[i], t);
		if (sel && dv_visible(d, y + 1 + i))
			draw_fill(d->w, y + 1 + i - d->top, 0, d->cols,
			    EL_SELECTED);
		dv_proc_line(d, y + 1 + i, t, sel ? EL_SELECTED : p[i].j ==
		    NULL ? EL_TEXT_DIM : EL_TEXT);
		if (sel)
			d->sel_row = y + 1 + i;
	}
	return y + 1 + (n > 0 ? n : 1);
}

void
dv_scroll(struct dview *d, int rows)
{
	struct console	*c = d->c;
	int		 max = rows > d->rows ? rows - d->rows : 0;

	if (c->detail_follow && d->sel_row >= 0) {
		if (d->sel_row < c->detail_top)
			c->detail_top = d->sel_row;
		if (d->sel_row >= c->detail_top + d->rows)
			c->detail_top = d->sel_row - d->rows + 1;
	}
	c->detail_top = c->detail_top < 0 ? 0 : c->detail_top > max ? max :
	    c->detail_top;
}

int
node_detail_nav(struct console *c, int dy, int dx)
{
	int	 nn = backend_nnodes(c->b);

	if (dx != 0 && nn > 0) {
		c->node = (c->node + dx + nn) % nn;
		c->detail_sel = c->detail_top = 0;
		return ACT_LAYOUT;
	}
	if (dy > 1 || dy < -1) {
		c->detail_top += dy;
		c->detail_follow = false;
		return ACT_REDRAW;
	}
	c->detail_sel += dy;
	c->detail_sel = c->detail_sel < 0 ? 0 : c->detail_sel;
	c->detail_follow = true;
	return ACT_REDRAW;
}

int
node_detail_enter(struct console *c)
{
	struct dview	 d = { .c = c, .nv = backend_node_at(c->b, c->node) };
	struct dproc	 p[DV_PROCS];
	int		 n = dv_proc_list(&d, p, DV_PROCS);

	if (c->detail_sel < 0 || c->detail_sel >= n ||
	    p[c->detail_sel].j == NULL) {
		console_say(c, EL_MESSAGE, "not a process of a job");
		return ACT_REDRAW;
	}
	snprintf(c->job, sizeof c->job, "%s", p[c->detail_sel].j->name);
	c->rank = p[c->detail_sel].r;
	c->scr = SCR_JOB;
	return ACT_LAYOUT;
}
