/*
 * heat.c: what the overview's heat map can colour its nodes by, one row
 * each ('v' cycles them): a share (CPU, memory, the busiest disk, the
 * file system of the state directory, pressure stall, the busiest GPU
 * and its memory) is coloured against 100%; a rate or a reading without
 * a ceiling (network, retransmits, power, temperature) against the
 * largest of the nodes shown.  A node that is down draws a cross, one
 * whose value nobody measured a dash.
 */
#include <stdio.h>

#include "tui/console.h"
#include "tui/draw.h"

enum heat_fmt { HF_PCT, HF_RATE, HF_PER_S, HF_TEMP, HF_WATTS };

struct heat_row {
	const char	*name;
	bool		(*get)(const struct node_view *, double *);
	double		 ceiling;	/* 0: against the largest shown */
	enum heat_fmt	 fmt;
};

static bool
heat_node(const struct node_view *nv, enum node_metric m, double *v)
{
	*v = nv->last.v[m];
	return node_sample_valid(&nv->last, m);
}

static bool
heat_ratio(const struct node_view *nv, enum node_metric a, enum node_metric b,
    bool invert, double *v)
{
	const struct node_sample *s = &nv->last;

	if (!node_sample_valid(s, a) || !node_sample_valid(s, b) ||
	    s->v[b] <= 0)
		return false;
	*v = 100 * s->v[a] / s->v[b];
	if (invert)
		*v = 100 - *v;
	return true;
}

/* The busiest GPU's metric m (a share of total when total is set). */
static bool
heat_gpu(const struct node_view *nv, enum gpu_metric m, int total, double *v)
{
	bool	 any = false;

	for (int g = 0; g < nv->ngpus; g++) {
		const struct gpu_sample *gs = &nv->gpus[g];
		double	 x;

		if (!gpu_sample_valid(gs, m) || (total >= 0 &&
		    (!gpu_sample_valid(gs, total) || gs->v[total] <= 0)))
			continue;
		x = total >= 0 ? 100 * gs->v[m] / gs->v[total] : gs->v[m];
		if (!any || x > *v)
			*v = x;
		any = true;
	}
	return any;
}

#define NODE_GET(fn, m) static bool fn(const struct node_view *nv, \
	double *v) { return heat_node(nv, m, v); }
NODE_GET(h_cpu, NM_CPU_UTIL)
NODE_GET(h_disk, NM_DISK_UTIL)
NODE_GET(h_psi_cpu, NM_PSI_CPU)
NODE_GET(h_psi_mem, NM_PSI_MEM)
NODE_GET(h_psi_io, NM_PSI_IO)
NODE_GET(h_rx, NM_NET_RX)
NODE_GET(h_tx, NM_NET_TX)
NODE_GET(h_retrans, NM_TCP_RETRANS)
NODE_GET(h_temp, NM_TEMP)
NODE_GET(h_power, NM_POWER)

static bool
h_mem(const struct node_view *nv, double *v)
{
	return heat_ratio(nv, NM_MEM_USED, NM_MEM_TOTAL, false, v);
}

static bool
h_state(const struct node_view *nv, double *v)
{
	return heat_ratio(nv, NM_STATE_FREE, NM_STATE_SIZE, true, v);
}

static bool
h_gpu(const struct node_view *nv, double *v)
{
	return heat_gpu(nv, GM_UTIL, -1, v);
}

static bool
h_gpu_mem(const struct node_view *nv, double *v)
{
	return heat_gpu(nv, GM_MEM_USED, GM_MEM_TOTAL, v);
}

static const struct heat_row heat_rows[] = {
	{ "cpu", h_cpu, 100, HF_PCT },
	{ "memory", h_mem, 100, HF_PCT },
	{ "gpu", h_gpu, 100, HF_PCT },
	{ "gpu memory", h_gpu_mem, 100, HF_PCT },
	{ "disk busy", h_disk, 100, HF_PCT },
	{ "state fs used", h_state, 100, HF_PCT },
	{ "cpu pressure", h_psi_cpu, 100, HF_PCT },
	{ "memory pressure", h_psi_mem, 100, HF_PCT },
	{ "io pressure", h_psi_io, 100, HF_PCT },
	{ "received", h_rx, 0, HF_RATE },
	{ "sent", h_tx, 0, HF_RATE },
	{ "tcp retransmits", h_retrans, 0, HF_PER_S },
	{ "temperature", h_temp, 0, HF_TEMP },
	{ "power", h_power, 0, HF_WATTS },
};
#define N_HEAT	((int)(sizeof heat_rows / sizeof heat_rows[0]))

int
heat_count(void)
{
	return N_HEAT;
}

const char *
heat_name(int k)
{
	return heat_rows[k >= 0 && k < N_HEAT ? k : 0].name;
}

double
heat_max(int k, struct console *c)
{
	const struct heat_row *h = &heat_rows[k >= 0 && k < N_HEAT ? k : 0];
	double	 max = 0, v;

	if (h->ceiling > 0)
		return h->ceiling;
	for (int i = 0; i < backend_nnodes(c->b); i++) {
		const struct node_view *nv = backend_node_at(c->b, i);

		if (nv->up && h->get(nv, &v) && v > max)
			max = v;
	}
	return max;
}

void
heat_cell_of(int k, const struct node_view *nv, double max,
    struct heat_cell *hc, char *value, size_t len)
{
	const struct heat_row *h = &heat_rows[k >= 0 && k < N_HEAT ? k : 0];
	double	 v = 0, f;
	bool	 ok = nv->up && h->get(nv, &v);

	switch (h->fmt) {
	case HF_PCT: fmt_num(value, len, ok, "%.0f%%", v); break;
	case HF_RATE: fmt_rate(value, len, ok, v); break;
	case HF_PER_S: fmt_num(value, len, ok, "%.1f/s", v); break;
	case HF_TEMP: fmt_num(value, len, ok, "%.0fC", v); break;
	case HF_WATTS: fmt_num(value, len, ok, "%.0fW", v); break;
	}
	hc->value = value;
	f = max > 0 ? 100 * v / max : 0;
	hc->level = !nv->up ? -1 : !ok ? -2 : f < 25 ? 0 : f < 60 ? 1 :
	    f < 85 ? 2 : 3;
	/* A file system short of room is hot whatever its share. */
	if (ok && h->get == h_state && node_fs_low(&nv->last, false))
		hc->level = 3;
}

int
action_heat(struct console *c, int key)
{
	(void)key;
	c->heat = (c->heat + 1) % N_HEAT;
	console_say(c, EL_MESSAGE, "heat map: nodes by %s", heat_name(c->heat));
	return ACT_REDRAW;
}
