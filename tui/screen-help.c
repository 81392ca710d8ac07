/*
 * screen-help.c: the keys and screens, generated from the binding table
 * and the screen table, so the help is never out of date.
 */
#include <stdio.h>

#include "tui/console.h"
#include "tui/draw.h"

enum { P_HELP = 2 };

#define HELP_LINES	64

static void
help_draw(struct console *c)
{
	char	 lines[HELP_LINES][160];
	int	 n = keys_help(c, lines, HELP_LINES), H = console_height();
	int	 rows = H - 2, top;
	WINDOW	*w;

	if (c->scroll[SCR_HELP] > n - rows)
		c->scroll[SCR_HELP] = n - rows > 0 ? n - rows : 0;
	top = c->scroll[SCR_HELP];
	if ((w = console_panel(c, P_HELP, console_top(), 0, H, COLS,
	    console_mix(c->ui_gen, 0))) == NULL)
		return;
	draw_box(w, "help", false);
	for (int i = 0; i < rows && top + i < n; i++)
		draw_text(w, 1 + i, 2, COLS - 4, lines[top + i][0] != ' ' ?
		    EL_TITLE : EL_TEXT, lines[top + i]);
	draw_textf(w, H - 1, 2, COLS - 4, EL_BORDER, " theme %s%s%s ",
	    c->theme.name, c->colour ? "" : ", no colour",
	    glyphs->utf8 ? "" : ", ASCII");
}

static int
help_move(struct console *c, int dy, int dx)
{
	(void)dx;
	c->scroll[SCR_HELP] += dy;
	if (c->scroll[SCR_HELP] < 0)
		c->scroll[SCR_HELP] = 0;
	return ACT_REDRAW;
}

const struct screen screen_help = {
	.name = "help",
	.about = "this list of keys and screens",
	.draw = help_draw,
	.nav = help_move,
};
