/*
 * theme-colour.c: a theme on the terminal.  Each element gets a colour
 * pair; a colour the terminal lacks (a number over COLORS, say 208 on an
 * 8-colour TERM=screen) falls back to the element's fg8/bg8, else to the
 * nearest of the eight basic colours by RGB distance.  Without colour
 * (NO_COLOR, or a terminal that has none) only the attributes remain.
 * The built-in theme is the last resort when no theme file can be read.
 */
#include <stdio.h>
#include <string.h>

#include "tui/theme.h"

static attr_t theme_attrs[EL_COUNT];

void
theme_builtin(struct theme *t)
{
	static const struct { enum elem e; short fg, bg; attr_t a; } def[] = {
		{ EL_TEXT, -1, -1, 0 }, { EL_TEXT_DIM, 8, -1, A_DIM },
		{ EL_HEADER, 7, 4, A_BOLD }, { EL_BORDER, 6, -1, 0 },
		{ EL_TITLE, 6, -1, A_BOLD }, { EL_SELECTED, 0, 6, 0 },
		{ EL_BAR_LOW, 2, -1, 0 }, { EL_BAR_MID, 3, -1, 0 },
		{ EL_BAR_HIGH, 1, -1, A_BOLD }, { EL_NODE_IDLE, 4, -1, 0 },
		{ EL_NODE_BUSY, 2, -1, 0 }, { EL_NODE_HOT, 1, -1, A_BOLD },
		{ EL_NODE_DOWN, 1, -1, A_REVERSE }, { EL_NODE_SPARE, 5, -1, 0 },
		{ EL_CHART_LINE, 2, -1, 0 }, { EL_CHART_EPOCH, 3, -1, A_BOLD },
		{ EL_CHART_AXIS, 8, -1, A_DIM }, { EL_SPARK_RX, 6, -1, 0 },
		{ EL_SPARK_TX, 5, -1, 0 }, { EL_EVENT_INFO, -1, -1, 0 },
		{ EL_EVENT_WARN, 3, -1, A_BOLD }, { EL_EVENT_ERROR, 1, -1, A_BOLD },
		{ EL_STATUS, 0, 6, 0 }, { EL_STATUS_KEY, 0, 6, A_BOLD },
		{ EL_MESSAGE, 3, -1, A_BOLD }, { EL_STRAGGLER, 1, -1, A_BOLD },
		{ EL_PAUSED, 3, -1, A_BOLD }, { EL_PROMPT, 7, 4, 0 },
		{ EL_MATCH, 0, 3, 0 },
	};

	memset(t, 0, sizeof *t);
	snprintf(t->name, sizeof t->name, "built-in");
	for (size_t i = 0; i < sizeof def / sizeof def[0]; i++) {
		struct theme_elem *te = &t->e[def[i].e];

		te->fg = def[i].fg;
		te->bg = def[i].bg;
		te->fg8 = te->bg8 = THEME_UNSET;
		te->attr = def[i].a;
		te->set = true;
	}
}

/* The nearest of the eight basic colours to xterm colour c (16..255). */
static short
theme_to8(short c)
{
	static const int base[8][3] = { { 0, 0, 0 }, { 205, 0, 0 },
		{ 0, 205, 0 }, { 205, 205, 0 }, { 0, 0, 238 }, { 205, 0, 205 },
		{ 0, 205, 205 }, { 229, 229, 229 } };
	static const int cube[6] = { 0, 95, 135, 175, 215, 255 };
	int	 rgb[3], best = 0;
	long	 bd = -1;

	if (c == 8)
		return 7;		/* grey: white (dimmed by its attr) */
	if (c < 16)
		return c < 8 ? c : (short)(c - 8);
	if (c >= 232)
		rgb[0] = rgb[1] = rgb[2] = 8 + 10 * (c - 232);
	else {
		rgb[0] = cube[(c - 16) / 36];
		rgb[1] = cube[(c - 16) / 6 % 6];
		rgb[2] = cube[(c - 16) % 6];
	}
	for (int i = 0; i < 8; i++) {
		long d = 0;

		for (int k = 0; k < 3; k++)
			d += (long)(rgb[k] - base[i][k]) * (rgb[k] - base[i][k]);
		if (bd < 0 || d < bd) {
			bd = d;
			best = i;
		}
	}
	return (short)best;
}

static short
theme_fit(short c, short c8)
{
	if (c < 0 || c < COLORS)
		return c;
	if (c8 != THEME_UNSET && c8 < COLORS)
		return c8;
	return theme_to8(c);
}

void
theme_apply(const struct theme *t, bool colour)
{
	for (int i = 0; i < EL_COUNT; i++) {
		const struct theme_elem *te = &t->e[i];

		theme_attrs[i] = te->attr;
		if (!colour || i + 1 >= COLOR_PAIRS)
			continue;
		init_pair((short)(i + 1), theme_fit(te->fg, te->fg8),
		    theme_fit(te->bg, te->bg8));
		if (te->fg != -1 || te->bg != -1)
			theme_attrs[i] |= COLOR_PAIR(i + 1);
	}
}

attr_t
theme_attr(enum elem e)
{
	return e < EL_COUNT ? theme_attrs[e] : 0;
}
