/*
 * metrics-list.c: what a frame carries several of, through the tables of
 * metrics.c: a node's lists (CPUs as one array a row, interfaces and
 * disks as named objects), its GPUs with their processes, and a rank's
 * report.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backend/proto/metrics.h"

/* Item i of a list's array of items. */
static void *
list_item(const struct metric_list *l, const void *items, int i)
{
	return (char *)items + (size_t)i * l->size;
}

static uint64_t *
list_valid(const struct metric_list *l, void *item)
{
	return (uint64_t *)((char *)item + l->valid_at);
}

/* {"util": [12, 80, null, ...], "freq": [...]}: a row, every item. */
static json_t *
list_columns_json(const struct metric_list *l, const void *items, int n)
{
	json_t	*o = json_object();

	for (int r = 0; r < l->n; r++) {
		json_t	*a = json_array();

		for (int i = 0; i < n; i++) {
			void	*it = list_item(l, items, i);
			json_t	*v = NULL;

			if ((*list_valid(l, it) >> r) & 1)
				v = metrics_value(&l->f[r], it, l->f[r].at);
			json_array_append_new(a, v != NULL ? v : json_null());
		}
		json_object_set_new(o, l->f[r].name, a);
	}
	return o;
}

json_t *
metric_list_json(const struct metric_list *l, const void *items, int n)
{
	json_t	*a;

	if (l->columns)
		return list_columns_json(l, items, n);
	a = json_array();
	for (int i = 0; i < n; i++) {
		void	*it = list_item(l, items, i);
		json_t	*o = json_object();

		if (l->name_len > 0)
			json_object_set_new(o, "name", json_string((char *)it +
			    l->name_at));
		metrics_put(l->f, l->n, NULL, it, *list_valid(l, it), true, o);
		json_array_append_new(a, o);
	}
	return a;
}

/* The columns back: as many items as the longest row says. */
static int
list_columns_read(const struct metric_list *l, const json_t *o, void *items,
    int max, char *err, size_t errlen)
{
	int	 n = 0;

	if (!json_is_object(o)) {
		snprintf(err, errlen, "\"%s\" is not an object", l->key);
		return -1;
	}
	for (int r = 0; r < l->n; r++) {
		const json_t *a = json_object_get(o, l->f[r].name);

		if (a != NULL && !json_is_array(a)) {
			snprintf(err, errlen, "\"%s.%s\" is not an array",
			    l->key, l->f[r].name);
			return -1;
		}
		if ((int)json_array_size(a) > n)
			n = (int)json_array_size(a);
	}
	n = n < max ? n : max;
	for (int i = 0; i < n; i++)
		memset(list_item(l, items, i), 0, l->size);
	for (int r = 0; r < l->n; r++) {
		const json_t *a = json_object_get(o, l->f[r].name);

		for (int i = 0; i < n && i < (int)json_array_size(a); i++) {
			void	*it = list_item(l, items, i);
			int	 rc = metrics_value_read(&l->f[r],
			    json_array_get(a, (size_t)i), it, l->f[r].at, err,
			    errlen);

			if (rc < 0)
				return -1;
			if (rc > 0)
				*list_valid(l, it) |= UINT64_C(1) << r;
		}
	}
	return n;
}

int
metric_list_read(const struct metric_list *l, const json_t *v, void *items,
    int max, char *err, size_t errlen)
{
	int	 n = 0;

	if (v == NULL || json_is_null(v))
		return 0;
	if (l->columns)
		return list_columns_read(l, v, items, max, err, errlen);
	if (!json_is_array(v)) {
		snprintf(err, errlen, "\"%s\" is not an array", l->key);
		return -1;
	}
	for (size_t i = 0; i < json_array_size(v) && n < max; i++) {
		const json_t *o = json_array_get(v, i);
		void	*it = list_item(l, items, n);
		const char *name = json_string_value(json_object_get(o, "name"));

		if (!json_is_object(o)) {
			snprintf(err, errlen, "\"%s\" holds a non-object", l->key);
			return -1;
		}
		memset(it, 0, l->size);
		if (l->name_len > 0)
			snprintf((char *)it + l->name_at, l->name_len, "%s",
			    name != NULL ? name : "");
		if (metrics_read(l->f, l->n, NULL, o, it, list_valid(l, it),
		    err, errlen) != 0)
			return -1;
		n++;
	}
	return n;
}

