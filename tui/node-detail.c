/*
 * node-detail.c: the nodes screen's detail view of one node (Enter on a
 * panel; Esc goes back, Left and Right to the next node).  Top to bottom:
 * the node and its BLAS, a strip of its CPUs, everything its agent
 * samples in two columns (the host on the left; the network and disks
 * on the right) with a sparkline of the last minutes beside every rate,
 * its GPUs (every field NVML gave; "-" for one it did not), and its
 * processes: each rank with its job, then GPU processes that are no
 * rank's (node-procs.c).  The fields flow into lines as the width
 * allows, so 80 columns show what 200 do, in more lines; when the node
 * has more than the screen holds, PgUp and PgDn scroll.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tui/console.h"
#include "tui/draw.h"
#include "tui/node-detail.h"

enum { P_DETAIL = 2 };

/* A node metric as text: fmt with its value, or a dash. */
static const char *
nm(char *buf, size_t n, const struct node_sample *s, enum node_metric m,
    const char *fmt)
{
	return fmt_num(buf, n, node_sample_valid(s, m), fmt, s->v[m]);
}

static struct hist_ref *
nh(struct dview *d, enum node_metric m)
{
	struct hist_ref *r = &d->refs[d->nrefs < DV_REFS ? d->nrefs++ :
	    DV_REFS - 1];

	*r = (struct hist_ref){ &d->nv->hist, NULL, node_hist_row(m) };
	return r;
}

/* A share of the CPUs, the bars' colours. */
static enum elem
level_elem(double pct)
{
	return pct < 50 ? EL_BAR_LOW : pct < 80 ? EL_BAR_MID : EL_BAR_HIGH;
}

/* The title line, and the per-CPU strip under it; the next row. */
static int
dv_head(struct dview *d, int y)
{
	const struct node_view *nv = d->nv;
	const struct node_lists *nl = &nv->lists;
	int	 x, avail, per, cells, lines, cw;
	char	 t[200];

	char	 hint[32];
	int	 hw;

	snprintf(hint, sizeof hint, "%sEsc: back", d->more ? "PgDn: more  " :
	    "");
	hw = draw_width(hint) + 1;
	x = dv_text(d, y, 0, d->cols, EL_TITLE, nv->spec->name);
	x += dv_text(d, y, x, d->cols - x, nv->up ? EL_TEXT : EL_NODE_DOWN,
	    nv->up ? " up" : " DOWN");
	snprintf(t, sizeof t, "  rack %s%s  %d CPUs  ", nv->spec->rack,
	    nv->spec->spare ? ", spare" : "", nl->ncores);
	x += dv_text(d, y, x, d->cols - x, EL_TEXT_DIM, t);
	if (nv->blas.lib[0] != '\0')
		snprintf(t, sizeof t, "%s %s%s%s", nv->blas.lib, nv->blas.kernel,
		    nv->blas.coretype[0] ? " CORETYPE=" : "",
		    nv->blas.coretype);
	else
		snprintf(t, sizeof t, "BLAS %s", glyphs->unknown);
	x += dv_text(d, y, x, d->cols - x - hw, EL_TEXT, t);
	if (d->cols - x >= hw)
		dv_text(d, y, d->cols - hw + 1, hw, EL_TEXT_DIM, hint);
	y++;
	if (nl->ncores == 0)
		return y;
	/* One cell a CPU, as many lines as it takes (at most four: then a
	 * cell is the busiest of its share). */
	avail = d->cols - 5;
	lines = (nl->ncores + avail - 1) / avail;
	lines = lines > 4 ? 4 : lines;
	per = (nl->ncores + lines * avail - 1) / (lines * avail);
	cells = (nl->ncores + per - 1) / per;
	cw = avail / cells >= 5 ? 5 : avail / cells >= 4 ? 4 : 1;
	dv_text(d, y, 0, 4, EL_TEXT_DIM, per > 1 ? "cpus" : "cpu");
	for (int k = 0; k < cells; k++) {
		double	 u = -1;
		int	 row = y + k * cw / avail, col = 5 + (k * cw) % avail;

		for (int i = k * per; i < (k + 1) * per && i < nl->ncores; i++) {
			if ((nl->cores[i].valid >> CM_UTIL) & 1 &&
			    nl->cores[i].v[CM_UTIL] > u)
				u = nl->cores[i].v[CM_UTIL];
		}
		if (u < 0)
			dv_text(d, row, col, cw, EL_TEXT_DIM, glyphs->unknown);
		else if (cw == 1)
			dv_text(d, row, col, 1, level_elem(u), glyphs->spark[
			    u >= 100 ? 7 : (int)(u / 12.5)]);
		else {
			snprintf(t, sizeof t, cw == 5 ? "%3.0f%%" : "%3.0f", u);
			dv_text(d, row, col, cw, level_elem(u), t);
		}
	}
	return y + (cells * cw + avail - 1) / avail;
}

