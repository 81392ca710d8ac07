/*
 * screen-nodes.c: one panel per node, in a grid that scrolls to keep the
 * selected node in view: CPU and memory bars, network sparklines (the
 * last seconds at one sample a second), load, temperature and power,
 * the free space of its state directory (red once short, node_fs_low)
 * and its GPUs, and the ranks the node hosts with their step times.
 * '/' keeps nodes whose name holds the text; 's' sorts by CPU, then
 * memory.  Enter opens the selected node's detail view (node-detail.c),
 * Esc closes it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/xmalloc.h"
#include "tui/console.h"
#include "tui/draw.h"

enum { P_GRID = 2 };

#define NODE_W	38	/* narrowest panel */
#define NODE_H	9

static const char *const nodes_sorts[] = { "name", "cpu", "memory" };

static double
nodes_metric(struct node_view *nv, enum node_metric m)
{
	return nv->up && node_sample_valid(&nv->last, m) ? nv->last.v[m] : -1;
}

static struct console *nodes_sort_c;

static int
nodes_cmp(const void *a, const void *b)
{
	struct backend	*bk = nodes_sort_c->b;
	int		 x = *(const int *)a, y = *(const int *)b;
	enum node_metric m = nodes_sort_c->sort_col[SCR_NODES] == 1 ?
	    NM_CPU_UTIL : NM_MEM_USED;
	double		 vx = nodes_metric(backend_node_at(bk, x), m);
	double		 vy = nodes_metric(backend_node_at(bk, y), m);

	if (vx != vy)
		return vx > vy ? -1 : 1;
	return x - y;
}

/* The nodes shown, filtered and sorted; returns how many. */
static int
nodes_visible(struct console *c, int *vis)
{
	int	 n = 0;

	for (int i = 0; i < backend_nnodes(c->b); i++) {
		if (c->filter[SCR_NODES][0] == '\0' || strcasestr(
		    backend_node_at(c->b, i)->spec->name, c->filter[SCR_NODES]))
			vis[n++] = i;
	}
	if (c->sort_col[SCR_NODES] > 0) {
		nodes_sort_c = c;
		qsort(vis, (size_t)n, sizeof *vis, nodes_cmp);
	}
	return n;
}

/* The visible nodes (free them) and, in *p, the selected one's place
 * among them (0 when it is not shown). */
static int *
nodes_cursor(struct console *c, int *n, int *p)
{
	int	*vis = xcalloc((size_t)backend_nnodes(c->b) + 1, sizeof *vis);

	*n = nodes_visible(c, vis);
	*p = 0;
	for (int k = 0; k < *n; k++) {
		if (vis[k] == c->node)
			*p = k;
	}
	return vis;
}

/* "job: r0 9.0ms r1 8.8ms" for each job with a rank on the node. */
static void
nodes_ranks(struct console *c, WINDOW *w, int y, int x, int wd, int node)
{
	int	 used = 0;

	for (int k = 0; k < backend_njobs(c->b) && used < wd; k++) {
		struct job_state *j = backend_job_at(c->b, k);
		bool	 named = false;

		for (int r = 0; !job_done(j) && r < j->world && used < wd; r++) {
			const struct feed_rank *fr;
			char	 ms[16];

			if (j->ranks[r].node != node ||
			    j->ranks[r].phase != RANK_RUNNING)
				continue;
			if (!named)
				used += draw_textf(w, y, x + used, wd - used,
				    EL_TEXT_DIM, "%s%s:", used ? "  " : "",
				    j->name);
			named = true;
			fr = feed_rank(&c->feed, j->name, r);
			fmt_num(ms, sizeof ms, fr != NULL, "%.1fms",
			    fr ? fr->step_ms : 0);
			used += draw_textf(w, y, x + used, wd - used, EL_TEXT,
			    " r%d %s", r, ms);
		}
	}
	if (used == 0)
		draw_text(w, y, x, wd, EL_TEXT_DIM, "no ranks");
}

static float
hist_get(const void *ctx, int i)
{
	const struct hist_ref *r = ctx;

	return r->nh != NULL ? node_hist_get(r->nh, r->k, i) :
	    gpu_hist_get(r->gh, r->k, i);
}

struct spark_model
hist_spark(const struct hist_ref *r, enum elem e, bool pool)
{
	int	 n = r->nh != NULL ? r->nh->len : r->gh != NULL ? r->gh->len : 0;

	return (struct spark_model){ hist_get, r, r->k >= 0 ? n : 0, 0, e,
	    pool };
}

/* "state 12.0G free 30%  gpus 2 93%": the room left where checkpoints go,
 * red once short, and the busiest GPU. */
