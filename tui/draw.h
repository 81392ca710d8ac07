/*
 * draw.h: what every screen and widget draws with: the glyph set
 * (Unicode, or ASCII when the locale is not UTF-8), text that is
 * sanitized and clipped to a width in columns, boxes, and the number
 * formats that draw an unknown value as a dash, never as 0.
 */
#ifndef HUNTER_DRAW_H
#define HUNTER_DRAW_H

#include <stdbool.h>
#include <stddef.h>

#include <curses.h>

#include "tui/theme.h"

struct glyphs {
	bool		 utf8;
	const char	*eighths[9];	/* bar ends: "", 1/8 .. 8/8 */
	const char	*spark[8];	/* sparkline levels, lowest first */
	const char	*heat[4];	/* heat map cells: idle .. hot */
	const char	*down;		/* a node that is down */
	const char	*unknown;	/* a value nobody measured */
	const char	*ellipsis;
	const char	*mark;		/* straggler */
	const char	*times;		/* "micro-batch 64 × accum 2" */
	const char	*sep;		/* between header fields */
	const char	*up, *dn;	/* sort direction */
};

extern const struct glyphs *glyphs;

/* Pick the glyph set from the locale (nl_langinfo(CODESET)). */
void	draw_init(void);

/* Display columns of UTF-8 text. */
int	draw_width(const char *);
/* Draw untrusted text s at y, x in element e, sanitized, clipped to
 * maxw columns.  Returns the columns used. */
int	draw_text(WINDOW *, int y, int x, int maxw, enum elem, const char *s);
int	draw_textf(WINDOW *, int y, int x, int maxw, enum elem,
	    const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* Right-aligned in the field [x, x + maxw). */
int	draw_text_right(WINDOW *, int y, int x, int maxw, enum elem,
	    const char *s);
/* n spaces in element e. */
void	draw_fill(WINDOW *, int y, int x, int n, enum elem);
/* A border in EL_BORDER with title on its top edge. */
void	draw_box(WINDOW *, const char *title, bool focused);

/* The same border around a rectangle inside a window. */
void	draw_frame(WINDOW *, int y, int x, int h, int w, const char *title,
	    bool focused);

/* Numbers: each writes "–" (or "-") when valid is false. */
const char *fmt_num(char *, size_t, bool valid, const char *fmt, double);
const char *fmt_bytes(char *, size_t, bool valid, double bytes);
const char *fmt_rate(char *, size_t, bool valid, double bytes_per_s);
const char *fmt_si(char *, size_t, bool valid, double);
const char *fmt_age(char *, size_t, bool valid, double seconds);

#endif
