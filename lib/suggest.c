/*
 * suggest.c: see suggest.h.
 */
#include <stdbool.h>
#include <string.h>

#include "lib/suggest.h"

/* Optimal string alignment distance: edits plus adjacent transpositions. */
static size_t
distance(const char *a, const char *b)
{
	size_t	la = strlen(a), lb = strlen(b), i, j, best, d[3][33];
	size_t	*prev2 = d[0], *prev = d[1], *cur = d[2], *t;

	if (la > 32 || lb > 32)
		return (size_t)-1;
	for (j = 0; j <= lb; j++)
		prev[j] = j;
	for (i = 1; i <= la; i++) {
		cur[0] = i;
		for (j = 1; j <= lb; j++) {
			best = prev[j - 1] + (a[i - 1] != b[j - 1]);
			if (prev[j] + 1 < best)
				best = prev[j] + 1;
			if (cur[j - 1] + 1 < best)
				best = cur[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && prev2[j - 2] + 1 < best)
				best = prev2[j - 2] + 1;
			cur[j] = best;
		}
		t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[lb];
}

static bool
is_cut(char c)
{
	return c == '_' || c == '-';
}

/* Whether part (len bytes) is one of the parts of s. */
static bool
has_part(const char *s, const char *part, size_t len)
{
	const char	*p = s;

	while (*p != '\0') {
		size_t n = strcspn(p, "_-");

		if (n == len && strncmp(p, part, len) == 0)
			return true;
		p += n;
		if (*p != '\0')
			p++;
	}
	return false;
}

/* The initials of word's parts, when it has two or more. */
static bool
initials(const char *word, char *out, size_t size)
{
	size_t	n = 0;
	int	parts = 0;

	for (const char *p = word; *p != '\0'; p++) {
		if (is_cut(*p) || (p != word && !is_cut(p[-1])))
			continue;
		if (n + 1 >= size)
			return false;
		out[n++] = *p;
		parts++;
	}
	out[n] = '\0';
	return parts >= 2;
}

const char *
suggest(const char *word, const char *const *names)
{
	const char	*best = NULL, *only = NULL;
	size_t		 d, best_d = (size_t)-1, limit;
	char		 abbr[33];
	int		 holders = 0;

	for (const char *const *n = names; *n != NULL; n++) {
		limit = strlen(*n) <= 3 ? 1 : 2;
		d = distance(word, *n);
		if (d <= limit && d < best_d) {
			best = *n;
			best_d = d;
		}
	}
	if (best != NULL)
		return best;
	if (initials(word, abbr, sizeof abbr)) {
		for (const char *const *n = names; *n != NULL; n++) {
			if (strcmp(abbr, *n) == 0)
				return *n;
		}
	}
	for (const char *const *n = names; *n != NULL; n++) {
		if (strcmp(word, *n) != 0 && has_part(word, *n, strlen(*n)))
			return *n;
		if (strcmp(word, *n) != 0 && has_part(*n, word, strlen(word))) {
			only = *n;
			holders++;
		}
	}
	return holders == 1 ? only : NULL;
}