void
node_lists_put(const struct node_lists *nl, json_t *frame)
{
	json_object_set_new(frame, core_list.key, metric_list_json(&core_list,
	    nl->cores, nl->ncores));
	json_object_set_new(frame, iface_list.key, metric_list_json(
	    &iface_list, nl->ifaces, nl->nifaces));
	json_object_set_new(frame, disk_list.key, metric_list_json(&disk_list,
	    nl->disks, nl->ndisks));
}

int
node_lists_read(const json_t *frame, struct node_lists *nl, char *err,
    size_t errlen)
{
	nl->ncores = metric_list_read(&core_list, json_object_get(frame,
	    core_list.key), nl->cores, NODE_CORES_MAX, err, errlen);
	nl->nifaces = metric_list_read(&iface_list, json_object_get(frame,
	    iface_list.key), nl->ifaces, NODE_IFACES_MAX, err, errlen);
	nl->ndisks = metric_list_read(&disk_list, json_object_get(frame,
	    disk_list.key), nl->disks, NODE_DISKS_MAX, err, errlen);
	if (nl->ncores < 0 || nl->nifaces < 0 || nl->ndisks < 0) {
		nl->ncores = nl->ncores < 0 ? 0 : nl->ncores;
		nl->nifaces = nl->nifaces < 0 ? 0 : nl->nifaces;
		nl->ndisks = nl->ndisks < 0 ? 0 : nl->ndisks;
		return -1;
	}
	return 0;
}

const char *
gpu_metric_name(enum gpu_metric m)
{
	return (unsigned)m < GM_COUNT ? gpu_metrics[m].name : NULL;
}

/* The GPUs as a list of rows: each a column over the GPUs. */
static const struct metric_list gpu_list = { "gpus", gpu_metrics, GM_COUNT,
	sizeof(struct gpu_sample), offsetof(struct gpu_sample, valid),
	offsetof(struct gpu_sample, name), GPU_NAME_MAX, true };

json_t *
gpu_samples_json(const struct gpu_sample *gs, int n)
{
	json_t	*o, *index, *name, *procs;

	if (n <= 0)			/* a CPU node's: nothing to name */
		return json_object();
	o = list_columns_json(&gpu_list, gs, n);
	index = json_array();
	name = json_array();
	procs = json_array();

	for (int i = 0; i < n; i++) {
		json_t	*pl = gs[i].nprocs < 0 ? json_null() : json_array();

		json_array_append_new(index, json_integer(gs[i].index));
		json_array_append_new(name, gs[i].name[0] != '\0' ?
		    json_string(gs[i].name) : json_null());
		for (int p = 0; p < gs[i].nprocs && p < GPU_PROCS_MAX; p++) {
			const struct gpu_proc *gp = &gs[i].procs[p];
			json_t	*po = json_pack("{s:I}", "pid",
			    (json_int_t)gp->pid);

			json_object_set_new(po, "mem", gp->mem >= 0 ?
			    json_integer((json_int_t)gp->mem) : json_null());
			if (gp->owner > 0)
				json_object_set_new(po, "owner",
				    json_integer(gp->owner));
			json_array_append_new(pl, po);
		}
		json_array_append_new(procs, pl);
	}
	json_object_set_new(o, "index", index);
	json_object_set_new(o, "name", name);
	json_object_set_new(o, "procs", procs);
	return o;
}

/* The processes of a GPU's entry; -1 when they are not known. */
static int
gpu_procs_read(const json_t *a, struct gpu_proc *p)
{
	int	 n = 0;

	if (!json_is_array(a))
		return -1;
	for (size_t i = 0; i < json_array_size(a) && n < GPU_PROCS_MAX; i++) {
		const json_t *o = json_array_get(a, i);
		const json_t *mem = json_object_get(o, "mem");

		if (!json_is_integer(json_object_get(o, "pid")))
			continue;
		p[n].pid = (long)json_integer_value(json_object_get(o, "pid"));
		p[n].mem = json_is_number(mem) ? json_number_value(mem) : -1;
		p[n].owner = (long)json_integer_value(json_object_get(o,
		    "owner"));
		n++;
	}
	return n;
}

