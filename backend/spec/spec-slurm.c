/*
 * spec-slurm.c: what scontrol printed about an allocation, made into a
 * cluster (spec-slurm.h).  Nothing here runs a command, so the unit tests
 * feed it captured output.  Slurm's names end up in paths and on srun's
 * command line, so they are held to the rules of a cluster file: node
 * names [A-Za-z0-9._-], addresses what a host name or address can hold.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>

#include "lib/errf.h"
#include "backend/spec/spec-internal.h"
#include "backend/spec/spec-slurm.h"

/* As many nodes as a cluster file may hold. */
#define SLURM_MAX_NODES		4096

struct names {
	char	**v;
	int	 n, cap;
};

static int
names_add(struct names *ns, const char *s, size_t len, char *err,
    size_t errlen)
{
	if (ns->n >= SLURM_MAX_NODES) {
		errf(err, errlen, "more than %d nodes", SLURM_MAX_NODES);
		return -1;
	}
	if (ns->n == ns->cap) {
		ns->cap = ns->cap ? ns->cap * 2 : 16;
		ns->v = spec_xreallocarray(ns->v, (size_t)ns->cap, sizeof *ns->v);
	}
	ns->v[ns->n++] = spec_xstrndup(s, len);
	return 0;
}

/* One element of a host list: text with [ranges] groups, expanded from
 * the first group on, each value followed by the rest of the element. */
static int
expand_one(const char *s, size_t len, struct names *ns, char *err,
    size_t errlen)
{
	const char	*lb = memchr(s, '[', len), *rb, *p;
	char		 buf[512];

	if (lb == NULL) {
		if (memchr(s, ']', len) != NULL)
			goto bad;
		return len == 0 ? 0 : names_add(ns, s, len, err, errlen);
	}
	if ((rb = memchr(lb, ']', len - (size_t)(lb - s))) == NULL)
		goto bad;
	for (p = lb + 1; p < rb; ) {
		const char	*q = p, *dash = NULL;
		unsigned long	 lo, hi;
		int		 width;
		char		*end;

		while (q < rb && *q != ',')
			q++;
		for (const char *d = p; d < q; d++) {
			if (*d == '-')
				dash = d;
			else if (!isdigit((unsigned char)*d))
				goto bad;
		}
		if (q == p || dash == p || dash == q - 1)
			goto bad;
		lo = strtoul(p, &end, 10);
		hi = dash != NULL ? strtoul(dash + 1, &end, 10) : lo;
		/* "n[01-10]" keeps the width written: n01 ... n10. */
		width = p[0] == '0' ? (int)((dash ? dash : q) - p) : 0;
		if (hi < lo || hi - lo >= SLURM_MAX_NODES)
			goto bad;
		for (unsigned long v = lo; v <= hi; v++) {
			int n = snprintf(buf, sizeof buf, "%.*s%0*lu%.*s",
			    (int)(lb - s), s, width, v,
			    (int)(len - (size_t)(rb + 1 - s)), rb + 1);

			if (n < 0 || (size_t)n >= sizeof buf)
				goto bad;
			if (expand_one(buf, (size_t)n, ns, err, errlen) != 0)
				return -1;
		}
		p = q < rb ? q + 1 : q;
	}
	return 0;
bad:
	errf(err, errlen, "cannot read the host list element '%.*s'",
	    (int)(len < 200 ? len : 200), s);
	return -1;
}

int
spec_slurm_expand(const char *list, char ***names, int *n, char *err,
    size_t errlen)
{
	struct names	 ns = { 0 };
	const char	*p = list, *start = list;
	int		 depth = 0;

	for (;; p++) {
		if (*p == '[')
			depth++;
		else if (*p == ']')
			depth--;
		if ((*p == ',' && depth == 0) || *p == '\0') {
			if (expand_one(start, (size_t)(p - start), &ns, err,
			    errlen) != 0) {
				spec_slurm_names_free(ns.v, ns.n);
				return -1;
			}
			if (*p == '\0')
				break;
			start = p + 1;
		}
	}
	*names = ns.v;
	*n = ns.n;
	return 0;
}

