/*
 * spec-cluster.c: the cluster file of hunter(1), JOB FILES, and the cluster
 * hunter uses when given none.  Names, racks and users are restricted to
 * [A-Za-z0-9._-] and hosts to what a host name or address can hold,
 * because all of them end up on ssh command lines and in paths.
 */
#include "config.h"

#include <strings.h>

#include "backend/spec/spec-internal.h"

#define C(member)	offsetof(struct cluster_spec, member)
#define CS(member)	SPEC_FSIZE(struct cluster_spec, member)
#define N(member)	offsetof(struct node_spec, member)
#define NS(member)	SPEC_FSIZE(struct node_spec, member)

#define CLUSTER_MAX_NODES	SPEC_MAX_NODES

static const struct spec_field cluster_devices[] = {
	{ .key = "cpu", .type = SF_INT, .off = N(cpu_slots),
	  .range = SR_NONNEG },
	{ .key = "cuda", .type = SF_INT, .off = N(cuda_slots),
	  .range = SR_NONNEG },
	{ NULL }
};

static const struct spec_field cluster_node[] = {
	{ .key = "name", .type = SF_NAME, .off = N(name), .size = NS(name),
	  .what = "node name", .required = 1 },
	{ .key = "host", .type = SF_HOST, .off = N(host), .size = NS(host),
	  .what = "host", .required = 1 },
	{ .key = "user", .type = SF_NAME, .off = N(user), .size = NS(user),
	  .what = "user" },
	{ .key = "port", .type = SF_INT, .off = N(port), .range = SR_PORT },
	{ .key = "rack", .type = SF_NAME, .off = N(rack), .size = NS(rack),
	  .what = "rack" },
	{ .key = "devices", .type = SF_MAP, .sub = cluster_devices },
	{ .key = "spare", .type = SF_BOOL, .off = N(spare) },
	{ .key = "state_dir", .type = SF_SAFEPATH, .off = N(state_dir),
	  .size = NS(state_dir) },
	{ .key = "addr", .type = SF_HOST, .off = N(addr), .size = NS(addr),
	  .what = "address" },
	{ NULL }
};

static const struct spec_field cluster_ssh[] = {
	{ .key = "config", .type = SF_PATH, .off = C(ssh.config),
	  .size = CS(ssh.config) },
	{ .key = "identity", .type = SF_PATH, .off = C(ssh.identity),
	  .size = CS(ssh.identity) },
	{ .key = "known_hosts", .type = SF_PATH, .off = C(ssh.known_hosts),
	  .size = CS(ssh.known_hosts) },
	{ NULL }
};

static void	cluster_nodes(struct spec_walk *, const struct ydoc_node *,
		    const char *, void *);
static void	cluster_sched(struct spec_walk *, const struct ydoc_node *,
		    const char *, void *);

#define SC(m)	offsetof(struct sched_config, m)
const struct spec_field spec_sched_fields[] = {
	{ .key = "policy", .type = SF_NAME, .off = SC(policy),
	  .size = sizeof ((struct sched_config *)0)->policy,
	  .what = "scheduling policy" },
	{ .key = "interval", .type = SF_DURATION, .off = SC(interval_s),
	  .range = SR_POS },
	{ .key = "restart", .type = SF_DURATION, .off = SC(restart_s),
	  .range = SR_NONNEG },
	/* The spellings of the policy protocol's request (seconds). */
	{ .key = "interval_s", .type = SF_DURATION, .off = SC(interval_s),
	  .range = SR_POS },
	{ .key = "restart_s", .type = SF_DURATION, .off = SC(restart_s),
	  .range = SR_NONNEG },
	{ NULL }
};
#undef SC

/* scheduler: {...}, walked into the cluster's struct sched_config. */
static void
cluster_sched(struct spec_walk *w, const struct ydoc_node *v,
    const char *path, void *base)
{
	if (v->kind != YDOC_MAP)
		spec_walk_expect(w, v, path, "a mapping, e.g. scheduler: "
		    "{policy: goodput, interval: 60s}");
	else
		spec_walk_map(w, v, path, spec_sched_fields,
		    &((struct cluster_spec *)base)->sched);
}

static const struct spec_field cluster_fields[] = {
	{ .key = "cluster", .type = SF_NAME, .off = C(name), .size = CS(name),
	  .what = "cluster name" },
	{ .key = "nodes", .type = SF_CUSTOM, .custom = cluster_nodes },
	{ .key = "ssh", .type = SF_MAP, .sub = cluster_ssh },
	{ .key = "simulate", .type = SF_INT, .off = C(simulate),
	  .range = SR_POS },
	{ .key = "racks", .type = SF_INT, .off = C(sim_racks),
	  .range = SR_POS },
	{ .key = "scheduler", .type = SF_CUSTOM, .custom = cluster_sched },
	{ NULL }
};

static void
cluster_node_defaults(struct node_spec *n)
{
	memset(n, 0, sizeof *n);
	strcpy(n->rack, "default");
	n->cpu_slots = 1;
}

