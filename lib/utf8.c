/*
 * utf8.c: cutting and cleaning UTF-8 (utf8.h).
 */
#include <string.h>

#include "lib/utf8.h"

size_t
utf8_seq(const unsigned char *s, size_t n)
{
	size_t	 len;
	unsigned min, cp;

	if (n == 0)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		len = 2, min = 0x80, cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3, min = 0x800, cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4, min = 0x10000, cp = s[0] & 0x07;
	} else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* The length a lead byte announces: 1 for ASCII, 0 for a byte that
 * cannot begin a character. */
static size_t
utf8_lead_len(unsigned char c)
{
	if (c < 0x80)
		return 1;
	if ((c & 0xe0) == 0xc0)
		return 2;
	if ((c & 0xf0) == 0xe0)
		return 3;
	if ((c & 0xf8) == 0xf0)
		return 4;
	return 0;
}

size_t
utf8_cut(const char *s, size_t len, size_t max)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t	 end = len < max ? len : max, p = end, need;

	/* Back over the continuation bytes before the cut (3 at most) to
	 * the byte that leads them; drop that character if it needs more
	 * bytes than the cut leaves.  Stray bytes are utf8_fix's. */
	while (p > 0 && end - p < 3 && (u[p - 1] & 0xc0) == 0x80)
		p--;
	if (p == 0)
		return end;
	p--;
	need = utf8_lead_len(u[p]);
	return need > 1 && p + need > end ? p : end;
}

char *
utf8_fix(char *buf, size_t size)
{
	unsigned char	*u = (unsigned char *)buf;
	size_t		 n, k;

	if (size == 0)
		return buf;
	n = utf8_cut(buf, strnlen(buf, size - 1), size - 1);
	buf[n] = '\0';
	for (size_t i = 0; i < n; i += k) {
		if ((k = utf8_seq(u + i, n - i)) == 0) {
			u[i] = '?';
			k = 1;
		}
	}
	return buf;
}