void
spec_slurm_names_free(char **names, int n)
{
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* The value of KEY= in a line of KEY=VALUE words (the first one), into
 * buf; false when the line has no such word.  Values never read here
 * hold no space (OS= does, and is skipped as words of its own). */
static bool
slurm_field(const char *line, const char *key, char *buf, size_t len)
{
	size_t		 klen = strlen(key), n;
	const char	*p = line;

	while ((p = strstr(p, key)) != NULL) {
		if ((p == line || isspace((unsigned char)p[-1])) &&
		    p[klen] == '=') {
			p += klen + 1;
			for (n = 0; p[n] != '\0' && !isspace((unsigned char)p[n]);
			    n++)
				;
			snprintf(buf, len, "%.*s", (int)n, p);
			return true;
		}
		p += klen;
	}
	return false;
}

static int
slurm_int(const char *s)
{
	char	*end;
	long	 v = strtol(s, &end, 10);

	return end == s || *end != '\0' || v < 0 || v > 1000000 ? -1 : (int)v;
}

int
spec_slurm_gres_gpus(const char *gres)
{
	const char	*p = gres;
	int		 total = 0;

	while (*p != '\0') {
		const char	*e = p;
		int		 depth = 0;
		char		 item[256], *colon, *paren;

		while (*e != '\0' && (*e != ',' || depth > 0)) {
			depth += *e == '(' ? 1 : *e == ')' ? -1 : 0;
			e++;
		}
		snprintf(item, sizeof item, "%.*s", (int)(e - p), p);
		if ((paren = strchr(item, '(')) != NULL)
			*paren = '\0';
		colon = strchr(item, ':');
		if (strncmp(item, "gpu", 3) == 0 && (item[3] == '\0' ||
		    item[3] == ':')) {
			/* gpu, gpu:N or gpu:TYPE:N */
			char	*last = strrchr(item, ':');
			int	 v = last != NULL ? slurm_int(last + 1) : 1;

			if (v < 0 && colon != NULL && colon == last)
				v = 1;		/* gpu:TYPE */
			total += v > 0 ? v : 0;
		}
		p = *e == ',' ? e + 1 : e;
	}
	return total;
}

int
spec_slurm_parse_node(const char *line, struct slurm_node *n)
{
	char	 v[256];
	int	 cpus = -1;

	memset(n, 0, sizeof *n);
	n->cpus = -1;
	if (!slurm_field(line, "NodeName", v, sizeof v) || v[0] == '\0' ||
	    strlen(v) >= sizeof n->name)
		return -1;
	snprintf(n->name, sizeof n->name, "%s", v);
	if (slurm_field(line, "NodeAddr", v, sizeof v))
		snprintf(n->addr, sizeof n->addr, "%s", v);
	if (slurm_field(line, "NodeHostName", v, sizeof v))
		snprintf(n->host, sizeof n->host, "%s", v);
	if (slurm_field(line, "CPUEfctv", v, sizeof v))
		cpus = slurm_int(v);
	if (cpus < 0 && slurm_field(line, "CPUTot", v, sizeof v))
		cpus = slurm_int(v);
	n->cpus = cpus;
	if (slurm_field(line, "Gres", v, sizeof v))
		n->gpus = spec_slurm_gres_gpus(v);
	return 0;
}

int
spec_slurm_cpus_per_node(const char *s, int *out, int n)
{
	const char	*p = s;
	int		 k = 0;

	while (*p != '\0') {
		char	*end;
		long	 v = strtol(p, &end, 10), times = 1;

		if (end == p || v < 0 || v > 1000000)
			return -1;
		p = end;
		if (strncmp(p, "(x", 2) == 0) {
			times = strtol(p + 2, &end, 10);
			if (end == p + 2 || *end != ')' || times < 1 ||
			    times > SLURM_MAX_NODES)
				return -1;
			p = end + 1;
		}
		for (long i = 0; i < times; i++) {
			if (k >= n)
				return -1;
			out[k++] = (int)v;
		}
		if (*p == ',')
			p++;
		else if (*p != '\0')
			return -1;
	}
	return k == n ? 0 : -1;
}

static bool
slurm_name_ok(const char *s, bool host)
{
	if (s[0] == '\0' || s[0] == '.' || s[0] == '-')
		return false;
	for (; *s != '\0'; s++) {
		if (!isalnum((unsigned char)*s) && *s != '.' && *s != '_' &&
		    *s != '-' && !(host && *s == ':'))
			return false;
	}
	return true;
}

/* Rack names hold what a cluster file's may; anything else becomes '_'. */
static void
slurm_rack(char *dst, size_t len, const char *sw)
{
	size_t	 i;

	for (i = 0; sw[i] != '\0' && i + 1 < len; i++)
		dst[i] = isalnum((unsigned char)sw[i]) || sw[i] == '.' ||
		    sw[i] == '-' || sw[i] == '_' ? sw[i] : '_';
	dst[i] = '\0';
}

/* The racks: each node's leaf switch (Level=0) in the topology. */
static void
slurm_topology(const char *topo, struct cluster_spec *c)
{
	const char	*line = topo;
	char		 buf[8192], sw[SPEC_NAME_MAX], lvl[16], nodes[4096], e[64];

	while (line != NULL && *line != '\0') {
		const char	*nl = strchr(line, '\n');
		size_t		 len = nl ? (size_t)(nl - line) : strlen(line);
		char		**names;
		int		 nn;

		snprintf(buf, sizeof buf, "%.*s", (int)len, line);
		line = nl ? nl + 1 : NULL;
		if (!slurm_field(buf, "SwitchName", sw, sizeof sw) ||
		    !slurm_field(buf, "Level", lvl, sizeof lvl) ||
		    strcmp(lvl, "0") != 0 ||
		    !slurm_field(buf, "Nodes", nodes, sizeof nodes) ||
		    spec_slurm_expand(nodes, &names, &nn, e, sizeof e) != 0)
			continue;
		for (int i = 0; i < nn; i++) {
			for (int k = 0; k < c->n_nodes; k++) {
				if (strcmp(c->nodes[k].name, names[i]) == 0)
					slurm_rack(c->nodes[k].rack,
					    sizeof c->nodes[k].rack, sw);
			}
		}
		spec_slurm_names_free(names, nn);
	}
}

/* The node line of scontrol's answer that describes name. */
static int
slurm_find(const char *text, const char *name, struct slurm_node *out)
{
	const char	*line = text;
	char		 buf[8192];

	while (line != NULL && *line != '\0') {
		const char	*nl = strchr(line, '\n');
		size_t		 len = nl ? (size_t)(nl - line) : strlen(line);

		snprintf(buf, sizeof buf, "%.*s", (int)len, line);
		line = nl ? nl + 1 : NULL;
		if (spec_slurm_parse_node(buf, out) == 0 &&
		    strcmp(out->name, name) == 0)
			return 0;
	}
	return -1;
}

/* The names scontrol show hostnames printed, one a line. */
static int
slurm_hostnames(const char *text, struct names *ns, char *err, size_t errlen)
{
	const char	*p = text;

	while (*p != '\0') {
		const char	*e = p;

		while (*e != '\0' && *e != '\n')
			e++;
		while (p < e && isspace((unsigned char)*p))
			p++;
		size_t len = (size_t)(e - p);
		while (len > 0 && isspace((unsigned char)p[len - 1]))
			len--;
		if (len > 0 && names_add(ns, p, len, err, errlen) != 0)
			return -1;
		p = *e == '\n' ? e + 1 : e;
	}
	return 0;
}

static int
slurm_node_spec(const struct slurm_alloc *a, const char *name,
    const int *cpus, struct node_spec *n, char *err, size_t errlen)
{
	struct slurm_node sn;

	if (!slurm_name_ok(name, false) || strlen(name) >= sizeof n->name) {
		errf(err, errlen, "Slurm node '%.64s': hunter takes node "
		    "names of [A-Za-z0-9._-] only", name);
		return -1;
	}
	if (slurm_find(a->nodes, name, &sn) != 0) {
		errf(err, errlen, "scontrol show node says nothing of node "
		    "%s", name);
		return -1;
	}
	if ((sn.addr[0] != '\0' && !slurm_name_ok(sn.addr, true)) ||
	    (sn.host[0] != '\0' && !slurm_name_ok(sn.host, true))) {
		errf(err, errlen, "node %s: NodeAddr '%.64s' or NodeHostName "
		    "'%.64s' is not a host name or address", name, sn.addr,
		    sn.host);
		return -1;
	}
	memset(n, 0, sizeof *n);
	snprintf(n->name, sizeof n->name, "%s", name);
	snprintf(n->host, sizeof n->host, "%s", sn.host[0] ? sn.host : name);
	snprintf(n->addr, sizeof n->addr, "%s", sn.addr);
	snprintf(n->slurm_job, sizeof n->slurm_job, "%s", a->job);
	strcpy(n->rack, "default");
	n->cpu_slots = cpus != NULL ? *cpus : sn.cpus > 0 ? sn.cpus : 1;
	n->cuda_slots = sn.gpus;
	return 0;
}

int
spec_slurm_build(const struct slurm_alloc *a, struct cluster_spec *c,
    char *err, size_t errlen)
{
	struct names	 ns = { 0 };
	int		*cpus = NULL, spares = a->spares > 0 ? a->spares : 0;
	bool		 have_cpus = false;

	memset(c, 0, sizeof *c);
	if (!slurm_name_ok(a->job, false) || strlen(a->job) >= sizeof c->slurm_job) {
		errf(err, errlen, "SLURM_JOB_ID '%.32s' is not a job id",
		    a->job);
		return -1;
	}
	if (slurm_hostnames(a->hostnames, &ns, err, errlen) != 0)
		goto fail;
	if (ns.n == 0) {
		errf(err, errlen, "scontrol show hostnames '%.200s' named "
		    "no node", a->nodelist ? a->nodelist : "");
		goto fail;
	}
	if (spares >= ns.n) {
		errf(err, errlen, "--spares %d leaves none of the %d node%s "
		    "of Slurm job %s to run on", spares, ns.n, ns.n == 1 ? "" :
		    "s", a->job);
		goto fail;
	}
	cpus = spec_xcalloc((size_t)ns.n, sizeof *cpus);
	have_cpus = a->cpus_per_node != NULL &&
	    spec_slurm_cpus_per_node(a->cpus_per_node, cpus, ns.n) == 0;
	c->nodes = spec_xcalloc((size_t)ns.n, sizeof *c->nodes);
	c->n_nodes = ns.n;
	for (int i = 0; i < ns.n; i++) {
		if (slurm_node_spec(a, ns.v[i], have_cpus ? &cpus[i] : NULL,
		    &c->nodes[i], err, errlen) != 0)
			goto fail;
		c->nodes[i].spare = i >= ns.n - spares;
		for (int k = 0; k < i; k++) {
			if (strcmp(c->nodes[k].name, c->nodes[i].name) == 0) {
				errf(err, errlen, "node %s is listed twice",
				    ns.v[i]);
				goto fail;
			}
		}
	}
	if (a->topology != NULL)
		slurm_topology(a->topology, c);
	snprintf(c->name, sizeof c->name, "slurm-%s", a->job);
	snprintf(c->slurm_job, sizeof c->slurm_job, "%s", a->job);
	c->sim_racks = 1;
	free(cpus);
	spec_slurm_names_free(ns.v, ns.n);
	return 0;
fail:
	free(cpus);
	spec_slurm_names_free(ns.v, ns.n);
	spec_cluster_free(c);
	return -1;
}