/* The columns of o back into up to max GPUs; how many, or -1 with err. */
static int
gpu_columns_read(const json_t *o, struct gpu_sample *gs, int max, char *err,
    size_t errlen)
{
	const json_t	*index = json_object_get(o, "index");
	const json_t	*name = json_object_get(o, "name");
	const json_t	*procs = json_object_get(o, "procs");
	int		 n;

	/* An agent of an older build sent one object a GPU: nothing is
	 * known of its GPUs here, and its frame is not refused. */
	if (o == NULL || json_is_null(o) || json_is_array(o))
		return 0;
	if ((n = list_columns_read(&gpu_list, o, gs, max, err, errlen)) < 0)
		return -1;
	if ((index != NULL && !json_is_array(index)) || (name != NULL &&
	    !json_is_array(name)) || (procs != NULL && !json_is_array(procs))) {
		snprintf(err, errlen, "\"gpus\": index, name or procs is not "
		    "an array");
		return -1;
	}
	for (int i = 0; i < n; i++) {
		const json_t *x = json_array_get(index, (size_t)i);
		const json_t *pl = json_array_get(procs, (size_t)i);
		const char *nm = json_string_value(json_array_get(name,
		    (size_t)i));

		gs[i].index = json_is_integer(x) ? (int)json_integer_value(x) : i;
		snprintf(gs[i].name, sizeof gs[i].name, "%s", nm != NULL ? nm :
		    "");
		if (pl != NULL && !json_is_null(pl) && !json_is_array(pl)) {
			snprintf(err, errlen, "a GPU's \"procs\" is not an "
			    "array");
			return -1;
		}
		for (size_t k = 0; k < json_array_size(pl); k++) {
			const json_t *p = json_array_get(pl, k);

			if (!json_is_object(p) || !json_is_integer(
			    json_object_get(p, "pid"))) {
				snprintf(err, errlen, "a GPU process without an "
				    "integer \"pid\"");
				return -1;
			}
		}
		gs[i].nprocs = gpu_procs_read(pl, gs[i].procs);
	}
	return n;
}

int
gpu_samples_read(const json_t *o, struct gpu_sample *gs, int max)
{
	char	 err[1];
	int	 n = gpu_columns_read(o, gs, max, err, sizeof err);

	return n < 0 ? 0 : n;
}

int
gpu_samples_check(const json_t *o, char *err, size_t errlen)
{
	struct gpu_sample gs[16];

	return gpu_columns_read(o, gs, 16, err, errlen) < 0 ? -1 : 0;
}

const char *
gpu_throttle_text(double mask, char *buf, size_t len)
{
	static const char *const names[] = GPU_THROTTLE_NAMES;
	unsigned long long m = (unsigned long long)mask;
	size_t		 at = 0;

	buf[0] = '\0';
	for (size_t b = 0; b < sizeof names / sizeof names[0]; b++) {
		if (m & (1ULL << b))
			at += (size_t)snprintf(buf + at, at < len ? len - at : 0,
			    "%s%s", at ? "," : "", names[b]);
	}
	if (m >> (sizeof names / sizeof names[0]))
		snprintf(buf + at, at < len ? len - at : 0, "%s0x%llx",
		    at ? "," : "", m & ~((1ULL << (sizeof names /
		    sizeof names[0])) - 1));
	if (buf[0] == '\0')
		snprintf(buf, len, "none");
	return buf;
}

void
rank_report_put(const struct rank_report *r, json_t *frame)
{
	metrics_put(rank_metrics, RM_COUNT, NULL, r, r->valid, false, frame);
}

int
rank_report_read(const json_t *frame, struct rank_report *r, char *err,
    size_t errlen)
{
	memset(r, 0, sizeof *r);
	return metrics_read(rank_metrics, RM_COUNT, NULL, frame, r, &r->valid,
	    err, errlen);
}