static void
nodes_fs_gpus(WINDOW *w, int y, int x, int wd, const struct node_view *nv)
{
	const struct node_sample *s = &nv->last;
	bool	 fs = nv->up && node_sample_valid(s, NM_STATE_FREE) &&
		    node_sample_valid(s, NM_STATE_SIZE) && s->v[NM_STATE_SIZE] > 0;
	bool	 low = fs && (node_fs_low(s, false) || node_fs_low(s, true));
	char	 t1[32], t2[32];
	int	 used;
	double	 best = -1;

	fmt_bytes(t1, sizeof t1, fs, s->v[NM_STATE_FREE]);
	used = draw_text(w, y, x, wd, EL_TEXT_DIM, "state ");
	used += draw_textf(w, y, x + used, wd - used, low ? EL_BAR_HIGH :
	    EL_TEXT, "%s free%s", t1, fmt_num(t2, sizeof t2, fs, " %.0f%%",
	    fs ? 100 * s->v[NM_STATE_FREE] / s->v[NM_STATE_SIZE] : 0));
	if (!nv->up || nv->ngpus == 0)
		return;
	for (int g = 0; g < nv->ngpus; g++) {
		if (gpu_sample_valid(&nv->gpus[g], GM_UTIL) &&
		    nv->gpus[g].v[GM_UTIL] > best)
			best = nv->gpus[g].v[GM_UTIL];
	}
	draw_textf(w, y, x + used, wd - used, EL_TEXT_DIM, "  gpus %d %s",
	    nv->ngpus, fmt_num(t2, sizeof t2, best >= 0, "%.0f%%", best));
}

static void
nodes_panel(struct console *c, WINDOW *w, int y, int x, int wd, int i)
{
	struct node_view *nv = backend_node_at(c->b, i);
	const struct node_sample *s = &nv->last;
	char		 title[160], t1[32], t2[32], t3[32], t4[32];
	bool		 cpu = nv->up && node_sample_valid(s, NM_CPU_UTIL);
	bool		 mem = nv->up && node_sample_valid(s, NM_MEM_USED) &&
			    node_sample_valid(s, NM_MEM_TOTAL);
	int		 iw = wd - 4;
	struct bar_model bar;
	struct spark_model sp;
	struct hist_ref	 rx = { &nv->hist, NULL, node_hist_row(NM_NET_RX) };
	struct hist_ref	 tx = { &nv->hist, NULL, node_hist_row(NM_NET_TX) };

	snprintf(title, sizeof title, "%s %s %s%s", nv->spec->name,
	    nv->spec->rack, nv->up ? "up" : "DOWN", nv->spec->spare ?
	    " spare" : "");
	draw_frame(w, y, x, NODE_H, wd, title, i == c->node);
	bar = (struct bar_model){ "cpu", 5, s->v[NM_CPU_UTIL], 100, cpu,
	    fmt_num(t1, sizeof t1, cpu, "%.0f%%", s->v[NM_CPU_UTIL]) };
	widget_draw(W_BAR, w, (struct rect){ y + 1, x + 2, 1, iw }, &bar);
	fmt_bytes(t2, sizeof t2, mem, s->v[NM_MEM_USED]);
	bar = (struct bar_model){ "mem", 5, s->v[NM_MEM_USED],
	    s->v[NM_MEM_TOTAL], mem, t2 };
	widget_draw(W_BAR, w, (struct rect){ y + 2, x + 2, 1, iw }, &bar);
	fmt_rate(t3, sizeof t3, nv->up && node_sample_valid(s, NM_NET_RX),
	    s->v[NM_NET_RX]);
	draw_text(w, y + 3, x + 2, 5, EL_TEXT_DIM, "rx");
	draw_text_right(w, y + 3, x + wd - 13, 11, EL_TEXT, t3);
	sp = hist_spark(&rx, EL_SPARK_RX, false);
	widget_draw(W_SPARKLINE, w, (struct rect){ y + 3, x + 7, 1, iw - 17 }, &sp);
	fmt_rate(t4, sizeof t4, nv->up && node_sample_valid(s, NM_NET_TX),
	    s->v[NM_NET_TX]);
	draw_text(w, y + 4, x + 2, 5, EL_TEXT_DIM, "tx");
	draw_text_right(w, y + 4, x + wd - 13, 11, EL_TEXT, t4);
	sp = hist_spark(&tx, EL_SPARK_TX, false);
	widget_draw(W_SPARKLINE, w, (struct rect){ y + 4, x + 7, 1, iw - 17 }, &sp);
	fmt_num(t1, sizeof t1, nv->up && node_sample_valid(s, NM_LOAD1),
	    "%.2f", s->v[NM_LOAD1]);
	fmt_num(t2, sizeof t2, nv->up && node_sample_valid(s, NM_TEMP),
	    "%.0fC", s->v[NM_TEMP]);
	fmt_num(t3, sizeof t3, nv->up && node_sample_valid(s, NM_POWER),
	    "%.0fW", s->v[NM_POWER]);
	draw_textf(w, y + 5, x + 2, iw, EL_TEXT_DIM, "load %s  temp %s  "
	    "power %s", t1, t2, t3);
	nodes_fs_gpus(w, y + 6, x + 2, iw, nv);
	nodes_ranks(c, w, y + 7, x + 2, iw, i);
}

