/*
 * spec-value.c: one value of a spec, converted and checked.  Numbers are
 * parsed whole (strtoll, strtod) and refused on overflow, NaN or trailing
 * text; strings are checked for length and, for names, hosts and paths
 * that will reach a shell, for the characters they may hold.  Every
 * message names the key's path and shows what was written instead.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <strings.h>

#include "backend/spec/spec-internal.h"

static const char *const walk_expected[] = {
	[SF_MAP] = "a mapping", [SF_INT] = "an integer",
	[SF_U64] = "a non-negative integer", [SF_REAL] = "a number",
	[SF_BOOL] = "true or false", [SF_NAME] = "a string",
	[SF_HOST] = "a string", [SF_PATH] = "a string",
	[SF_SAFEPATH] = "a string", [SF_ENUM] = "a string",
	[SF_WORD] = "a string", [SF_SIZE] = "a size",
	[SF_DURATION] = "a duration", [SF_PERCENT] = "a percentage",
	[SF_INTS] = "a list", [SF_MICRO] = "an integer or 'auto'",
	[SF_CUSTOM] = "a value",
};

static const char *const walk_range_text[] = {
	[SR_ANY] = "", [SR_POS] = "> 0", [SR_NONNEG] = ">= 0",
	[SR_GE1] = ">= 1", [SR_UNIT_OC] = "in (0, 1]",
	[SR_UNIT_CO] = "in [0, 1)", [SR_PORT] = "in 1..65535",
};

void
spec_walk_expect(struct spec_walk *w, const struct ydoc_node *v,
    const char *path, const char *expected)
{
	char	what[80];

	spec_walk_error(w, v, "%s: expected %s, got %s", path, expected,
	    spec_describe(v, what, sizeof what));
}

static bool
walk_in_range(enum spec_range r, double v)
{
	switch (r) {
	case SR_POS:
		return v > 0;
	case SR_NONNEG:
		return v >= 0;
	case SR_GE1:
		return v >= 1;
	case SR_UNIT_OC:
		return v > 0 && v <= 1;
	case SR_UNIT_CO:
		return v >= 0 && v < 1;
	case SR_PORT:
		return v >= 1 && v <= 65535;
	default:
		return true;
	}
}

static int
walk_range(struct spec_walk *w, const struct ydoc_node *v, const char *path,
    enum spec_range r, double x)
{
	char	q[64];

	if (walk_in_range(r, x))
		return 0;
	spec_quote(q, sizeof q, v->str, v->len);
	spec_walk_error(w, v, "%s: must be %s, got %s", path,
	    walk_range_text[r], q);
	return -1;
}

/* A whole decimal integer: 0, or -1 for not a number, -2 for too large. */
static int
walk_integer(const char *s, long long *out)
{
	const char	*digits = (*s == '-' || *s == '+') ? s + 1 : s;
	char		*end;

	if (!isdigit((unsigned char)*digits))
		return -1;
	errno = 0;
	*out = strtoll(s, &end, 10);
	if (*end != '\0')
		return -1;
	return errno == ERANGE ? -2 : 0;
}

static int
walk_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "true", "yes", "on" };
	static const char *const no[] = { "false", "no", "off" };
	size_t			 i;

	for (i = 0; i < 3; i++) {
		if (strcasecmp(s, yes[i]) == 0 || strcasecmp(s, no[i]) == 0) {
			*out = strcasecmp(s, yes[i]) == 0;
			return 0;
		}
	}
	return -1;
}

/* Whether every byte of s is a letter, a digit or in extra. */
static bool
walk_charset(const char *s, const char *extra)
{
	for (; *s != '\0'; s++) {
		if (!isalnum((unsigned char)*s) && strchr(extra, *s) == NULL)
			return false;
	}
	return true;
}

/* Whether s holds a C0 control character or DEL (what spec_quote hides). */
static bool
walk_has_control(const char *s)
{
	for (; *s != '\0'; s++) {
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	}
	return false;
}

