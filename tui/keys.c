/*
 * keys.c: the key bindings, as a table of data: which keys, on which
 * screens, do what.  The loop looks a key up here; the status bar's
 * hints and the help screen are generated from the same table, so they
 * cannot drift from what the keys do.  An action returns ACT_ flags
 * that tell the loop what to redraw (htop's way).
 */
#include <stdio.h>
#include <string.h>

#include "tui/console.h"

#define ON(s)		(1u << (s))
#define EVERY		0u
#define JOBS		(ON(SCR_OVERVIEW) | ON(SCR_NODES) | ON(SCR_JOB) | \
			    ON(SCR_LOGS))
#define KEY_ESC		27

struct binding {
	int		 keys[6];	/* curses key codes; 0 ends */
	const char	*name;		/* as the help screen shows it */
	const char	*hint;		/* the status bar's label, or NULL */
	const char	*help;
	unsigned	 screens;	/* bit per screen; EVERY = all */
	int		(*act)(struct console *, int key);
};

static int
key_screen(struct console *c, int key)
{
	enum screen_id	 to = c->scr;

	if (key >= '1' && key < '1' + SCR_COUNT)
		to = (enum screen_id)(key - '1');
	else if (key == '\t')
		to = (enum screen_id)((c->scr + 1) % SCR_COUNT);
	else if (key == KEY_BTAB)
		to = (enum screen_id)((c->scr + SCR_COUNT - 1) % SCR_COUNT);
	else if (key == '?')
		to = c->scr == SCR_HELP ? SCR_OVERVIEW : SCR_HELP;
	if (to == c->scr)
		return ACT_NONE;
	c->scr = to;
	return ACT_LAYOUT;
}

static int
key_move(struct console *c, int key)
{
	const struct screen *s = screen_table[c->scr];
	int	 page = console_height() - 4;

	if (s->nav == NULL)
		return ACT_NONE;
	switch (key) {
	case KEY_UP: case 'k':		return s->nav(c, -1, 0);
	case KEY_DOWN: case 'j':	return s->nav(c, 1, 0);
	case KEY_LEFT: case 'h':	return s->nav(c, 0, -1);
	case KEY_RIGHT: case 'l':	return s->nav(c, 0, 1);
	case KEY_PPAGE:			return s->nav(c, -page, 0);
	case KEY_NPAGE:			return s->nav(c, page, 0);
	}
	return ACT_NONE;
}

static int
key_enter(struct console *c, int key)
{
	const struct screen *s = screen_table[c->scr];

	(void)key;
	return s->enter != NULL ? s->enter(c) : ACT_NONE;
}

static int
key_sort(struct console *c, int key)
{
	const struct screen *s = screen_table[c->scr];

	(void)key;
	return s->sort != NULL ? s->sort(c) : ACT_NONE;
}

static int
key_filter_done(struct console *c, bool ok)
{
	if (ok) {
		snprintf(c->filter[c->scr], sizeof c->filter[c->scr], "%s",
		    c->modal.input);
		c->sel[c->scr] = 0;
		c->scroll[c->scr] = 0;
	}
	return ACT_REDRAW;
}

static int
key_filter(struct console *c, int key)
{
	const char *what = screen_table[c->scr]->filter_what;

	(void)key;
	if (what == NULL)
		return ACT_NONE;
	modal_prompt(c, what, c->filter[c->scr], key_filter_done);
	return ACT_REDRAW;
}

static int
key_clear(struct console *c, int key)
{
	const struct screen *s = screen_table[c->scr];
	int	 r;

	(void)key;
	if (s->back != NULL && (r = s->back(c)) != ACT_NONE)
		return r;
	if (c->filter[c->scr][0] == '\0')
		return ACT_NONE;
	c->filter[c->scr][0] = '\0';
	return ACT_REDRAW;
}

/* The status bar shows hints in this order, as far as they fit: the
 * ways out and to help first, then the operator's commands. */
