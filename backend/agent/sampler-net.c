/*
 * sampler-net.c: the network of a node: /proc/net/dev summed over every
 * interface but lo (bytes, errors and drops a second) and each of them
 * (bytes, packets, errors, drops a second) for the list, and TCP's
 * retransmitted segments a second from /proc/net/snmp, the first thing
 * to look at when an exchange slows.  An interface whose counters are
 * all zero (never up, or a placeholder like ifb0) is left out of the
 * list, not of the sums.
 */
#include <stdlib.h>
#include <string.h>

#include "backend/agent/sampler-internal.h"

struct sampler_net_arg {
	struct sampler		*s;
	struct node_lists	*nl;
	double			 now;
	uint64_t		 sum[4];	/* rx tx bytes, errors, drops */
};

/* "  eth0: rxbytes packets errs drop fifo frame compressed multicast
 * txbytes packets errs drop ...": the counters of the list's rows, in
 * the order of enum iface_metric. */
static int
sampler_net_line(char *line, void *arg)
{
	struct sampler_net_arg	*a = arg;
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
	a->sum[0] += c[0];
	a->sum[1] += c[8];
	a->sum[2] += c[2] + c[10];
	a->sum[3] += c[3] + c[11];
	cur[IM_RX] = c[0];
	cur[IM_TX] = c[8];
	cur[IM_RX_PACKETS] = c[1];
	cur[IM_TX_PACKETS] = c[9];
	cur[IM_RX_ERRORS] = c[2];
	cur[IM_TX_ERRORS] = c[10];
	cur[IM_RX_DROPS] = c[3];
	cur[IM_TX_DROPS] = c[11];
	if (a->nl != NULL && (c[0] | c[1] | c[8] | c[9]) != 0) {
		struct sampler_named *e = sampler_named(a->s->ifaces,
		    NODE_IFACES_MAX, name);
		struct iface_sample *is;
		double		 r[IM_COUNT];

		if (e == NULL || a->nl->nifaces >= NODE_IFACES_MAX)
			return 0;
		is = &a->nl->ifaces[a->nl->nifaces++];
		memset(is, 0, sizeof *is);
		snprintf(is->name, sizeof is->name, "%s", name);
		if (sampler_rates(&e->p, cur, IM_COUNT, a->now, 1, r)) {
			for (int i = 0; i < IM_COUNT; i++)
				is->v[i] = r[i];
			is->valid = (UINT64_C(1) << IM_COUNT) - 1;
		}
	}
	return 0;
}

void
sampler_net(struct sampler *s, struct node_sample *ns, struct node_lists *nl,
    double now)
{
	struct sampler_net_arg a = { .s = s, .nl = nl, .now = now };
	double		 r[2];

	sampler_named_begin(s->ifaces, NODE_IFACES_MAX);
	if (sampler_lines(s, "/proc/net/dev", sampler_net_line, &a) == -1) {
		s->net.have = s->neterr.have = false;
		sampler_named_end(s->ifaces, NODE_IFACES_MAX);
		return;
	}
	sampler_named_end(s->ifaces, NODE_IFACES_MAX);
	if (sampler_rates(&s->net, a.sum, 2, now, 1, r)) {
		sampler_set(ns, NM_NET_RX, r[0]);
		sampler_set(ns, NM_NET_TX, r[1]);
	}
	if (sampler_rates(&s->neterr, a.sum + 2, 2, now, 1, r)) {
		sampler_set(ns, NM_NET_ERRORS, r[0]);
		sampler_set(ns, NM_NET_DROPS, r[1]);
	}
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
