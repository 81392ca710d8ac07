/*
 * theme.c: theme files and colour pairs.  A theme is YAML:
 *
 *   name: default
 *   elements:
 *     header: {fg: white, bg: 24, bg8: blue, attr: [bold]}
 *
 * Colours are the eight names (black .. white), bright-NAME, default, or
 * a number 0..255.  On a terminal with fewer than 256 colours a number
 * above its range falls back to fg8/bg8 when given, else to the nearest
 * of the eight.  Elements not named inherit text's.  The bytes go
 * through the spec module's YAML reader (yaml-doc.c: limits against
 * hostile input, line and column on every node), so errors read
 * file:line:col: message like a job file's.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backend/spec/yaml-doc.h"
#include "tui/theme.h"


static const char *const theme_names[EL_COUNT] = {
	"text", "text_dim", "header", "border", "title", "selected",
	"bar_low", "bar_mid", "bar_high",
	"node_idle", "node_busy", "node_hot", "node_down", "node_spare",
	"chart_line", "chart_epoch", "chart_axis", "spark_rx", "spark_tx",
	"event_info", "event_warn", "event_error",
	"status", "status_key", "message", "straggler", "paused",
	"prompt", "match",
};

static const char *const colour_names[] = { "black", "red", "green",
	"yellow", "blue", "magenta", "cyan", "white" };

static const struct { const char *name; attr_t a; } attr_names[] = {
	{ "bold", A_BOLD }, { "dim", A_DIM }, { "reverse", A_REVERSE },
	{ "underline", A_UNDERLINE }, { "standout", A_STANDOUT },
	{ "italic", A_ITALIC }, { "normal", A_NORMAL },
};

const char *
theme_elem_name(enum elem e)
{
	return e < EL_COUNT ? theme_names[e] : "?";
}

/* Edit distance, for "did you mean" on unknown names. */
static size_t
theme_distance(const char *a, const char *b)
{
	size_t	 la = strlen(a), lb = strlen(b), d[64], prev, tmp;

	if (la >= 63 || lb >= 63)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		d[j] = j;
	for (size_t i = 1; i <= la; i++) {
		prev = d[0];
		d[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			tmp = d[j];
			d[j] = prev + (a[i - 1] != b[j - 1]);
			if (d[j - 1] + 1 < d[j])
				d[j] = d[j - 1] + 1;
			if (tmp + 1 < d[j])
				d[j] = tmp + 1;
			prev = tmp;
		}
	}
	return d[lb];
}

static const char *
theme_suggest(const char *word, const char *const *names, size_t n)
{
	const char	*best = NULL;
	size_t		 bd = 3;

	for (size_t i = 0; i < n; i++) {
		size_t d = theme_distance(word, names[i]);

		if (d < bd) {
			bd = d;
			best = names[i];
		}
	}
	return best;
}

static void
theme_error(struct spec_errors *errs, const char *file,
    const struct ydoc_node *n, const char *what, const char *word,
    const char *const *names, size_t nnames)
{
	const char	*s = names ? theme_suggest(word, names, nnames) : NULL;

	spec_error_add(errs, file, n->line, n->col, "%s '%.40s'%s%s%s", what,
	    word, s ? " (did you mean '" : "", s ? s : "", s ? "'?)" : "");
}

/* A colour: default, NAME, bright-NAME or 0..255. */
static int
theme_colour(const char *file, const struct ydoc_node *v, short *out,
    struct spec_errors *errs)
{
	const char	*s = v->str;
	char		*end;
	long		 n;

