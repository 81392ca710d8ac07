/*
 * sanitize.h: untrusted text (log lines, event reasons, job and node
 * names, file names in error messages) made safe to draw on a terminal.
 */
#ifndef HUNTER_SANITIZE_H
#define HUNTER_SANITIZE_H

#include <stddef.h>

/*
 * Copy at most len bytes of s into out (size outsz, always terminated),
 * dropping C0 controls, DEL, C1 controls and whole escape sequences
 * (CSI, OSC, DCS, SOS, PM, APC, and the short ESC forms), in their 7-bit,
 * 8-bit and UTF-8-encoded C1 spellings, and the bidi overrides.  Tabs and
 * newlines become one space; bytes that are not UTF-8 become '?'.
 * Returns the length written.
 */
size_t	sanitize_n(char *out, size_t outsz, const char *s, size_t len);
/* The same for a NUL-terminated string. */
size_t	sanitize(char *out, size_t outsz, const char *s);
/*
 * Copy the JSON text s into out with what a terminal would act on inside
 * its strings (C0 controls, DEL, C1 controls, the bidi overrides: JSON
 * allows the last three raw) written as \uXXXX escapes, so that a parser
 * reads the same strings and a terminal is not steered.  Bytes that are
 * not UTF-8 become '?'.  Returns the length, or (size_t)-1 when out is too
 * small (6 * strlen(s) + 1 bytes always do).
 */
size_t	sanitize_json(char *out, size_t outsz, const char *s);

#endif