static const struct binding bindings[] = {
	{ { 'q' }, "q", "quit", "detach: the jobs keep running and `hunter` "
	    "re-attaches", EVERY, action_quit },
	{ { '?' }, "?", "help", "this screen (again: back to the overview)",
	    EVERY, key_screen },
	{ { 'p' }, "p", "pause", "pause the selected job, or resume it if "
	    "paused", JOBS, action_pause },
	{ { 'c' }, "c", "ckpt", "checkpoint the selected job now", JOBS,
	    action_checkpoint },
	{ { 'm' }, "m", "migrate", "move a rank of the selected job to a node "
	    "with a free slot (spares too)", JOBS, action_migrate },
	{ { 'x' }, "x", "stop", "stop the selected job: checkpoint, then end "
	    "(asks first)", JOBS, action_stop },
	{ { 'n' }, "n", "new", "submit a job file (checked before it is sent)",
	    EVERY, action_new_job },
	{ { '/' }, "/", "filter", "filter the table; on the logs screen, search",
	    ON(SCR_OVERVIEW) | ON(SCR_NODES) | ON(SCR_JOB) | ON(SCR_LOGS),
	    key_filter },
	{ { 's' }, "s", "sort", "sort by the next column",
	    ON(SCR_OVERVIEW) | ON(SCR_NODES) | ON(SCR_JOB), key_sort },
	{ { 't' }, "t", "theme", "next theme", EVERY, action_theme },
	{ { 'v' }, "v", "heat", "colour the heat map by the next metric: cpu, "
	    "memory, gpu, gpu memory, disk, state fs, pressure, network, "
	    "retransmits, temperature, power", ON(SCR_OVERVIEW), action_heat },
	{ { '\t' }, "Tab", NULL, "next screen", EVERY, key_screen },
	{ { KEY_BTAB }, "S-Tab", NULL, "previous screen", EVERY, key_screen },
	{ { '1', '2', '3', '4', '5' }, "1-5", NULL, "overview, nodes, job, "
	    "logs, help", EVERY, key_screen },
	{ { KEY_UP, 'k', KEY_DOWN, 'j' }, "Up/Down j k", NULL, "select a "
	    "row: job, node, rank, line", EVERY, key_move },
	{ { KEY_LEFT, 'h', KEY_RIGHT, 'l' }, "Left/Right h l", NULL,
	    "overview: select a node; node detail: the next node; job: the "
	    "next job; logs: the rank shown", EVERY, key_move },
	{ { KEY_PPAGE, KEY_NPAGE }, "PgUp/PgDn", NULL, "a page up or down",
	    EVERY, key_move },
	{ { '\r', '\n', KEY_ENTER }, "Enter", NULL, "open: node -> nodes "
	    "screen -> its detail -> a process's job, job -> job screen, "
	    "rank -> its log", EVERY, key_enter },
	{ { KEY_ESC }, "Esc", NULL, "back out of a node's detail; clear the "
	    "filter or search", EVERY, key_clear },
};

#define N_BINDINGS (sizeof bindings / sizeof bindings[0])

static bool
binding_on(const struct binding *k, enum screen_id s)
{
	return k->screens == EVERY || (k->screens & ON(s)) != 0;
}

int
keys_dispatch(struct console *c, int key)
{
	for (size_t i = 0; i < N_BINDINGS; i++) {
		const struct binding *k = &bindings[i];

		if (!binding_on(k, c->scr))
			continue;
		for (int j = 0; j < 6 && k->keys[j] != 0; j++) {
			if (k->keys[j] == key)
				return k->act(c, key);
		}
	}
	return ACT_NONE;
}

int
keys_hints(const struct console *c, struct status_hint *h, int max)
{
	int	 n = 0;

	for (size_t i = 0; i < N_BINDINGS && n < max; i++) {
		if (bindings[i].hint != NULL && binding_on(&bindings[i], c->scr))
			h[n++] = (struct status_hint){ bindings[i].name,
			    bindings[i].hint };
	}
	return n;
}

int
keys_help(const struct console *c, char lines[][160], int max)
{
	int	 n = 0;

	(void)c;
	if (n < max)
		snprintf(lines[n++], 160, "Keys");
	for (size_t i = 0; i < N_BINDINGS && n < max; i++) {
		char	 where[64] = "";

		if (bindings[i].screens != EVERY && bindings[i].screens != JOBS) {
			for (int s = 0; s < SCR_COUNT; s++) {
				size_t	 at = strlen(where);

				if (bindings[i].screens & ON(s))
					snprintf(where + at, sizeof where - at,
					    "%s%s", at ? "," : " [",
					    screen_table[s]->name);
			}
			strcat(where, "]");
		}
		snprintf(lines[n++], 160, "  %-15s %s%s", bindings[i].name,
		    bindings[i].help, where);
	}
	if (n < max)
		lines[n++][0] = '\0';
	if (n < max)
		snprintf(lines[n++], 160, "Screens");
	for (int s = 0; s < SCR_COUNT && n < max; s++)
		snprintf(lines[n++], 160, "  %d %-13s %s", s + 1,
		    screen_table[s]->name, screen_table[s]->about);
	return n;
}