	if (v->kind != YDOC_SCALAR) {
		spec_error_add(errs, file, v->line, v->col, "expected a colour");
		return -1;
	}
	if (strcmp(s, "default") == 0) {
		*out = -1;
		return 0;
	}
	for (int i = 0; i < 8; i++) {
		if (strcmp(s, colour_names[i]) == 0) {
			*out = (short)i;
			return 0;
		}
		if (strncmp(s, "bright-", 7) == 0 &&
		    strcmp(s + 7, colour_names[i]) == 0) {
			*out = (short)(i + 8);
			return 0;
		}
	}
	n = strtol(s, &end, 10);
	if (*s != '\0' && *end == '\0' && n >= 0 && n <= 255) {
		*out = (short)n;
		return 0;
	}
	theme_error(errs, file, v, "unknown colour", s, colour_names, 8);
	return -1;
}

static void
theme_attr_word(const char *file, const struct ydoc_node *v, attr_t *a,
    struct spec_errors *errs)
{
	static const char *const words[] = { "bold", "dim", "reverse",
		"underline", "standout", "italic", "normal" };

	if (v->kind != YDOC_SCALAR) {
		spec_error_add(errs, file, v->line, v->col,
		    "expected an attribute");
		return;
	}
	for (size_t i = 0; i < sizeof attr_names / sizeof attr_names[0]; i++) {
		if (strcmp(v->str, attr_names[i].name) == 0) {
			*a |= attr_names[i].a;
			return;
		}
	}
	theme_error(errs, file, v, "unknown attribute", v->str, words, 7);
}

static void
theme_element(const char *file, const struct ydoc_node *v,
    struct theme_elem *te, struct spec_errors *errs)
{
	static const char *const keys[] = { "fg", "bg", "fg8", "bg8", "attr" };
	short	*slot[] = { &te->fg, &te->bg, &te->fg8, &te->bg8 };

	if (v->kind != YDOC_MAP) {
		spec_error_add(errs, file, v->line, v->col, "expected a mapping "
		    "like {fg: white, bg: blue, attr: [bold]}");
		return;
	}
	te->set = true;
	for (size_t i = 0; i + 1 < v->n; i += 2) {
		const struct ydoc_node *k = v->kids[i], *val = v->kids[i + 1];
		size_t	 f;

		if (k->dup)
			continue;
		for (f = 0; f < 5 && strcmp(k->str, keys[f]) != 0; f++)
			;
		if (f < 4)
			theme_colour(file, val, slot[f], errs);
		else if (f == 4 && val->kind == YDOC_SEQ) {
			for (size_t j = 0; j < val->n; j++)
				theme_attr_word(file, val->kids[j], &te->attr,
				    errs);
		} else if (f == 4)
			theme_attr_word(file, val, &te->attr, errs);
		else
			theme_error(errs, file, k, "unknown key", k->str, keys, 5);
	}
}

int
theme_parse(const char *file, const char *buf, size_t len, struct theme *t,
    struct spec_errors *errs)
{
	struct ydoc_node	*top;
	const struct ydoc_node	*v, *els;
	size_t			 before = errs->n;
	bool			 ok = true;

	memset(t, 0, sizeof *t);
	snprintf(t->file, sizeof t->file, "%s", file);
	for (int i = 0; i < EL_COUNT; i++)
		t->e[i] = (struct theme_elem){ -1, -1, THEME_UNSET,
		    THEME_UNSET, 0, false };
	if ((top = ydoc_parse(file, buf, len, errs, &ok)) == NULL)
		return -1;
	for (size_t i = 0; i + 1 < top->n; i += 2) {
		const char *k = top->kids[i]->str;

		if (strcmp(k, "name") != 0 && strcmp(k, "elements") != 0)
			theme_error(errs, file, top->kids[i], "unknown key", k,
			    (const char *const[]){ "name", "elements" }, 2);
	}
	if ((v = ydoc_get(top, "name", NULL)) != NULL && v->kind == YDOC_SCALAR)
		snprintf(t->name, sizeof t->name, "%s", v->str);
	else if (v != NULL)
		spec_error_add(errs, file, v->line, v->col,
		    "'name' must be a word");
	if ((els = ydoc_get(top, "elements", NULL)) == NULL)
		spec_error_add(errs, file, top->line, top->col,
		    "missing 'elements'");
	else if (els->kind != YDOC_MAP)
		spec_error_add(errs, file, els->line, els->col,
		    "'elements' must be a mapping of element names");
	else {
		for (size_t i = 0; i + 1 < els->n; i += 2) {
			const struct ydoc_node *k = els->kids[i];
			int	 e;

			if (k->dup)
				continue;
			for (e = 0; e < EL_COUNT && strcmp(k->str,
			    theme_names[e]) != 0; e++)
				;
			if (e == EL_COUNT)
				theme_error(errs, file, k, "unknown element",
				    k->str, theme_names, EL_COUNT);
			else
				theme_element(file, els->kids[i + 1], &t->e[e],
				    errs);
		}
	}
	ydoc_free(top);
	for (int i = 1; i < EL_COUNT; i++) {
		if (!t->e[i].set)
			t->e[i] = t->e[EL_TEXT];
	}
	return ok && errs->n == before ? 0 : -1;
}

