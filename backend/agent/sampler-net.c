/*
 * sampler-net.c: the network of a node: /proc/net/dev summed over every
 * interface but lo (bytes, errors and drops a second: the growth of each
 * interface's counters, so one that comes or goes between two samples
 * does not make a sum unknown; one whose counter went back does) and
 * each of them (bytes, packets, errors, drops a second) for the list,
 * and TCP's
 * retransmitted segments a second from /proc/net/snmp, the first thing
 * to look at when an exchange slows.  An interface whose counters are
 * all zero (never up, or a placeholder like ifb0) is left out of the
 * list, not of the sums.
 */
#include <stdlib.h>
#include <string.h>

#include "backend/agent/sampler-internal.h"

/* Which of the sums (rx, tx, errors, drops) each list row goes to. */
static const int net_sum_of[IM_COUNT] = { [IM_RX] = 0, [IM_TX] = 1,
	[IM_RX_PACKETS] = -1, [IM_TX_PACKETS] = -1, [IM_RX_ERRORS] = 2,
	[IM_TX_ERRORS] = 2, [IM_RX_DROPS] = 3, [IM_TX_DROPS] = 3 };

struct sampler_net_arg {
	struct sampler		*s;
	struct node_lists	*nl;
	double			 dt;		/* since the last sample; 0 none */
	uint64_t		 sum[4];	/* rx tx bytes, errors, drops */
	bool			 reset[4];	/* a counter of it went back */
};

/* "  eth0: rxbytes packets errs drop fifo frame compressed multicast
 * txbytes packets errs drop ...": the counters of the list's rows, in
 * the order of enum iface_metric; their growth since the last sample
 * into the sums (an interface new since then adds nothing yet) and, as
 * rates, into the list. */
static int
sampler_net_line(char *line, void *arg)
{
	struct sampler_net_arg	*a = arg;
	struct sampler_named	*e;
	struct iface_sample	*is = NULL;
	unsigned long long	 c[16];
	uint64_t		 cur[IM_COUNT];
	char			*colon, *name = line, *p, *end;
	int			 n;

	if ((colon = strchr(line, ':')) == NULL)
		return 0;
	*colon = '\0';
	name += strspn(name, " \t");
	if (strcmp(name, "lo") == 0)
		return 0;
	for (n = 0, p = colon + 1; n < 16; n++, p = end) {
		c[n] = strtoull(p, &end, 10);
		if (end == p)
			break;
	}
	if (n < 12)
		return 0;
	cur[IM_RX] = c[0];
	cur[IM_TX] = c[8];
	cur[IM_RX_PACKETS] = c[1];
	cur[IM_TX_PACKETS] = c[9];
	cur[IM_RX_ERRORS] = c[2];
	cur[IM_TX_ERRORS] = c[10];
	cur[IM_RX_DROPS] = c[3];
	cur[IM_TX_DROPS] = c[11];
	if ((e = sampler_named(a->s->ifaces, SAMPLER_IFACES, name)) == NULL)
		return 0;
	if (a->nl != NULL && (c[0] | c[1] | c[8] | c[9]) != 0 &&
	    a->nl->nifaces < NODE_IFACES_MAX) {
		is = &a->nl->ifaces[a->nl->nifaces++];
		memset(is, 0, sizeof *is);
		snprintf(is->name, sizeof is->name, "%s", name);
	}
	for (int i = 0; e->p.have && a->dt > 0 && i < IM_COUNT; i++) {
		int	 k = net_sum_of[i];

		if (cur[i] < e->p.v[i]) {
			if (k >= 0)
				a->reset[k] = true;
			continue;
		}
		if (k >= 0)
			a->sum[k] += cur[i] - e->p.v[i];
		if (is != NULL) {
			is->v[i] = (double)(cur[i] - e->p.v[i]) / a->dt;
			is->valid |= UINT64_C(1) << i;
		}
	}
	e->p.have = true;
	memcpy(e->p.v, cur, sizeof cur);
	return 0;
}

void
sampler_net(struct sampler *s, struct node_sample *ns, struct node_lists *nl,
    double now)
{
	static const enum node_metric m[4] = { NM_NET_RX, NM_NET_TX,
		NM_NET_ERRORS, NM_NET_DROPS };
	struct sampler_net_arg a = { .s = s, .nl = nl };

	a.dt = s->net.have ? now - s->net.t : 0;
	sampler_named_begin(s->ifaces, SAMPLER_IFACES);
	if (sampler_lines(s, "/proc/net/dev", sampler_net_line, &a) == -1) {
		s->net.have = false;
		sampler_named_end(s->ifaces, SAMPLER_IFACES);
		for (int i = 0; i < SAMPLER_IFACES; i++)
			s->ifaces[i].p.have = false;
		return;
	}
	sampler_named_end(s->ifaces, SAMPLER_IFACES);
	for (int k = 0; a.dt > 0 && k < 4; k++) {
		if (!a.reset[k])
			sampler_set(ns, m[k], (double)a.sum[k] / a.dt);
	}
	s->net.have = true;
	s->net.t = now;
}

struct sampler_tcp_arg {
	int		 col;		/* RetransSegs' column; -1 not yet */
	uint64_t	 v[2];		/* the value, found */
};

/* "Tcp: RtoAlgorithm ... RetransSegs ..." then "Tcp: 1 200 ...": the
 * header names the column. */
static int
sampler_tcp_line(char *line, void *arg)
{
	struct sampler_tcp_arg *a = arg;
	char		*save = NULL, *t;
	int		 i = 0;

	if (strncmp(line, "Tcp:", 4) != 0)
		return 0;
	for (t = strtok_r(line + 4, " \t", &save); t != NULL;
	    t = strtok_r(NULL, " \t", &save), i++) {
		if (a->col < 0 && strcmp(t, "RetransSegs") == 0) {
			a->col = i;
			return 0;
		}
		if (a->col >= 0 && i == a->col) {
			a->v[0] = strtoull(t, NULL, 10);
			a->v[1] = 1;
			return 1;
		}
	}
	return 0;
}

void
sampler_tcp(struct sampler *s, struct node_sample *ns, double now)
{
	struct sampler_tcp_arg a = { -1, { 0, 0 } };
	double		 r;

	if (sampler_lines(s, "/proc/net/snmp", sampler_tcp_line, &a) == -1 ||
	    !a.v[1]) {
		s->tcp.have = false;
		return;
	}
	if (sampler_rates(&s->tcp, a.v, 1, now, 1, &r))
		sampler_set(ns, NM_TCP_RETRANS, r);
}
