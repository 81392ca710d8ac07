/*
 * backend-prom-node.c: the nodes' series of the Prometheus exposition
 * (backend-prom.c has the rest): hunter_node_up, one family per row of
 * the node table, of each list's (a CPU's with its core label, an
 * interface's, a disk's device's), hunter_node_blas_info, and the GPUs'
 * (hunter_gpu_info with the name, one family per row of the GPU table).
 * A node's series are there only while it is heard from, and an
 * unknown value is left out.
 */
#include <stdio.h>
#include <string.h>

#include "lib/promtext.h"
#include "backend/core/backend-internal.h"

static void
prom_node_labels(const struct node_view *nv, char *buf, size_t len)
{
	const char *k[] = { "node", "rack" };
	const char *v[] = { nv->spec->name, nv->spec->rack };

	prom_labels(buf, len, 2, k, v);
}

/* Item i of a list of a node, with the item's label. */
static void
prom_item_labels(const struct node_view *nv, const char *key,
    const char *item, char *buf, size_t len)
{
	const char *k[] = { "node", "rack", key };
	const char *v[] = { nv->spec->name, nv->spec->rack, item };

	prom_labels(buf, len, 3, k, v);
}

/* Every row of list l over every heard node: the items of node n are
 * items(nv, &count). */
static void
prom_list(FILE *f, struct backend *b, double now, const struct metric_list *l,
    const char *key, const void *(*items)(const struct node_view *, int *))
{
	struct prom_family fm;
	char		 lab[512], name[NODE_NAME_MAX];

	for (int r = 0; r < l->n; r++) {
		const struct metric_field *fd = &l->f[r];

		if (fd->prom == NULL)
			continue;
		prom_family(&fm, "hunter_node_", fd->prom,
		    fd->kind == METRIC_COUNTER, fd->help);
		for (int n = 0; n < b->fleet.n; n++) {
			const struct node_view *nv = &b->nodes[n];
			int		 count;
			const char	*it;

			if (!node_heard(nv, now))
				continue;
			it = items(nv, &count);
			for (int i = 0; i < count; i++, it += l->size) {
				uint64_t valid;

				memcpy(&valid, it + l->valid_at, sizeof valid);
				if (!((valid >> r) & 1))
					continue;
				if (l->name_len > 0)
					snprintf(name, sizeof name, "%s", it +
					    l->name_at);
				else
					snprintf(name, sizeof name, "%d", i);
				prom_item_labels(nv, key, name, lab, sizeof lab);
				prom_sample(f, &fm, lab, prom_value(fd, it,
				    fd->at));
			}
		}
	}
}

static const void *
cores_of(const struct node_view *nv, int *n)
{
	*n = nv->lists.ncores;
	return nv->lists.cores;
}

static const void *
ifaces_of(const struct node_view *nv, int *n)
{
	*n = nv->lists.nifaces;
	return nv->lists.ifaces;
}

static const void *
disks_of(const struct node_view *nv, int *n)
{
	*n = nv->lists.ndisks;
	return nv->lists.disks;
}

/* hunter_node_blas_info{library, kernel, coretype}: its agent's hello. */
static void
prom_blas(FILE *f, struct backend *b, double now)
{
	struct prom_family fm;
	char		 lab[600];

	prom_family(&fm, "hunter_node_", "blas_info", false, "1 for the BLAS "
	    "library and kernel (OpenBLAS's core) a node's ranks run, and "
	    "the OPENBLAS_CORETYPE they inherit");
	for (int n = 0; n < b->fleet.n; n++) {
		const struct node_view *nv = &b->nodes[n];
		const char *k[] = { "node", "rack", "library", "kernel",
		    "coretype" };
		const char *v[] = { nv->spec->name, nv->spec->rack, nv->blas.lib,
		    nv->blas.kernel, nv->blas.coretype };

		if (!node_heard(nv, now) || nv->blas.lib[0] == '\0')
			continue;
		prom_labels(lab, sizeof lab, nv->blas.coretype[0] ? 5 : 4, k, v);
		prom_sample(f, &fm, lab, 1);
	}
}

static void
prom_gpus(FILE *f, struct backend *b, double now)
{
	struct prom_family fm;
	char		 gl[600];

	prom_family(&fm, "hunter_gpu_", "info", false,
	    "1 for each GPU a node's agent sees, with its name");
	for (int n = 0; n < b->fleet.n; n++) {
		const struct node_view *nv = &b->nodes[n];

		for (int g = 0; node_heard(nv, now) && g < nv->ngpus; g++) {
			char	 idx[16];
			const char *k[] = { "node", "rack", "gpu", "name" };
			const char *v[] = { nv->spec->name, nv->spec->rack, idx,
			    nv->gpus[g].name };

			snprintf(idx, sizeof idx, "%d", nv->gpus[g].index);
			prom_labels(gl, sizeof gl, nv->gpus[g].name[0] ? 4 : 3,
			    k, v);
			prom_sample(f, &fm, gl, 1);
		}
	}
	for (int i = 0; i < GM_COUNT; i++) {
		const struct metric_field *fd = &gpu_metrics[i];

		if (fd->prom == NULL)
			continue;
		prom_family(&fm, "hunter_gpu_", fd->prom,
		    fd->kind == METRIC_COUNTER, fd->help);
		for (int n = 0; n < b->fleet.n; n++) {
			const struct node_view *nv = &b->nodes[n];

			for (int g = 0; node_heard(nv, now) && g < nv->ngpus;
			    g++) {
				char	 idx[16];
				const char *k[] = { "node", "rack", "gpu" };
				const char *v[] = { nv->spec->name,
				    nv->spec->rack, idx };

				if (!gpu_sample_valid(&nv->gpus[g], i))
					continue;
				snprintf(idx, sizeof idx, "%d",
				    nv->gpus[g].index);
				prom_labels(gl, sizeof gl, 3, k, v);
				prom_sample(f, &fm, gl, prom_value(fd,
				    &nv->gpus[g], fd->at));
			}
		}
	}
}

void
prom_nodes(FILE *f, struct backend *b, double now)
{
	struct prom_family fm;
	char		 lab[512];

	prom_family(&fm, "hunter_node_", "up", false, "1 while the node's "
	    "agent is connected and heard from in the last 5 s");
	for (int n = 0; n < b->fleet.n; n++) {
		prom_node_labels(&b->nodes[n], lab, sizeof lab);
		prom_sample(f, &fm, lab, node_heard(&b->nodes[n], now));
	}
	for (int i = 0; i < NM_COUNT; i++) {
		const struct metric_field *fd = &node_metrics[i];

		if (fd->prom == NULL)
			continue;
		prom_family(&fm, "hunter_node_", fd->prom,
		    fd->kind == METRIC_COUNTER, fd->help);
		for (int n = 0; n < b->fleet.n; n++) {
			const struct node_view *nv = &b->nodes[n];

			if (!node_heard(nv, now) ||
			    !node_sample_valid(&nv->last, i))
				continue;
			prom_node_labels(nv, lab, sizeof lab);
			prom_sample(f, &fm, lab, prom_value(fd, &nv->last,
			    fd->at));
		}
	}
	prom_list(f, b, now, &core_list, "core", cores_of);
	prom_list(f, b, now, &iface_list, "interface", ifaces_of);
	prom_list(f, b, now, &disk_list, "device", disks_of);
	prom_blas(f, b, now);
	prom_gpus(f, b, now);
}