static void
walk_string(struct spec_walk *w, const struct spec_field *f,
    const struct ydoc_node *v, const char *path, char *dst)
{
	const char	*s = ydoc_is_null(v) ? "" : v->str;
	const char	*what = f->what ? f->what : "value";
	size_t		 len = strlen(s);
	char		 q[64];

	spec_quote(q, sizeof q, s, len);
	if (len >= f->size) {
		spec_walk_error(w, v, "%s: too long (%zu bytes, limit %zu)",
		    path, len, f->size - 1);
		return;
	}
	if ((f->type == SF_NAME || f->type == SF_HOST) && len == 0) {
		spec_walk_error(w, v, "%s: %s must not be empty", path, what);
		return;
	}
	if (f->type == SF_NAME && !walk_charset(s, "._-")) {
		spec_walk_error(w, v, "%s: %s '%s' may only hold letters, "
		    "digits, '.', '_' and '-'", path, what, q);
		return;
	}
	if (f->type == SF_HOST && !walk_charset(s, ".-:[]_")) {
		spec_walk_error(w, v, "%s: %s '%s' may only hold letters, "
		    "digits, '.', '-', ':', '[', ']' and '_'", path, what, q);
		return;
	}
	/* A leading '-' or '.' would read as an option or a hidden path. */
	if ((f->type == SF_NAME || f->type == SF_HOST) &&
	    (s[0] == '-' || s[0] == '.')) {
		spec_walk_error(w, v, "%s: %s '%s' must not start with '%c'",
		    path, what, q, s[0]);
		return;
	}
	/* A glob's * ? [ ] expand, but never run anything. */
	if (f->type == SF_SAFEPATH && !walk_charset(s, f->glob_ok ?
	    "._-/~+,@=:*?[]" : "._-/~+,@=:")) {
		spec_walk_error(w, v, "%s: path '%s' may only hold letters, "
		    "digits and . _ - / ~ + , @ = :%s", path, q, f->glob_ok ?
		    " and a glob's * ? [ ]" : "");
		return;
	}
	if (f->type == SF_PATH && walk_has_control(s)) {
		spec_walk_error(w, v, "%s: path '%s' holds control characters",
		    path, q);
		return;
	}
	memcpy(dst, s, len + 1);
}

static int
walk_lookup(struct spec_walk *w, const struct spec_field *f,
    const struct ydoc_node *v, const char *path)
{
	const char	*near, *names[64];
	char		 known[256] = "", q[64], hint[96] = "";
	int		 i, n = 0;

	while (n + 1 < 64 && (names[n] = f->names != NULL ? f->names[n] :
	    f->name_of(n)) != NULL)
		n++;
	names[n] = NULL;
	for (i = 0; names[i] != NULL; i++) {
		if (strcmp(v->str, names[i]) == 0)
			return i;
		snprintf(known + strlen(known), sizeof known - strlen(known),
		    "%s%s", i ? ", " : "", names[i]);
	}
	if ((near = spec_suggest(v->str, names)) != NULL)
		snprintf(hint, sizeof hint, " (did you mean '%s'?)", near);
	spec_quote(q, sizeof q, v->str, v->len);
	spec_walk_error(w, v, "%s: unknown %s '%s' (known: %s)%s", path,
	    f->what, q, known, hint);
	return -1;
}

_Static_assert(SPEC_MAX_HIDDEN <= 64 && SPEC_MAX_CHANNELS <= 64,
    "spec_walk_ints gathers a list in 64 ints");

void
spec_walk_ints(struct spec_walk *w, const struct spec_field *f,
    const struct ydoc_node *v, const char *path, void *base)
{
	int		 vals[64], bad = 0;
	long long	 x;
	size_t		 i;
	char		 sub[SPEC_KEYPATH_MAX + 24];

	const struct ydoc_node *const *item =
	    (const struct ydoc_node *const *)v->kids;
	size_t		 n = v->n;

	/* One number is a list of one where the key says so (channels:
	 * 256, a gpt's width). */
	if (f->one_ok && v->kind == YDOC_SCALAR &&
	    walk_integer(v->str, &x) != -1) {
		item = &v;
		n = 1;
	} else if (v->kind != YDOC_SEQ) {
		spec_walk_expect(w, v, path, "a list");
		return;
	}
	if (n > f->size || n < f->min_items) {
		spec_walk_error(w, v, "%s: must hold %zu to %zu values, got %zu",
		    path, f->min_items, f->size, n);
		return;
	}
	for (i = 0; i < n; i++) {
		snprintf(sub, sizeof sub, "%s[%zu]", path, i);
		if (item[i]->kind != YDOC_SCALAR ||
		    walk_integer(item[i]->str, &x) == -1) {
			spec_walk_expect(w, item[i], sub, "an integer");
			bad++;
		} else if (walk_range(w, item[i], sub, SR_POS,
		    (double)x) != 0)
			bad++;
		else if (x > INT32_MAX) {
			spec_walk_error(w, item[i], "%s: too large", sub);
			bad++;
		} else
			vals[i] = (int)x;
	}
	if (bad == 0) {
		memcpy((char *)base + f->off, vals, n * sizeof *vals);
		*(int *)((char *)base + f->count_off) = (int)n;
	}
}

