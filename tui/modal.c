/*
 * modal.c: the three small dialogs keys open over a screen: a prompt
 * (a line of text, with room for error lines under it), a yes/no
 * question, and a list to pick from.  While one is open it takes every
 * key.  Its callback runs with the dialog already closed, so it can
 * open the next one (migrate: a rank, then a node) or reopen itself
 * with errors (a job file that does not validate).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tui/console.h"
#include "tui/draw.h"

#define KEY_ESC		27
#define KEY_CTRL_U	21

static void
modal_open(struct console *c, enum modal_kind k, const char *title,
    int (*done)(struct console *, bool))
{
	struct modal *m = &c->modal;

	m->kind = k;
	snprintf(m->title, sizeof m->title, "%s", title);
	m->input[0] = '\0';
	m->len = 0;
	m->nitems = m->sel = m->nerrors = 0;
	m->done = done;
}

void
modal_prompt(struct console *c, const char *title, const char *init,
    int (*done)(struct console *, bool))
{
	modal_open(c, MODAL_PROMPT, title, done);
	snprintf(c->modal.input, sizeof c->modal.input, "%s", init ? init : "");
	c->modal.len = (int)strlen(c->modal.input);
}

void
modal_confirm(struct console *c, const char *title, const char *question,
    int (*done)(struct console *, bool))
{
	modal_open(c, MODAL_CONFIRM, title, done);
	snprintf(c->modal.input, sizeof c->modal.input, "%s", question);
}

void
modal_pick(struct console *c, const char *title,
    int (*done)(struct console *, bool))
{
	modal_open(c, MODAL_PICK, title, done);
}

void
modal_add_item(struct console *c, const char *fmt, ...)
{
	va_list	 ap;

	if (c->modal.nitems >= MODAL_ITEMS)
		return;
	va_start(ap, fmt);
	vsnprintf(c->modal.items[c->modal.nitems++], sizeof c->modal.items[0],
	    fmt, ap);
	va_end(ap);
}

void
modal_close(struct console *c)
{
	c->modal.kind = MODAL_NONE;
	c->force = true;
}

static int
modal_finish(struct console *c, bool ok)
{
	int (*done)(struct console *, bool) = c->modal.done;

	modal_close(c);
	return (done != NULL ? done(c, ok) : ACT_NONE) | ACT_REDRAW;
}

static int
modal_edit(struct console *c, int key)
{
	struct modal *m = &c->modal;

	if (key == KEY_BACKSPACE || key == 127 || key == 8) {
		/* a whole UTF-8 character: its continuation bytes too */
		while (m->len > 0 &&
		    ((unsigned char)m->input[--m->len] & 0xc0) == 0x80)
			;
		m->input[m->len] = '\0';
	} else if (key == KEY_CTRL_U) {
		m->len = 0;
		m->input[0] = '\0';
	} else if (key >= 32 && key < 256 && key != 127 &&
	    m->len + 1 < (int)sizeof m->input) {
		m->input[m->len++] = (char)key;
		m->input[m->len] = '\0';
	} else
		return ACT_NONE;
	m->nerrors = 0;
	return ACT_REDRAW;
}

int
modal_key(struct console *c, int key)
{
	struct modal *m = &c->modal;

	if (key == KEY_ESC)
		return modal_finish(c, false);
	switch (m->kind) {
	case MODAL_PROMPT:
		if (key == '\r' || key == '\n' || key == KEY_ENTER)
			return modal_finish(c, true);
		return modal_edit(c, key);
	case MODAL_CONFIRM:
		if (key == 'y' || key == 'Y')
			return modal_finish(c, true);
		if (key == 'n' || key == 'N')
			return modal_finish(c, false);
		return ACT_NONE;
	case MODAL_PICK:
		if (key == KEY_UP || key == 'k')
			m->sel = m->sel > 0 ? m->sel - 1 : 0;
		else if (key == KEY_DOWN || key == 'j')
			m->sel = m->sel + 1 < m->nitems ? m->sel + 1 : m->sel;
		else if ((key == '\r' || key == '\n' || key == KEY_ENTER) &&
		    m->nitems > 0)
			return modal_finish(c, true);
		else
			return ACT_NONE;
		return ACT_REDRAW;
	case MODAL_NONE:
		break;
	}
	return ACT_NONE;
}

void
modal_draw(struct console *c)
{
	struct modal	*m = &c->modal;
	int		 w = COLS - 8 < 90 ? COLS - 8 : 90, h, y0, top = 0, rows;
	WINDOW		*win;

	if (m->kind == MODAL_PROMPT)
		h = 4 + (m->nerrors > 0 ? m->nerrors + 1 : 0);
	else if (m->kind == MODAL_CONFIRM)
		h = 6;
	else
		h = m->nitems + 4;
	if (h > LINES - 4)
		h = LINES - 4;
	y0 = (LINES - h) / 2;
	if ((win = newwin(h, w, y0, (COLS - w) / 2)) == NULL)
		return;
	wbkgdset(win, ' ' | theme_attr(EL_PROMPT));
	werase(win);
	draw_box(win, m->title, true);
	switch (m->kind) {
	case MODAL_PROMPT:
		draw_text(win, 1, 2, 2, EL_PROMPT, "> ");
		{
			int	 iw = draw_width(m->input), room = w - 6;
			const char *s = m->input;

			/* keep the end of a long path in view */
			while (iw > room && *s != '\0') {
				s++;
				while (((unsigned char)*s & 0xc0) == 0x80)
					s++;
				iw = draw_width(s);
			}
			draw_text(win, 1, 4, room, EL_PROMPT, s);
			draw_text(win, 1, 4 + iw, 1, EL_SELECTED, " ");
		}
		for (int i = 0; i < m->nerrors && 3 + i < h - 1; i++)
			draw_text(win, 3 + i, 2, w - 4, EL_EVENT_ERROR,
			    m->errors[i]);
		draw_text(win, h - 1, 2, w - 4, EL_BORDER,
		    " Enter: ok  Esc: cancel  ^U: clear ");
		break;
	case MODAL_CONFIRM:
		draw_text(win, 2, 2, w - 4, EL_PROMPT, m->input);
		draw_text(win, 3, 2, w - 4, EL_PROMPT, "y: yes   n or Esc: no");
		break;
	case MODAL_PICK:
		rows = h - 4;
		if (m->sel >= rows)
			top = m->sel - rows + 1;
		for (int i = 0; i < rows && top + i < m->nitems; i++)
			draw_text(win, 2 + i, 2, w - 4, top + i == m->sel ?
			    EL_SELECTED : EL_PROMPT, m->items[top + i]);
		draw_text(win, h - 1, 2, w - 4, EL_BORDER,
		    " Enter: choose  Esc: cancel ");
		break;
	case MODAL_NONE:
		break;
	}
	wnoutrefresh(win);
	delwin(win);
}
