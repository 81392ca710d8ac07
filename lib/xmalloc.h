/*
 * xmalloc.h: allocation that cannot fail.  Running out of memory is a
 * broken invariant, not a user error, so these abort with a message, as
 * tmux and htop do.  Errors a user can cause never come through here.
 */
#ifndef HUNTER_XMALLOC_H
#define HUNTER_XMALLOC_H

#include <stddef.h>

void	*xmalloc(size_t);
void	*xcalloc(size_t, size_t);
void	*xrealloc(void *, size_t);
void	*xreallocarray(void *, size_t, size_t);
char	*xstrdup(const char *);
char	*xstrndup(const char *, size_t);
int	 xasprintf(char **, const char *, ...) __attribute__((format(printf, 2, 3)));
/* Aligned to 64 bytes, for float buffers that kernels stream through. */
void	*xmalloc_aligned(size_t);

#endif
