/*
 * xmalloc.c: the allocation wrappers of xmalloc.h.  Each aborts with the
 * size it wanted when the system says no.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xmalloc.h"

static void
xmalloc_fail(size_t size)
{
	fprintf(stderr, "hunter: out of memory (allocating %zu bytes)\n", size);
	abort();
}

void *
xmalloc(size_t size)
{
	void	*p = malloc(size ? size : 1);

	if (p == NULL)
		xmalloc_fail(size);
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void	*p = calloc(n ? n : 1, size ? size : 1);

	if (p == NULL)
		xmalloc_fail(n * size);
	return p;
}

void *
xrealloc(void *old, size_t size)
{
	void	*p = realloc(old, size ? size : 1);

	if (p == NULL)
		xmalloc_fail(size);
	return p;
}

void *
xreallocarray(void *old, size_t n, size_t size)
{
	if (size != 0 && n > SIZE_MAX / size)
		xmalloc_fail(SIZE_MAX);
	return xrealloc(old, n * size);
}

char *
xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *
xstrndup(const char *s, size_t n)
{
	size_t	 len = strnlen(s, n);
	char	*p = xmalloc(len + 1);

	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

int
xasprintf(char **ret, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		xmalloc_fail(0);
	*ret = xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(*ret, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return n;
}

void *
xmalloc_aligned(size_t size)
{
	void	*p = NULL;
	size_t	 rounded = (size + 63) & ~(size_t)63;

	if (posix_memalign(&p, 64, rounded ? rounded : 64) != 0)
		xmalloc_fail(size);
	return p;
}
