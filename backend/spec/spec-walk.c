/*
 * spec-walk.c: the table-driven half of the spec reader.  A mapping is
 * walked against a NULL-ended array of spec_field: unknown keys are
 * reported with the nearest known one, known keys go to spec-value.c to be
 * converted and stored at their offset from base, and required keys that
 * are absent are reported last.  A bad value leaves the default in place
 * and adds an error, and the walk goes on, so that one run reports every
 * mistake.
 */
#include "config.h"

#include <stdarg.h>

#include "backend/spec/spec-internal.h"

void
spec_walk_error(struct spec_walk *w, const struct ydoc_node *at,
    const char *fmt, ...)
{
	char	msg[1024];
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	spec_error_add(w->errs, w->file, at ? at->line : 1, at ? at->col : 1,
	    "%s", msg);
	w->nerr++;
}

/* What a node is, for "expected X, got Y". */
const char *
spec_describe(const struct ydoc_node *n, char *buf, size_t size)
{
	char	q[64];

	if (n->kind == YDOC_MAP)
		snprintf(buf, size, "a mapping");
	else if (n->kind == YDOC_SEQ)
		snprintf(buf, size, "a list");
	else if (ydoc_is_null(n))
		snprintf(buf, size, "nothing");
	else {
		spec_quote(q, sizeof q, n->str, n->len);
		snprintf(buf, size, "'%s'", q);
	}
	return buf;
}

static void
walk_value(struct spec_walk *w, const struct spec_field *f,
    const struct ydoc_node *v, const char *path, void *base)
{
	if (f->type == SF_CUSTOM) {
		f->custom(w, v, path, base);
		return;
	}
	if (f->type == SF_INTS) {
		spec_walk_ints(w, f, v, path, base);
		return;
	}
	if (f->type != SF_MAP) {
		spec_walk_scalar(w, f, v, path, base);
		return;
	}
	if (v->kind != YDOC_MAP)
		spec_walk_expect(w, v, path, "a mapping");
	else
		spec_walk_map(w, v, path, f->sub, base);
}

void
spec_walk_map(struct spec_walk *w, const struct ydoc_node *map,
    const char *path, const struct spec_field *fields, void *base)
{
	const struct spec_field	*f;
	const struct ydoc_node	*k;
	const char		*names[64], *near;
	char			 sub[SPEC_KEYPATH_MAX], q[64], hint[96];
	size_t			 i, n = 0;

	for (f = fields; f->key != NULL && n + 1 < 64; f++)
		names[n++] = f->key;
	names[n] = NULL;
	for (i = 0; i + 1 < map->n; i += 2) {
		k = map->kids[i];
		if (k->dup)
			continue;
		for (f = fields; f->key != NULL; f++) {
			if (strcmp(f->key, k->str) == 0)
				break;
		}
		if (f->key == NULL || strlen(k->str) != k->len) {
			hint[0] = '\0';
			if ((near = spec_suggest(k->str, names)) != NULL)
				snprintf(hint, sizeof hint,
				    " (did you mean '%s'?)", near);
			spec_quote(q, sizeof q, k->str, k->len);
			spec_walk_error(w, k, "unknown key '%s'%s%s%s", q,
			    *path ? " in " : "", path, hint);
			continue;
		}
		snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "",
		    f->key);
		walk_value(w, f, map->kids[i + 1], sub, base);
	}
	for (f = fields; f->key != NULL; f++) {
		if (!f->required || ydoc_get(map, f->key, NULL) != NULL)
			continue;
		/* The top level has no position of its own: the file's start. */
		spec_walk_error(w, *path ? map : NULL,
		    "missing required key '%s'%s%s", f->key,
		    *path ? " in " : "", path);
	}
}