/* The file system of the state or checkpoint directory. */
static void
dv_fs(struct flow *f, const struct node_sample *s, bool ckpt)
{
	enum node_metric m = ckpt ? NM_CKPT_FREE : NM_STATE_FREE;
	bool	 ok = node_sample_valid(s, m) && node_sample_valid(s, m + 1) &&
		    s->v[m + 1] > 0;
	char	 a[16], b[16], v[64], in[16];

	if (!ok) {
		flow_field(f, ckpt ? "ckpt fs" : "state fs", glyphs->unknown,
		    EL_TEXT, NULL);
		return;
	}
	snprintf(v, sizeof v, "%s free/%s %.0f%%", dv_bytes(a, sizeof a, true,
	    s->v[m]), dv_bytes(b, sizeof b, true, s->v[m + 1]),
	    100 * s->v[m] / s->v[m + 1]);
	flow_field(f, ckpt ? "ckpt fs" : "state fs", v, node_fs_low(s, ckpt) ?
	    EL_BAR_HIGH : EL_TEXT, NULL);
	flow_field(f, "inodes", dv_si(in, sizeof in, node_sample_valid(s, m + 2),
	    s->v[m + 2]), EL_TEXT, NULL);
}

/* The left column: CPUs, load, pressure, memory, room. */
static int
dv_host(struct dview *d, int x0, int width, int y)
{
	const struct node_sample *s = &d->nv->last;
	struct flow	 f;
	char		 a[24], b[24], c[24], e[24], g[24], h[24], v[96];

	flow_start(&f, d, x0, width, y);
	flow_field(&f, "cpu", nm(a, sizeof a, s, NM_CPU_UTIL, "%.0f%%"),
	    EL_TEXT, nh(d, NM_CPU_UTIL));
	flow_field(&f, "us", nm(a, sizeof a, s, NM_CPU_USER, "%.0f%%"),
	    EL_TEXT, NULL);
	flow_field(&f, "sy", nm(a, sizeof a, s, NM_CPU_SYS, "%.0f%%"),
	    EL_TEXT, NULL);
	flow_field(&f, "io", nm(a, sizeof a, s, NM_CPU_IOWAIT, "%.0f%%"),
	    EL_TEXT, NULL);
	flow_field(&f, "clk", nm(a, sizeof a, s, NM_CPU_FREQ, "%.0fMHz"),
	    EL_TEXT, NULL);
	flow_field(&f, "thr", nm(a, sizeof a, s, NM_CPU_THROTTLE, "%.1f/s"),
	    EL_TEXT, nh(d, NM_CPU_THROTTLE));
	flow_field(&f, "load", nm(a, sizeof a, s, NM_LOAD1, "%.2f"), EL_TEXT,
	    NULL);
	flow_field(&f, "temp", nm(a, sizeof a, s, NM_TEMP, "%.0fC"), EL_TEXT,
	    NULL);
	flow_field(&f, "power", nm(a, sizeof a, s, NM_POWER, "%.0fW"), EL_TEXT,
	    NULL);
	flow_field(&f, "fds", nm(a, sizeof a, s, NM_AGENT_FDS, "%.0f"), EL_TEXT,
	    NULL);
	/* Pressure: some/full of the CPUs, memory and I/O. */
	snprintf(v, sizeof v, "c %s/%s m %s/%s io %s/%s%%", nm(a, sizeof a, s,
	    NM_PSI_CPU, "%.1f"), nm(b, sizeof b, s, NM_PSI_CPU_FULL, "%.1f"),
	    nm(c, sizeof c, s, NM_PSI_MEM, "%.1f"), nm(e, sizeof e, s,
	    NM_PSI_MEM_FULL, "%.1f"), nm(g, sizeof g, s, NM_PSI_IO, "%.1f"),
	    nm(h, sizeof h, s, NM_PSI_IO_FULL, "%.1f"));
	flow_field(&f, "psi", v, EL_TEXT, NULL);
	snprintf(v, sizeof v, "%s/%s", dv_bytes(a, sizeof a, node_sample_valid(
	    s, NM_MEM_USED), s->v[NM_MEM_USED]), dv_bytes(b, sizeof b,
	    node_sample_valid(s, NM_MEM_TOTAL), s->v[NM_MEM_TOTAL]));
	flow_field(&f, "mem", v, EL_TEXT, NULL);
	flow_field(&f, "cache", dv_bytes(c, sizeof c, node_sample_valid(s,
	    NM_MEM_CACHE), s->v[NM_MEM_CACHE]), EL_TEXT, NULL);
	flow_field(&f, "avail", dv_bytes(c, sizeof c, node_sample_valid(s,
	    NM_MEM_AVAIL), s->v[NM_MEM_AVAIL]), EL_TEXT, NULL);
	snprintf(v, sizeof v, "%s/%s", dv_bytes(a, sizeof a, node_sample_valid(
	    s, NM_SWAP_USED), s->v[NM_SWAP_USED]), dv_bytes(b, sizeof b,
	    node_sample_valid(s, NM_SWAP_TOTAL), s->v[NM_SWAP_TOTAL]));
	flow_field(&f, "swap", v, EL_TEXT, NULL);
	flow_field(&f, "majflt", nm(a, sizeof a, s, NM_MAJOR_FAULTS, "%.0f/s"),
	    EL_TEXT, nh(d, NM_MAJOR_FAULTS));
	flow_break(&f);
	dv_fs(&f, s, false);
	/* The checkpoints on the same file system: said once. */
	if (node_sample_valid(s, NM_CKPT_SIZE) && s->v[NM_CKPT_SIZE] ==
	    s->v[NM_STATE_SIZE] && s->v[NM_CKPT_FREE] == s->v[NM_STATE_FREE])
		flow_field(&f, "ckpt", "same fs", EL_TEXT_DIM, NULL);
	else
		dv_fs(&f, s, true);
	flow_field(&f, "a ckpt", dv_bytes(a, sizeof a, node_sample_valid(s,
	    NM_CKPT_BYTES), s->v[NM_CKPT_BYTES]), EL_TEXT, NULL);
	return flow_end(&f);
}

