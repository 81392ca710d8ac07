/*
 * utf8.h: UTF-8 for text that crosses into JSON.  jansson refuses to pack
 * a string that is not valid UTF-8, so text cut to a buffer's size or
 * taken from a file name, a remote's stderr or a peer must be cut on a
 * character boundary and have its stray bytes replaced first.
 */
#ifndef HUNTER_UTF8_H
#define HUNTER_UTF8_H

#include <stddef.h>

/* Length of the UTF-8 sequence at s (n bytes left), or 0 when it is not
 * one: a stray continuation byte, an overlong form, a surrogate, a
 * point past U+10FFFF, or a sequence cut short by n. */
size_t	utf8_seq(const unsigned char *s, size_t n);
/* The longest prefix of s's first len bytes, at most max, that does not
 * end inside a character. */
size_t	utf8_cut(const char *s, size_t len, size_t max);
/* Cut the string in buf (size bytes, NUL-terminated) on a character
 * boundary at size - 1 at most, then replace every byte that does not
 * begin a valid sequence with '?'.  Returns buf. */
char	*utf8_fix(char *buf, size_t size);

#endif
