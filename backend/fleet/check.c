/*
 * check.c: do the nodes run the same software?  Every agent's hello
 * carries its versions (docs/architecture.md, "Frames"); a job whose ranks run
 * different builds, or link different Gloo or NCCL, can hang in its
 * first collective, so the console compares them before it launches
 * (and `hunter check` on demand).  hunter and its build are compared with
 * the console's own as well; Gloo, NCCL, CUDA and the driver only between
 * nodes, since the console runs no collective.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xmalloc.h"
#include "backend/fleet/fleet.h"

/* Names listed for one variant before "and N more". */
#define CHECK_NAMES_MAX	6

/* The versions compared between nodes only, after hunter and build. */
static const char *const check_keys[] = { "gloo", "nccl", "cuda", "driver" };

struct check_ctx {
	char	*buf;
	size_t	 len, off;
};

static void
check_put(struct check_ctx *c, const char *fmt, const char *a, const char *b)
{
	int	 n;

	if (c->off >= c->len)
		return;
	n = snprintf(c->buf + c->off, c->len - c->off, fmt, a, b);
	if (n > 0)
		c->off += (size_t)n;
	if (c->off >= c->len)
		c->off = c->len - 1;
}

static const char *
check_version(const json_t *hello, const char *key)
{
	const char *v = json_string_value(json_object_get(json_object_get(hello,
	    "versions"), key));

	return v != NULL ? v : "unknown";
}

/* The label one node (or the console) gets for key; "" when the key is
 * "hunter": hunter and build go together. */
static void
check_label(const json_t *hello, const char *key, char *buf, size_t len)
{
	if (strcmp(key, "hunter") == 0)
		snprintf(buf, len, "%s (build %s)", check_version(hello,
		    "hunter"), check_version(hello, "build"));
	else
		snprintf(buf, len, "%s", check_version(hello, key));
}

static int
check_members(const int *group, int n, int g)
{
	int	 members = 0;

	for (int i = 0; i < n; i++)
		members += group[i] == g;
	return members;
}

/* "a, b and c" for the members of group g (the console is the last slot). */
static void
check_group(struct check_ctx *c, const struct fleet *f, const int *group,
    int n, int g)
{
	int	 members = check_members(group, n, g), shown = 0;
	char	 more[32];

	for (int i = 0; i < n; i++) {
		if (group[i] != g)
			continue;
		if (shown == CHECK_NAMES_MAX) {
			snprintf(more, sizeof more, "%d more", members - shown);
			check_put(c, " and %s", more, "");
			return;
		}
		check_put(c, "%s%s", shown == 0 ? "" : shown + 1 == members ?
		    " and " : ", ", i < f->n ? f->nodes[i].spec->name :
		    "this console");
		shown++;
	}
}

/* Group the nodes (and the console, when own is given) by their label
 * for key; when there is more than one group, describe them all. */
static int
check_key(const struct fleet *f, const json_t *own, const char *key,
    struct check_ctx *c)
{
	int	 n = f->n + 1, nv = 0, *group = xcalloc((size_t)n, sizeof *group);
	char	(*labels)[512] = xcalloc((size_t)n, sizeof *labels);
	char	 label[512];
	bool	 hunter = strcmp(key, "hunter") == 0;

	for (int i = 0; i < n; i++) {
		const json_t *h = i < f->n ? f->nodes[i].hello : own;
		int g;

		group[i] = -1;
		if (h == NULL || (i < f->n && !f->nodes[i].up))
			continue;
		/* A key no node reports (an old agent) is not a mismatch. */
		if (!hunter && json_object_get(json_object_get(h, "versions"),
		    key) == NULL)
			continue;
		check_label(h, key, label, sizeof label);
		for (g = 0; g < nv && strcmp(labels[g], label) != 0; g++)
			;
		if (g == nv)
			snprintf(labels[nv++], sizeof labels[0], "%s", label);
		group[i] = g;
	}
	if (nv > 1) {
		/* The console's own group goes last: the others differ. */
		int last = own != NULL && group[n - 1] >= 0 ? group[n - 1] : nv - 1;

		check_put(c, c->off == 0 ? "version mismatch: " : "; ", "", "");
		if (!hunter)
			check_put(c, "%s differs: ", key, "");
		for (int k = 0, g; k < nv; k++) {
			g = k == nv - 1 ? last : k < last ? k : k + 1;
			check_put(c, k > 0 ? ", " : "", "", "");
			check_group(c, f, group, n, g);
			check_put(c, hunter ? (k == 0 ? " %s hunter %s" : " %s %s") :
			    " %s %s", check_members(group, n, g) > 1 ?
			    (hunter ? "run" : "have") : (hunter ? "runs" : "has"),
			    labels[g]);
		}
	}
	free(group);
	free(labels);
	return nv > 1 ? -1 : 0;
}

int
fleet_check_versions(const struct fleet *f, const json_t *own_hello,
    char *err, size_t errlen)
{
	struct check_ctx c = { err, errlen, 0 };
	int		 rc;

	if (errlen > 0)
		err[0] = '\0';
	rc = check_key(f, own_hello, "hunter", &c);
	for (size_t k = 0; k < sizeof check_keys / sizeof check_keys[0]; k++)
		rc |= check_key(f, NULL, check_keys[k], &c);
	return rc != 0 ? -1 : 0;
}