/* The "nodes" list: each item is walked with the node table. */
static void
cluster_nodes(struct spec_walk *w, const struct ydoc_node *v,
    const char *path, void *base)
{
	struct cluster_spec	*c = base;
	const struct ydoc_node	*item, *name;
	char			 sub[64], q[64], what[80];
	size_t			 i, k;

	if (v->kind != YDOC_SEQ) {
		spec_walk_error(w, v, "%s: expected a list of nodes, got %s",
		    path, spec_describe(v, what, sizeof what));
		return;
	}
	if (v->n == 0 || v->n > CLUSTER_MAX_NODES) {
		spec_walk_error(w, v, "%s: must hold 1 to %d nodes, got %zu",
		    path, CLUSTER_MAX_NODES, v->n);
		return;
	}
	c->nodes = spec_xcalloc(v->n, sizeof *c->nodes);
	c->n_nodes = (int)v->n;
	for (i = 0; i < v->n; i++) {
		item = v->kids[i];
		cluster_node_defaults(&c->nodes[i]);
		c->nodes[i].line = item->line;
		snprintf(sub, sizeof sub, "%s[%zu]", path, i);
		if (item->kind != YDOC_MAP) {
			spec_walk_error(w, item, "%s: expected a mapping, got "
			    "%s", sub, spec_describe(item, what, sizeof what));
			continue;
		}
		spec_walk_map(w, item, sub, cluster_node, &c->nodes[i]);
		if (c->nodes[i].name[0] == '\0')
			continue;
		for (k = 0; k < i; k++) {
			if (strcmp(c->nodes[k].name, c->nodes[i].name) != 0)
				continue;
			name = ydoc_get(item, "name", NULL);
			spec_quote(q, sizeof q, c->nodes[i].name,
			    strlen(c->nodes[i].name));
			spec_walk_error(w, name, "%s.name: duplicate node name "
			    "'%s' (first at line %d)", sub, q,
			    c->nodes[k].line);
			break;
		}
	}
}

void
spec_cluster_free(struct cluster_spec *c)
{
	free(c->nodes);
	c->nodes = NULL;
	c->n_nodes = 0;
}

int
spec_parse_cluster(const char *name, const char *buf, size_t len,
    struct cluster_spec *c, struct spec_errors *errs)
{
	struct spec_walk	 w = { name, errs, 0 };
	struct ydoc_node	*root;
	const struct ydoc_node	*racks;
	bool			 ok;
	size_t			 nlen = strlen(name);

	memset(c, 0, sizeof *c);
	c->sched = (struct sched_config){ .interval_s = -1, .restart_s = -1 };
	memcpy(c->file, name, nlen < sizeof c->file ? nlen :
	    sizeof c->file - 1);
	if ((root = ydoc_parse(name, buf, len, errs, &ok)) == NULL)
		return -1;
	spec_walk_map(&w, root, "", cluster_fields, c);
	if (c->simulate == 0) {
		if (ydoc_get(root, "cluster", NULL) == NULL)
			spec_walk_error(&w, NULL, "missing required key "
			    "'cluster' (or simulate: N)");
		if (ydoc_get(root, "nodes", NULL) == NULL)
			spec_walk_error(&w, NULL, "missing required key "
			    "'nodes' (or simulate: N)");
	}
	if (c->simulate > SPEC_MAX_NODES) {
		const struct ydoc_node *key = NULL;

		ydoc_get(root, "simulate", &key);
		spec_walk_error(&w, key, "simulate: at most %d nodes, got %d",
		    SPEC_MAX_NODES, c->simulate);
	}
	/* Two racks, as in the default cluster, unless there are fewer nodes. */
	if ((racks = ydoc_get(root, "racks", NULL)) == NULL)
		c->sim_racks = c->simulate == 1 ? 1 : 2;
	else if (c->simulate > 0 && c->sim_racks > c->simulate)
		spec_walk_error(&w, racks, "racks: must be <= simulate (%d), "
		    "got %d", c->simulate, c->sim_racks);
	ydoc_free(root);
	if (!ok || w.nerr != 0) {
		spec_cluster_free(c);
		return -1;
	}
	return 0;
}

void
spec_cluster_default(struct cluster_spec *c)
{
	static const char *const racks[] = { "r1", "r1", "r2", "r2" };
	struct node_spec	*n;
	int			 i;

	memset(c, 0, sizeof *c);
	c->sched = (struct sched_config){ .interval_s = -1, .restart_s = -1 };
	strcpy(c->name, "local");
	c->n_nodes = 4;
	c->nodes = spec_xcalloc(4, sizeof *c->nodes);
	c->sim_racks = 2;
	for (i = 0; i < 4; i++) {
		n = &c->nodes[i];
		cluster_node_defaults(n);
		snprintf(n->name, sizeof n->name, "local%d", i);
		strcpy(n->host, "local");
		strcpy(n->rack, racks[i]);
		n->cpu_slots = 2;
		n->spare = i == 3;
	}
}

const char *
spec_host_hint(const char *host)
{
	static const char *const here[] = { "localhost",
	    "localhost.localdomain", "ip6-localhost", "ip6-loopback", "::1",
	    NULL };
	bool	 loop = strncmp(host, "127.", 4) == 0;

	for (int i = 0; here[i] != NULL && !loop; i++)
		loop = strcasecmp(host, here[i]) == 0;
	return loop ? " (a host other than local is reached over SSH, this "
	    "machine too: is an sshd listening there?  host: local runs the "
	    "node on this machine without SSH)" : "";
}
