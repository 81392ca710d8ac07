/*
 * yaml-doc.h: a YAML buffer as a small tree of mappings, sequences and
 * scalars, each with its 1-based line and column.  Only what a spec needs:
 * one document, a mapping at the top, scalar keys, no aliases.  Everything
 * wrong with the bytes (too large, binary, not UTF-8, bad syntax, tabs,
 * duplicate keys) is reported as a spec_error.
 */
#ifndef HUNTER_YAML_DOC_H
#define HUNTER_YAML_DOC_H

#include <stdbool.h>
#include <stddef.h>

#include "backend/spec/spec.h"

enum ydoc_kind { YDOC_SCALAR, YDOC_SEQ, YDOC_MAP };

struct ydoc_node {
	enum ydoc_kind	  kind;
	int		  line, col;
	bool		  dup;		/* a repeated key: ignore its pair */
	char		 *str;		/* scalar text, NUL-terminated */
	size_t		  len;		/* may hold NULs from "\0" escapes */
	bool		  plain;	/* scalar written without quotes */
	struct ydoc_node **kids;	/* seq: items; map: key, value, ... */
	size_t		  n, cap;
};

/*
 * Parse buf as YAML.  Returns the top-level mapping, or NULL with errors
 * added when there is none to walk.  Duplicate keys are reported and the
 * tree is still returned with them marked dup; *ok is false then.
 */
struct ydoc_node *ydoc_parse(const char *file, const char *buf, size_t len,
		    struct spec_errors *, bool *ok);
void		  ydoc_free(struct ydoc_node *);

/* The value under key in a mapping, and its key node; NULL if absent. */
const struct ydoc_node *ydoc_get(const struct ydoc_node *map, const char *key,
		    const struct ydoc_node **keynode);

/* Whether a scalar is the empty plain scalar YAML reads as null. */
bool		  ydoc_is_null(const struct ydoc_node *);

#endif