/* The right column: network and disks, the sums with their sparklines,
 * then each interface and disk. */
static int
dv_io(struct dview *d, int x0, int width, int y)
{
	const struct node_sample *s = &d->nv->last;
	const struct node_lists *nl = &d->nv->lists;
	struct flow	 f;
	char		 a[24], b[24], v[96];

	flow_start(&f, d, x0, width, y);
	flow_field(&f, "rx", dv_si(a, sizeof a, node_sample_valid(s,
	    NM_NET_RX), s->v[NM_NET_RX]), EL_TEXT, nh(d, NM_NET_RX));
	flow_field(&f, "tx", dv_si(a, sizeof a, node_sample_valid(s,
	    NM_NET_TX), s->v[NM_NET_TX]), EL_TEXT, nh(d, NM_NET_TX));
	flow_field(&f, "retr", nm(a, sizeof a, s, NM_TCP_RETRANS, "%.1f/s"),
	    node_sample_valid(s, NM_TCP_RETRANS) && s->v[NM_TCP_RETRANS] > 0 ?
	    EL_EVENT_WARN : EL_TEXT, nh(d, NM_TCP_RETRANS));
	flow_field(&f, "err", nm(a, sizeof a, s, NM_NET_ERRORS, "%.0f/s"),
	    EL_TEXT, nh(d, NM_NET_ERRORS));
	flow_field(&f, "drop", nm(a, sizeof a, s, NM_NET_DROPS, "%.0f/s"),
	    EL_TEXT, nh(d, NM_NET_DROPS));
	flow_field(&f, "disk r", dv_si(a, sizeof a, node_sample_valid(s,
	    NM_DISK_READ), s->v[NM_DISK_READ]), EL_TEXT, nh(d, NM_DISK_READ));
	flow_field(&f, "w", dv_si(a, sizeof a, node_sample_valid(s,
	    NM_DISK_WRITE), s->v[NM_DISK_WRITE]), EL_TEXT, nh(d,
	    NM_DISK_WRITE));
	flow_field(&f, "busy", nm(a, sizeof a, s, NM_DISK_UTIL, "%.0f%%"),
	    EL_TEXT, nh(d, NM_DISK_UTIL));
	for (int i = 0; i < nl->nifaces; i++) {
		const struct iface_sample *is = &nl->ifaces[i];
		bool	 ok = is->valid != 0;
		char	 c[24], e[24], g[24], h[24], k[24], m[24];

		/* "eth0 ↓74.3k 49p ↑80.9k 53p e0/0 d0/0": bytes and packets
		 * a second each way, errors and drops in/out. */
		snprintf(v, sizeof v, "%s%s %sp %s%s %sp e%s/%s d%s/%s",
		    glyphs->utf8 ? "\u2193" : "rx ", dv_si(a, sizeof a, ok,
		    is->v[IM_RX]), dv_si(b, sizeof b, ok, is->v[IM_RX_PACKETS]),
		    glyphs->utf8 ? "\u2191" : "tx ", dv_si(c, sizeof c, ok,
		    is->v[IM_TX]), dv_si(e, sizeof e, ok, is->v[IM_TX_PACKETS]),
		    dv_si(g, sizeof g, ok, is->v[IM_RX_ERRORS]), dv_si(h,
		    sizeof h, ok, is->v[IM_TX_ERRORS]), dv_si(k, sizeof k, ok,
		    is->v[IM_RX_DROPS]), dv_si(m, sizeof m, ok,
		    is->v[IM_TX_DROPS]));
		flow_break(&f);
		flow_field(&f, is->name, v, ok && is->v[IM_RX_ERRORS] +
		    is->v[IM_TX_ERRORS] + is->v[IM_RX_DROPS] +
		    is->v[IM_TX_DROPS] > 0 ? EL_EVENT_WARN : EL_TEXT, NULL);
	}
	flow_break(&f);
	for (int i = 0; i < nl->ndisks; i++) {
		const struct disk_sample *ds = &nl->disks[i];
		char	 u[24];

		snprintf(v, sizeof v, "r %s w %s %s", dv_si(a, sizeof a,
		    (ds->valid >> DM_READ) & 1, ds->v[DM_READ]), dv_si(b,
		    sizeof b, (ds->valid >> DM_WRITE) & 1, ds->v[DM_WRITE]),
		    fmt_num(u, sizeof u, (ds->valid >> DM_UTIL) & 1, "%.0f%%",
		    ds->v[DM_UTIL]));
		flow_field(&f, ds->name, v, EL_TEXT, NULL);
	}
	return flow_end(&f);
}

