/*
 * draw.c: text, boxes and number formats shared by screens and widgets.
 * All text passes through sanitize() here, so no screen can forget it;
 * clipping counts display columns (wcwidth), so a wide character never
 * spills over a border.
 */
#include <langinfo.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <wchar.h>

#include "tui/draw.h"
#include "tui/sanitize.h"

static const struct glyphs glyphs_utf8 = {
	.utf8 = true,
	.eighths = { "", "▏", "▎", "▍", "▌", "▋", "▊", "▉", "█" },
	.spark = { "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" },
	.heat = { "░", "▒", "▓", "█" },
	.down = "✕", .unknown = "–", .ellipsis = "…", .mark = "▲",
	.times = "×", .sep = " │ ", .up = "▲", .dn = "▼",
};

static const struct glyphs glyphs_ascii = {
	.utf8 = false,
	.eighths = { "", "|", "|", "|", "|", "#", "#", "#", "#" },
	.spark = { "_", ".", "-", "-", "=", "=", "*", "#" },
	.heat = { ".", ":", "+", "#" },
	.down = "X", .unknown = "-", .ellipsis = "~", .mark = "!",
	.times = "x", .sep = " | ", .up = "^", .dn = "v",
};

const struct glyphs *glyphs = &glyphs_ascii;

void
draw_init(void)
{
	const char *cs = nl_langinfo(CODESET);

	glyphs = cs != NULL && (strcmp(cs, "UTF-8") == 0 ||
	    strcmp(cs, "utf8") == 0) ? &glyphs_utf8 : &glyphs_ascii;
}

/* Decode clean (sanitized) text into wide characters that fit maxw
 * columns; returns how many, and the columns in *cols. */
static size_t
draw_decode(const char *s, wchar_t *out, size_t outn, int maxw, int *cols)
{
	mbstate_t	 st;
	size_t		 n = 0, len = strlen(s), k;
	wchar_t		 wc;
	int		 w, used = 0;

	memset(&st, 0, sizeof st);
	while (len > 0 && n + 1 < outn) {
		k = mbrtowc(&wc, s, len, &st);
		if (k == (size_t)-1 || k == (size_t)-2 || k == 0) {
			memset(&st, 0, sizeof st);
			wc = L'?';
			k = 1;
		}
		if ((w = wcwidth(wc)) < 0) {
			wc = L'?';
			w = 1;
		}
		if (used + w > maxw)
			break;
		out[n++] = wc;
		used += w;
		s += k;
		len -= k;
	}
	out[n] = L'\0';
	*cols = used;
	return n;
}

int
draw_width(const char *s)
{
	wchar_t	 wbuf[1024];
	int	 cols;

	draw_decode(s, wbuf, 1024, 1 << 20, &cols);
	return cols;
}

int
draw_text(WINDOW *w, int y, int x, int maxw, enum elem e, const char *s)
{
	char	 clean[2048];
	wchar_t	 wbuf[1024];
	int	 cols, mw = getmaxx(w) - x;
	size_t	 n;

	if (maxw > mw)
		maxw = mw;
	if (maxw <= 0 || y < 0 || y >= getmaxy(w))
		return 0;
	sanitize(clean, sizeof clean, s);
	n = draw_decode(clean, wbuf, 1024, maxw, &cols);
	wattrset(w, theme_attr(e));
	mvwaddnwstr(w, y, x, wbuf, (int)n);
	wattrset(w, A_NORMAL);
	return cols;
}

int
draw_textf(WINDOW *w, int y, int x, int maxw, enum elem e, const char *fmt, ...)
{
	char	 buf[2048];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return draw_text(w, y, x, maxw, e, buf);
}

int
draw_text_right(WINDOW *w, int y, int x, int maxw, enum elem e, const char *s)
{
	int	 tw = draw_width(s);

	if (tw > maxw)
		tw = maxw;
	return draw_text(w, y, x + maxw - tw, tw, e, s);
}

void
draw_fill(WINDOW *w, int y, int x, int n, enum elem e)
{
	if (n <= 0 || y < 0 || y >= getmaxy(w))
		return;
	wattrset(w, theme_attr(e));
	mvwhline(w, y, x, ' ', n);
	wattrset(w, A_NORMAL);
}

void
draw_box(WINDOW *w, const char *title, bool focused)
{
	draw_frame(w, 0, 0, getmaxy(w), getmaxx(w), title, focused);
}

void
draw_frame(WINDOW *w, int y, int x, int h, int wd, const char *title,
    bool focused)
{
	if (h < 2 || wd < 2)
		return;
	wattrset(w, theme_attr(EL_BORDER));
	mvwhline(w, y, x + 1, ACS_HLINE, wd - 2);
	mvwhline(w, y + h - 1, x + 1, ACS_HLINE, wd - 2);
	mvwvline(w, y + 1, x, ACS_VLINE, h - 2);
	mvwvline(w, y + 1, x + wd - 1, ACS_VLINE, h - 2);
	mvwaddch(w, y, x, ACS_ULCORNER);
	mvwaddch(w, y, x + wd - 1, ACS_URCORNER);
	mvwaddch(w, y + h - 1, x, ACS_LLCORNER);
	mvwaddch(w, y + h - 1, x + wd - 1, ACS_LRCORNER);
	wattrset(w, A_NORMAL);
	if (title != NULL && *title != '\0') {
		char	 t[256];

		snprintf(t, sizeof t, " %s ", title);
		draw_text(w, y, x + 2, wd - 4, focused ? EL_SELECTED : EL_TITLE, t);
	}
}

const char *
fmt_num(char *buf, size_t n, bool valid, const char *fmt, double v)
{
	if (!valid || v != v)
		snprintf(buf, n, "%s", glyphs->unknown);
	else
		snprintf(buf, n, fmt, v);
	return buf;
}

/* v scaled by step with suffixes; "%.1f" below 100, "%.0f" above. */
static const char *
fmt_scaled(char *buf, size_t n, bool valid, double v, double step,
    const char *const *suffix, int nsuffix)
{
	int	 i = 0;

	if (!valid || v != v)
		return fmt_num(buf, n, false, "", 0);
	while ((v >= step || v <= -step) && i + 1 < nsuffix) {
		v /= step;
		i++;
	}
	snprintf(buf, n, v < 100 && v > -100 && i > 0 ? "%.1f%s" : "%.0f%s",
	    v, suffix[i]);
	return buf;
}

const char *
fmt_bytes(char *buf, size_t n, bool valid, double v)
{
	static const char *const s[] = { " B", " KiB", " MiB", " GiB", " TiB" };

	return fmt_scaled(buf, n, valid, v, 1024, s, 5);
}

const char *
fmt_rate(char *buf, size_t n, bool valid, double v)
{
	static const char *const s[] = { " B/s", " KB/s", " MB/s", " GB/s" };

	return fmt_scaled(buf, n, valid, v, 1000, s, 4);
}

const char *
fmt_si(char *buf, size_t n, bool valid, double v)
{
	static const char *const s[] = { "", "k", "M", "G" };

	return fmt_scaled(buf, n, valid, v, 1000, s, 4);
}

const char *
fmt_age(char *buf, size_t n, bool valid, double s)
{
	if (!valid || s != s || s < 0)
		return fmt_num(buf, n, false, "", 0);
	if (s < 90)
		snprintf(buf, n, "%.0fs", s);
	else if (s < 5400)
		snprintf(buf, n, "%.0fm", s / 60);
	else
		snprintf(buf, n, "%.0fh", s / 3600);
	return buf;
}
