/*
 * sanitize.c: strip what a terminal would act on from text we did not
 * write.  A worker's log line or a file name can hold ESC ] 0 ; title BEL
 * (retitles the window), ESC [ 2 J (clears the screen) or worse; drawn
 * as-is through curses those bytes reach the terminal.  Everything a
 * terminal treats as a control goes, in each spelling: 7-bit (ESC x),
 * raw 8-bit C1 bytes, and C1 code points encoded as UTF-8 (C2 80..9F).
 * Printable UTF-8 is kept; malformed UTF-8 becomes '?'.
 *
 * sanitize_json keeps JSON text whole instead: what a terminal would act
 * on inside its strings becomes a \uXXXX escape, which a parser reads as
 * the same string.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tui/sanitize.h"

/* C1 introducers of sequences that run to a terminator (ST or, for OSC,
 * also BEL): DCS, SOS, OSC, PM, APC. */
static bool
sanitize_is_string_intro(uint32_t c1)
{
	return c1 == 0x90 || c1 == 0x98 || c1 == 0x9d || c1 == 0x9e ||
	    c1 == 0x9f;
}

/*
 * Decode one UTF-8 code point at s[i] (len bytes in all).  Returns its
 * length and the point in *cp, or 0 when the bytes are not UTF-8
 * (overlong, surrogate, truncated, out of range).
 */
