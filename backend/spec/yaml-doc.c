/*
 * yaml-doc.c: libyaml's event stream folded into a tree of ydoc_nodes.
 *
 * The event API is used rather than libyaml's document loader because the
 * loader expands aliases: a "billion laughs" file of a few hundred bytes
 * becomes billions of nodes.  Here an alias is simply an error, so the tree
 * never holds more nodes than the text has tokens.  Before libyaml sees the
 * bytes they are checked for size, NULs and valid UTF-8, so that binary
 * files get a message that says so instead of a scanner complaint.  Depth
 * and keys per mapping are capped, which bounds the recursion in the walker
 * and the quadratic duplicate-key check.
 */
#include "config.h"

#include <stdint.h>
#include <yaml.h>

#include "backend/spec/spec-internal.h"

#define YDOC_MAX_DEPTH	64
#define YDOC_MAX_KEYS	256

struct ydoc_parser {
	const char		*file;
	const char		*buf;
	size_t			 len;
	struct spec_errors	*errs;
	struct ydoc_node	*root;
	struct ydoc_node	*stack[YDOC_MAX_DEPTH];
	int			 depth;
	bool			 ok;
};

static struct ydoc_node *
ydoc_new(enum ydoc_kind kind, const yaml_mark_t *mark)
{
	struct ydoc_node	*n = spec_xcalloc(1, sizeof *n);

	n->kind = kind;
	n->line = (int)mark->line + 1;
	n->col = (int)mark->column + 1;
	return n;
}

void
ydoc_free(struct ydoc_node *n)
{
	size_t	i;

	if (n == NULL)
		return;
	for (i = 0; i < n->n; i++)
		ydoc_free(n->kids[i]);
	free(n->kids);
	free(n->str);
	free(n);
}

static void
ydoc_append(struct ydoc_node *parent, struct ydoc_node *kid)
{
	if (parent->n == parent->cap) {
		parent->cap = parent->cap ? parent->cap * 2 : 8;
		parent->kids = spec_xreallocarray(parent->kids, parent->cap,
		    sizeof *parent->kids);
	}
	parent->kids[parent->n++] = kid;
}

/* Line and column of a byte offset, for errors found outside libyaml. */
static void
ydoc_position(const char *buf, size_t off, int *line, int *col)
{
	size_t	i;

	*line = 1;
	*col = 1;
	for (i = 0; i < off; i++) {
		if (buf[i] == '\n') {
			(*line)++;
			*col = 1;
		} else if (((unsigned char)buf[i] & 0xc0) != 0x80)
			(*col)++;
	}
}