/* The theme directories, in order: $HUNTER_THEME_DIR, the source tree's
 * themes/ (a build that is not installed), the installed data dir. */
static int
theme_dirs(const char *dirs[3])
{
	int	 n = 0;
	const char *env = getenv("HUNTER_THEME_DIR");

	if (env != NULL && *env != '\0')
		dirs[n++] = env;
#ifdef HUNTER_THEMEDIR
	dirs[n++] = HUNTER_THEMEDIR;
#endif
#ifdef HUNTER_PKGDATADIR
	dirs[n++] = HUNTER_PKGDATADIR "/themes";
#endif
	return n;
}

const char *
theme_dir(void)
{
	const char	*dirs[3];
	struct stat	 st;
	int		 n = theme_dirs(dirs);

	for (int i = 0; i < n; i++) {
		if (stat(dirs[i], &st) == 0 && S_ISDIR(st.st_mode))
			return dirs[i];
	}
	return "";
}

int
theme_load(const char *name, struct theme *t, struct spec_errors *errs)
{
	char		 path[SPEC_PATH_MAX + THEME_NAME_MAX + 8];
	const char	*dir = theme_dir();
	FILE		*f;
	char		*buf;
	size_t		 len;
	int		 rc;

	if (strchr(name, '/') != NULL)
		snprintf(path, sizeof path, "%s", name);
	else if (*dir == '\0') {
		spec_error_add(errs, name, 0, 0, "no theme directory (set "
		    "HUNTER_THEME_DIR)");
		return -1;
	} else
		snprintf(path, sizeof path, "%s/%s.yaml", dir, name);
	if ((f = fopen(path, "r")) == NULL) {
		spec_error_add(errs, path, 0, 0, "cannot read theme: %s",
		    strerror(errno));
		return -1;
	}
	buf = malloc(64 * 1024 + 1);
	len = buf != NULL ? fread(buf, 1, 64 * 1024 + 1, f) : 0;
	fclose(f);
	if (buf == NULL || len > 64 * 1024) {
		spec_error_add(errs, path, 0, 0, "not a theme file (over 64 KiB)");
		free(buf);
		return -1;
	}
	rc = theme_parse(path, buf, len, t, errs);
	free(buf);
	return rc;
}

static int
theme_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

int
theme_list(char names[][THEME_NAME_MAX], int max)
{
	const char	*dir = theme_dir();
	DIR		*d;
	struct dirent	*de;
	int		 n = 0;

	if (*dir == '\0' || (d = opendir(dir)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL && n < max) {
		size_t l = strlen(de->d_name);

		if (l > 5 && l < THEME_NAME_MAX &&
		    strcmp(de->d_name + l - 5, ".yaml") == 0) {
			snprintf(names[n], THEME_NAME_MAX, "%.*s", (int)l - 5,
			    de->d_name);
			n++;
		}
	}
	closedir(d);
	qsort(names, (size_t)n, THEME_NAME_MAX, theme_cmp);
	return n;
}