void
node_detail_draw(struct console *c)
{
	struct node_view *nv = backend_node_at(c->b, c->node);
	struct dview	 d = { .c = c, .nv = nv };
	int		 H = console_height(), W = COLS, y, y1, y2, hrows, k, g;
	uint64_t	 key = console_mix(console_mix(console_mix(c->ui_gen,
			    c->feed.gen_nodes), c->feed.gen_jobs),
			    (uint64_t)c->node);

	if ((d.w = console_panel(c, P_DETAIL, console_top(), 0, H, W,
	    console_mix(key, (uint64_t)c->detail_top))) == NULL)
		return;
	d.rows = H;
	d.cols = W;
	d.spark_w = W >= 160 ? 12 : W >= 120 ? 8 : 6;
	/* Once to measure (nothing drawn: top past every row), then for
	 * real at the scroll that keeps the selected process in view.  What
	 * of the host does not fit above the GPUs and the processes goes
	 * below them. */
	for (int pass = 0; pass < 2; pass++) {
		d.top = pass == 0 ? 1 << 30 : c->detail_top;
		d.nrefs = 0;
		werase(d.w);
		y = dv_head(&d, 0);
		if (pass == 0)
			d.host_y = y, d.host_k = 1 << 20, d.rest_y = 0;
		y1 = dv_host(&d, 0, W / 2 - 1, DV_HOST) - DV_HOST;
		y2 = dv_io(&d, W / 2 + 1, W - W / 2 - 1, DV_HOST) - DV_HOST;
		hrows = y1 > y2 ? y1 : y2;
		y = d.host_y + (hrows < d.host_k ? hrows : d.host_k);
		y = dv_gpus(&d, y);
		y = dv_procs(&d, y);
		if (hrows > d.host_k) {
			dv_text(&d, y, 0, W, EL_TEXT_DIM, "more of the node:");
			y += 1 + hrows - d.host_k;
		}
		if (pass == 1)
			break;
		/* The GPUs and the processes stay on the screen with at
		 * least three rows of the host above them. */
		g = y - d.host_y - hrows;	/* the GPUs' and processes' rows */
		if (y > d.rows && (k = d.rows - d.host_y - g) < hrows) {
			d.host_k = k < 3 ? 3 : k;
			d.rest_y = d.host_y + d.host_k + g + 1;
			y = d.rest_y + hrows - d.host_k;
		}
		d.more = y > d.rows;
		dv_scroll(&d, y);
	}
}