static void
nodes_grid(struct console *c)
{
	int	 H = console_height(), W = COLS, cols = W / NODE_W, rows;
	int	*vis, n, p, top;
	uint64_t key = console_mix(console_mix(c->ui_gen, c->feed.gen_nodes),
	    c->feed.gen_jobs);
	WINDOW	*w;
	char	 title[128];

	cols = cols < 1 ? 1 : cols;
	rows = (H - 1) / NODE_H;
	rows = rows < 1 ? 1 : rows;
	vis = nodes_cursor(c, &n, &p);
	for (int k = 0; k < n; k++)
		key = console_mix(key, backend_node_at(c->b, vis[k])->up);
	if (n > 0)
		c->node = vis[p];
	top = c->scroll[SCR_NODES];
	if (p / cols < top)
		top = p / cols;
	if (p / cols >= top + rows)
		top = p / cols - rows + 1;
	c->scroll[SCR_NODES] = top;
	if ((w = console_panel(c, P_GRID, console_top(), 0, H, W,
	    console_mix(key, (uint64_t)top))) != NULL) {
		snprintf(title, sizeof title, "%d of %d nodes%s%s%s, by %s", n,
		    backend_nnodes(c->b), c->filter[SCR_NODES][0] ?
		    " matching '" : "", c->filter[SCR_NODES],
		    c->filter[SCR_NODES][0] ? "'" : "",
		    nodes_sorts[c->sort_col[SCR_NODES] > 0 ?
		    c->sort_col[SCR_NODES] : 0]);
		draw_text(w, 0, 1, W - 2, EL_TITLE, title);
		for (int k = top * cols; k < n && k < (top + rows) * cols; k++)
			nodes_panel(c, w, 1 + (k / cols - top) * NODE_H,
			    (k % cols) * (W / cols), W / cols, vis[k]);
		if (n == 0)
			draw_text(w, 2, 2, W - 4, EL_TEXT_DIM, "no node matches");
	}
	free(vis);
}

/* The grid, or the selected node's detail view. */
static void
nodes_draw(struct console *c)
{
	if (c->node_detail && c->node >= 0 && c->node < backend_nnodes(c->b))
		node_detail_draw(c);
	else
		nodes_grid(c);
}

static int
nodes_move(struct console *c, int dy, int dx)
{
	int	*vis, n, p, cols = COLS / NODE_W, step;

	if (c->node_detail)
		return node_detail_nav(c, dy, dx);

	cols = cols < 1 ? 1 : cols;
	vis = nodes_cursor(c, &n, &p);
	step = dy > 1 || dy < -1 ? dy / NODE_H * cols : dy * cols;
	p += dx + step;
	p = p < 0 ? 0 : p >= n ? n - 1 : p;
	if (n > 0)
		c->node = vis[p];
	free(vis);
	return ACT_REDRAW;
}

/* Enter: the node's detail view; there, the job of the process picked. */
static int
nodes_enter(struct console *c)
{
	if (c->node_detail)
		return node_detail_enter(c);
	if (c->node < 0 || c->node >= backend_nnodes(c->b))
		return ACT_NONE;
	c->node_detail = true;
	c->detail_sel = 0;
	return ACT_LAYOUT;
}

static int
nodes_back(struct console *c)
{
	if (!c->node_detail)
		return ACT_NONE;
	c->node_detail = false;
	return ACT_LAYOUT;
}

static int
nodes_sort(struct console *c)
{
	c->sort_col[SCR_NODES] = (c->sort_col[SCR_NODES] + 1) % 3;
	return ACT_REDRAW;
}

const struct screen screen_nodes = {
	.name = "nodes",
	.about = "one panel per node: cpu, memory, network, room, its ranks; "
	    "Enter: the node's detail (cpus, gpus, processes)",
	.filter_what = "filter nodes by name",
	.draw = nodes_draw,
	.nav = nodes_move,
	.enter = nodes_enter,
	.sort = nodes_sort,
	.back = nodes_back,
};