/* Convert and store one scalar value. */
void
spec_walk_scalar(struct spec_walk *w, const struct spec_field *f,
    const struct ydoc_node *v, const char *path, void *base)
{
	void		*dst = (char *)base + f->off;
	const char	*s = v->str;
	long long	 i;
	uint64_t	 u;
	double		 d;
	char		*end, q[64];
	bool		 b;
	int		 rc;

	if (v->kind != YDOC_SCALAR) {
		spec_walk_expect(w, v, path, walk_expected[f->type]);
		return;
	}
	if (strlen(s) != v->len) {
		spec_walk_error(w, v, "%s: holds a NUL character", path);
		return;
	}
	switch (f->type) {
	case SF_INT:
	case SF_MICRO:
		if (f->type == SF_MICRO && strcmp(s, "auto") == 0) {
			*(int *)dst = 0;
			return;
		}
		if ((rc = walk_integer(s, &i)) == -1)
			break;
		if (rc == 0 && walk_range(w, v, path, f->range, (double)i) != 0)
			return;
		if (rc != 0 || i > INT32_MAX || i < INT32_MIN) {
			spec_quote(q, sizeof q, s, v->len);
			spec_walk_error(w, v, "%s: %s is too large", path, q);
			return;
		}
		*(int *)dst = (int)i;
		return;
	case SF_U64:
		if ((rc = walk_integer(s, &i)) == -1)
			break;
		if (*s == '-') {
			walk_range(w, v, path, SR_NONNEG, -1);
			return;
		}
		errno = 0;
		u = strtoull(s, &end, 10);
		if (errno == ERANGE) {
			spec_quote(q, sizeof q, s, v->len);
			spec_walk_error(w, v, "%s: %s is too large", path, q);
			return;
		}
		*(uint64_t *)dst = u;
		return;
	case SF_REAL:
		d = strtod(s, &end);
		if (end == s || *end != '\0' || isspace((unsigned char)*s) ||
		    !isfinite(d))
			break;
		if (walk_range(w, v, path, f->range, d) == 0)
			*(double *)dst = d;
		return;
	case SF_BOOL:
		if (walk_bool(s, &b) != 0)
			break;
		*(bool *)dst = b;
		return;
	case SF_ENUM:
		if ((rc = walk_lookup(w, f, v, path)) >= 0)
			*(int *)dst = rc;
		return;
	case SF_WORD:
		if ((rc = walk_lookup(w, f, v, path)) >= 0)
			walk_string(w, f, v, path, dst);
		return;
	case SF_SIZE:
		spec_quote(q, sizeof q, s, v->len);
		if (spec_parse_size(s, &u) != 0)
			spec_walk_error(w, v, "%s: malformed size '%s' "
			    "(examples: 512MiB, 2GiB)", path, q);
		else if (walk_range(w, v, path, f->range, (double)u) == 0)
			*(uint64_t *)dst = u;
		return;
	case SF_DURATION:
		spec_quote(q, sizeof q, s, v->len);
		if (spec_parse_duration(s, &d) != 0)
			spec_walk_error(w, v, "%s: malformed duration '%s' "
			    "(examples: 500ms, 60s, 10m)", path, q);
		else if (walk_range(w, v, path, f->range, d) == 0)
			*(double *)dst = d;
		return;
	case SF_PERCENT:
		spec_quote(q, sizeof q, s, v->len);
		if (spec_parse_percent(s, &d) == 0)
			*(double *)dst = d;
		else if (isdigit((unsigned char)*s) &&
		    (d = strtod(s, &end)) > 100 && strcmp(end, "%") == 0)
			spec_walk_error(w, v, "%s: must be in 0%%..100%%, "
			    "got %s", path, q);
		else
			spec_walk_error(w, v, "%s: malformed percent '%s' "
			    "(examples: 50%%, 12.5%%)", path, q);
		return;
	default:
		walk_string(w, f, v, path, dst);
		return;
	}
	spec_walk_expect(w, v, path, walk_expected[f->type]);
}
