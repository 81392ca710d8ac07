/*
 * spec-errors.c: the list of "file:line:col: message" errors a spec yields,
 * and two helpers for writing them: spec_quote, which makes user text safe
 * to show on a terminal, and spec_suggest, the "did you mean" behind
 * unknown keys and values.
 */
#include <stdarg.h>

#include "lib/suggest.h"
#include "backend/spec/spec-internal.h"

void
spec_error_add(struct spec_errors *errs, const char *file, int line, int col,
    const char *fmt, ...)
{
	struct spec_error	*e;
	va_list			 ap;
	int			 n;

	if (errs->n > SPEC_ERRORS_MAX)
		return;
	if (errs->n == errs->cap) {
		errs->cap = errs->cap ? errs->cap * 2 : 8;
		errs->v = spec_xreallocarray(errs->v, errs->cap,
		    sizeof *errs->v);
	}
	e = &errs->v[errs->n++];
	e->file = spec_xstrndup(file ? file : "", file ? strlen(file) : 0);
	e->line = line;
	e->col = col;
	if (errs->n == SPEC_ERRORS_MAX + 1) {
		e->msg = spec_xstrndup("too many errors; stopping here", 30);
		return;
	}
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	e->msg = spec_xcalloc(1, (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(e->msg, (size_t)n + 1, fmt, ap);
	va_end(ap);
}

/* Errors with no position (the file cannot be opened) print as "file: msg". */
void
spec_errors_print(FILE *f, const struct spec_errors *errs)
{
	const struct spec_error	*e;
	size_t			 i;

	for (i = 0; i < errs->n; i++) {
		e = &errs->v[i];
		if (e->line > 0)
			fprintf(f, "%s:%d:%d: %s\n", e->file, e->line, e->col,
			    e->msg);
		else
			fprintf(f, "%s: %s\n", e->file, e->msg);
	}
}

void
spec_errors_free(struct spec_errors *errs)
{
	size_t	i;

	for (i = 0; i < errs->n; i++) {
		free(errs->v[i].file);
		free(errs->v[i].msg);
	}
	free(errs->v);
	errs->v = NULL;
	errs->n = errs->cap = 0;
}

size_t
spec_error_count(const struct spec_errors *errs)
{
	return errs->n;
}

/*
 * Copy user text for a message: control characters become '?' so that a
 * key cannot move the cursor or recolour the console, and long text is cut
 * with "...".
 */
void
spec_quote(char *buf, size_t size, const char *s, size_t len)
{
	size_t	i, o = 0;

	for (i = 0; i < len && o + 1 < size; i++) {
		if (o + 4 >= size && i + 1 < len) {
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		buf[o++] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ?
		    '?' : s[i];
	}
	buf[o] = '\0';
}

/* The name closest to word, if it is a likely slip (lib/suggest.c). */
const char *
spec_suggest(const char *word, const char *const *names)
{
	return suggest(word, names);
}