/* Length of the UTF-8 sequence at p, or 0 if it is not valid UTF-8. */
static size_t
ydoc_utf8_len(const unsigned char *p, size_t left)
{
	uint32_t	cp;
	size_t		n, i;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, cp = p[0] & 0x07;
	else
		return 0;
	if (n > left)
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* Refuse bytes that cannot be a YAML text before libyaml sees them. */
static int
ydoc_check_bytes(struct ydoc_parser *p)
{
	const unsigned char	*b = (const unsigned char *)p->buf;
	size_t			 i = 0, n;
	int			 line, col;

	while (i < p->len) {
		if (b[i] == 0 || (b[i] < 0x20 && b[i] != '\t' &&
		    b[i] != '\n' && b[i] != '\r') || b[i] == 0x7f) {
			ydoc_position(p->buf, i, &line, &col);
			spec_error_add(p->errs, p->file, line, col,
			    "binary data (byte 0x%02x), not a YAML text file",
			    b[i]);
			return -1;
		}
		if ((n = ydoc_utf8_len(b + i, p->len - i)) == 0) {
			ydoc_position(p->buf, i, &line, &col);
			spec_error_add(p->errs, p->file, line, col,
			    "not UTF-8 text (byte 0x%02x); binary file?", b[i]);
			return -1;
		}
		i += n;
	}
	return 0;
}

/* The byte at a libyaml mark, whose index counts characters, not bytes. */
static int
ydoc_char_at(const struct ydoc_parser *p, size_t index)
{
	size_t	i = 0, chars = 0;

	if (p->len >= 3 && memcmp(p->buf, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	for (; i < p->len; i++) {
		if (((unsigned char)p->buf[i] & 0xc0) == 0x80)
			continue;
		if (chars++ == index)
			return (unsigned char)p->buf[i];
	}
	return -1;
}

static void
ydoc_syntax_error(struct ydoc_parser *p, const yaml_parser_t *yp)
{
	const char	*problem = yp->problem ? yp->problem : "unknown error";
	int		 line, col;

	if (yp->error == YAML_MEMORY_ERROR) {
		fputs("hunter: out of memory\n", stderr);
		abort();
	}
	if (yp->error == YAML_READER_ERROR) {
		ydoc_position(p->buf, yp->problem_offset, &line, &col);
		spec_error_add(p->errs, p->file, line, col,
		    "not a YAML text: %s", problem);
		return;
	}
	line = (int)yp->problem_mark.line + 1;
	col = (int)yp->problem_mark.column + 1;
	if (ydoc_char_at(p, yp->problem_mark.index) == '\t' ||
	    strstr(problem, "tab") != NULL) {
		spec_error_add(p->errs, p->file, line, col,
		    "tab character in indentation; YAML indents with spaces "
		    "only");
	} else if (yp->context != NULL) {
		spec_error_add(p->errs, p->file, line, col,
		    "YAML syntax error: %s (%s started at line %d, column %d)",
		    problem, yp->context, (int)yp->context_mark.line + 1,
		    (int)yp->context_mark.column + 1);
	} else
		spec_error_add(p->errs, p->file, line, col,
		    "YAML syntax error: %s", problem);
}

/* Hang a new node under the open container; -1 stops the parse. */
static int
ydoc_attach(struct ydoc_parser *p, struct ydoc_node *n)
{
	struct ydoc_node	*parent, *k;
	char			 q[64];
	size_t			 i;

	if (p->depth == 0) {
		p->root = n;
		return 0;
	}
	parent = p->stack[p->depth - 1];
	if (parent->kind == YDOC_MAP && parent->n % 2 == 0) {
		if (n->kind != YDOC_SCALAR) {
			spec_error_add(p->errs, p->file, n->line, n->col,
			    "a key must be a plain word, not a %s",
			    n->kind == YDOC_MAP ? "mapping" : "list");
			return -1;
		}
		if (parent->n / 2 >= YDOC_MAX_KEYS) {
			spec_error_add(p->errs, p->file, n->line, n->col,
			    "too many keys in one mapping (limit %d)",
			    YDOC_MAX_KEYS);
			return -1;
		}
		for (i = 0; i < parent->n; i += 2) {
			k = parent->kids[i];
			if (k->dup || k->len != n->len ||
			    memcmp(k->str, n->str, n->len) != 0)
				continue;
			spec_quote(q, sizeof q, n->str, n->len);
			spec_error_add(p->errs, p->file, n->line, n->col,
			    "duplicate key '%s' (first at line %d)", q,
			    k->line);
			n->dup = true;
			p->ok = false;
			break;
		}
	}
	ydoc_append(parent, n);
	return 0;
}

/* Handle one event; -1 ends the parse (error or end of stream). */
static int
ydoc_event(struct ydoc_parser *p, const yaml_event_t *ev)
{
	const yaml_mark_t	*m = &ev->start_mark;
	struct ydoc_node	*n;
	char			 q[64];

	switch (ev->type) {
	case YAML_DOCUMENT_START_EVENT:
		if (p->root == NULL)
			return 0;
		spec_error_add(p->errs, p->file, (int)m->line + 1,
		    (int)m->column + 1, "more than one YAML document; a spec "
		    "is a single document");
		return -1;
	case YAML_ALIAS_EVENT:
		spec_quote(q, sizeof q, (const char *)ev->data.alias.anchor,
		    strlen((const char *)ev->data.alias.anchor));
		spec_error_add(p->errs, p->file, (int)m->line + 1,
		    (int)m->column + 1, "aliases are not supported (*%s); "
		    "write the value out", q);
		return -1;
	case YAML_SCALAR_EVENT:
		n = ydoc_new(YDOC_SCALAR, m);
		n->len = ev->data.scalar.length;
		n->str = spec_xstrndup((const char *)ev->data.scalar.value,
		    n->len);
		n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		break;
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		if (p->depth == YDOC_MAX_DEPTH) {
			spec_error_add(p->errs, p->file, (int)m->line + 1,
			    (int)m->column + 1, "nested too deeply (limit %d "
			    "levels)", YDOC_MAX_DEPTH);
			return -1;
		}
		n = ydoc_new(ev->type == YAML_MAPPING_START_EVENT ?
		    YDOC_MAP : YDOC_SEQ, m);
		break;
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		p->depth--;
		return 0;
	case YAML_STREAM_END_EVENT:
		return -1;
	default:
		return 0;
	}
	if (ydoc_attach(p, n) != 0) {
		ydoc_free(n);
		return -1;
	}
	if (n->kind != YDOC_SCALAR)
		p->stack[p->depth++] = n;
	return 0;
}

bool
ydoc_is_null(const struct ydoc_node *n)
{
	return n->kind == YDOC_SCALAR && n->plain && (n->len == 0 ||
	    strcmp(n->str, "~") == 0 || strcmp(n->str, "null") == 0 ||
	    strcmp(n->str, "Null") == 0 || strcmp(n->str, "NULL") == 0);
}

struct ydoc_node *
ydoc_parse(const char *file, const char *buf, size_t len,
    struct spec_errors *errs, bool *ok)
{
	struct ydoc_parser	 p = { file, buf, len, errs, NULL, { 0 }, 0,
				     true };
	yaml_parser_t		 yp;
	yaml_event_t		 ev;
	bool			 failed = false;
	char			 what[80];

	*ok = false;
	if (len > SPEC_FILE_LIMIT) {
		spec_error_add(errs, file, 1, 1, "file too large (%zu bytes, "
		    "limit 1 MiB)", len);
		return NULL;
	}
	if (ydoc_check_bytes(&p) != 0)
		return NULL;
	if (!yaml_parser_initialize(&yp))
		abort();
	yaml_parser_set_input_string(&yp, (const unsigned char *)buf, len);
	for (;;) {
		if (!yaml_parser_parse(&yp, &ev)) {
			ydoc_syntax_error(&p, &yp);
			failed = true;
			break;
		}
		if (ydoc_event(&p, &ev) != 0) {
			failed = ev.type != YAML_STREAM_END_EVENT;
			yaml_event_delete(&ev);
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&yp);

	if (!failed && (p.root == NULL || ydoc_is_null(p.root))) {
		spec_error_add(errs, file, 1, 1, "empty file");
		failed = true;
	} else if (!failed && p.root->kind != YDOC_MAP) {
		spec_error_add(errs, file, p.root->line, p.root->col,
		    "expected a mapping at top level, got %s",
		    spec_describe(p.root, what, sizeof what));
		failed = true;
	}
	if (failed) {
		ydoc_free(p.root);
		return NULL;
	}
	*ok = p.ok;
	return p.root;
}

const struct ydoc_node *
ydoc_get(const struct ydoc_node *map, const char *key,
    const struct ydoc_node **keynode)
{
	size_t	i;

	if (map == NULL || map->kind != YDOC_MAP)
		return NULL;
	for (i = 0; i + 1 < map->n; i += 2) {
		if (map->kids[i]->dup || strcmp(map->kids[i]->str, key) != 0)
			continue;
		if (keynode != NULL)
			*keynode = map->kids[i];
		return map->kids[i + 1];
	}
	return NULL;
}