static size_t
sanitize_utf8(const unsigned char *s, size_t i, size_t len, uint32_t *cp)
{
	unsigned char	 b = s[i];
	size_t		 n, k;
	uint32_t	 c, min;

	if (b < 0x80) {
		*cp = b;
		return 1;
	}
	if (b >= 0xc2 && b <= 0xdf) {
		n = 2; c = b & 0x1f; min = 0x80;
	} else if (b >= 0xe0 && b <= 0xef) {
		n = 3; c = b & 0x0f; min = 0x800;
	} else if (b >= 0xf0 && b <= 0xf4) {
		n = 4; c = b & 0x07; min = 0x10000;
	} else
		return 0;
	if (i + n > len)
		return 0;
	for (k = 1; k < n; k++) {
		if ((s[i + k] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i + k] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

/* The code point at i as a C1 control (0x80..0x9f), raw or UTF-8
 * encoded; returns its byte length, or 0 if it is not one. */
static size_t
sanitize_c1(const unsigned char *s, size_t i, size_t len, uint32_t *c1)
{
	uint32_t	 cp;
	size_t		 n = sanitize_utf8(s, i, len, &cp);

	if (n == 2 && cp >= 0x80 && cp <= 0x9f) {
		*c1 = cp;
		return 2;
	}
	if (n == 0 && s[i] >= 0x80 && s[i] <= 0x9f) {
		*c1 = s[i];
		return 1;
	}
	return 0;
}

/* Skip a control string (after its introducer) up to and including its
 * terminator: ST as ESC \ or C1 0x9c, or BEL for OSC.  An unterminated
 * one swallows the rest, as a terminal would. */
static size_t
sanitize_skip_string(const unsigned char *s, size_t i, size_t len, bool osc)
{
	uint32_t	 c1;
	size_t		 n;

	while (i < len) {
		if (osc && s[i] == 0x07)
			return i + 1;
		if (s[i] == 0x1b && i + 1 < len && s[i + 1] == '\\')
			return i + 2;
		if ((n = sanitize_c1(s, i, len, &c1)) > 0 && c1 == 0x9c)
			return i + n;
		i++;
	}
	return len;
}

/* Skip CSI parameters, intermediates and the final byte.  A byte that
 * cannot be part of the sequence ends it there (and is looked at again). */
static size_t
sanitize_skip_csi(const unsigned char *s, size_t i, size_t len)
{
	while (i < len && s[i] >= 0x30 && s[i] <= 0x3f)
		i++;
	while (i < len && s[i] >= 0x20 && s[i] <= 0x2f)
		i++;
	if (i < len && s[i] >= 0x40 && s[i] <= 0x7e)
		i++;
	return i;
}

/* Skip what follows a C1 introducer (7-bit ESC Fe or 8-bit). */
static size_t
sanitize_skip_c1(const unsigned char *s, size_t i, size_t len, uint32_t c1)
{
	if (c1 == 0x9b)
		return sanitize_skip_csi(s, i, len);
	if (sanitize_is_string_intro(c1))
		return sanitize_skip_string(s, i, len, c1 == 0x9d);
	return i;
}

/* Skip an escape sequence starting at the ESC at s[i]. */
static size_t
sanitize_skip_esc(const unsigned char *s, size_t i, size_t len)
{
	i++;
	if (i >= len)
		return len;
	if (s[i] >= 0x40 && s[i] <= 0x5f)	/* ESC Fe = a C1 control */
		return sanitize_skip_c1(s, i + 1, len, (uint32_t)s[i] + 0x40);
	while (i < len && s[i] >= 0x20 && s[i] <= 0x2f)
		i++;			/* nF intermediates */
	if (i < len && s[i] >= 0x30 && s[i] <= 0x7e)
		i++;			/* the final byte */
	return i;
}

/* Bidi embeddings, overrides and isolates: they reorder what follows. */
static bool
sanitize_is_bidi(uint32_t cp)
{
	return (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

size_t
sanitize_n(char *out, size_t outsz, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t		 i = 0, o = 0, n;
	uint32_t	 cp, c1;

	if (outsz == 0)
		return 0;
	while (i < len && s[i] != '\0') {
		if (s[i] == 0x1b) {
			i = sanitize_skip_esc(s, i, len);
			continue;
		}
		if ((n = sanitize_c1(s, i, len, &c1)) > 0) {
			i = sanitize_skip_c1(s, i + n, len, c1);
			continue;
		}
		if (s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
			if (o + 1 < outsz && o > 0 && out[o - 1] != ' ')
				out[o++] = ' ';
			i++;
			continue;
		}
		if (s[i] < 0x20 || s[i] == 0x7f) {
			i++;
			continue;
		}
		if ((n = sanitize_utf8(s, i, len, &cp)) == 0) {
			if (o + 1 >= outsz)
				break;
			out[o++] = '?';
			i++;
			continue;
		}
		if (sanitize_is_bidi(cp)) {
			i += n;
			continue;
		}
		if (o + n >= outsz)
			break;		/* never cut a character in half */
		memcpy(out + o, s + i, n);
		o += n;
		i += n;
	}
	out[o] = '\0';
	return o;
}

size_t
sanitize(char *out, size_t outsz, const char *s)
{
	return sanitize_n(out, outsz, s, s != NULL ? strlen(s) : 0);
}

/* Whether a terminal acts on code point cp: C0, DEL, C1 or bidi. */
static bool
sanitize_acts(uint32_t cp)
{
	return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) ||
	    sanitize_is_bidi(cp);
}

size_t
sanitize_json(char *out, size_t outsz, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t		 i = 0, o = 0, n, len = strlen(str);
	uint32_t	 cp;
	bool		 in = false, bad;	/* in: within a string */

	while (i < len) {
		if ((bad = (n = sanitize_utf8(s, i, len, &cp)) == 0))
			n = 1;
		if (!bad && sanitize_acts(cp) && in) {
			if (o + 6 >= outsz)
				return (size_t)-1;
			o += (size_t)snprintf(out + o, 7, "\\u%04x", cp);
			i += n;
			continue;
		}
		/* Outside strings only JSON's whitespace may stand. */
		if (!bad && sanitize_acts(cp) && cp != '\t' && cp != '\n' &&
		    cp != '\r')
			bad = true;
		/* An escape's second byte (\" among them) goes with it. */
		if (!bad && in && cp == '\\' && i + 1 < len &&
		    s[i + 1] >= 0x20 && s[i + 1] < 0x7f)
			n = 2;
		else if (!bad && cp == '"')
			in = !in;
		if (o + n >= outsz)
			return (size_t)-1;
		if (bad)
			out[o++] = '?';
		else {
			memcpy(out + o, s + i, n);
			o += n;
		}
		i += n;
	}
	if (o >= outsz)
		return (size_t)-1;
	out[o] = '\0';
	return o;
}
