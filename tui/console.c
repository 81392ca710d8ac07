/*
 * console.c: the console's loop.  It waits for a key for at most 100 ms
 * (getch with a timeout, so it never blocks on anything else), turns
 * keys into actions through the binding table, and at most four times
 * a second draws a frame: with the backend's lock taken by trylock
 * (when the backend holds it, the last frame stays up), each panel of
 * the current screen is redrawn only if the hash of what it shows
 * changed, and curses sends only the cells that differ.  A terminal
 * under 80x24 gets a one-line explanation instead.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/clock.h"
#include "tui/console.h"
#include "tui/draw.h"

#define FRAME_S		0.25	/* at most four frames a second */
#define MSG_S		8.0	/* how long a message stays on the status bar */

enum { P_HEADER, P_STATUS };

const struct screen *const screen_table[SCR_COUNT] = {
	[SCR_OVERVIEW] = &screen_overview,
	[SCR_NODES] = &screen_nodes,
	[SCR_JOB] = &screen_job,
	[SCR_LOGS] = &screen_logs,
	[SCR_HELP] = &screen_help,
};

static volatile sig_atomic_t console_signalled, console_preempt;

/* SIGTERM and SIGUSR1 are Slurm's notice (preemption, a time limit): the
 * jobs checkpoint and stop, and the console exits once they have.
 * SIGHUP and SIGINT leave at once, the jobs running. */
static void
console_on_signal(int sig)
{
	if (sig == SIGTERM || sig == SIGUSR1)
		console_preempt = sig;
	else
		console_signalled = sig;
}

/* Start the preemption once; true while jobs are still stopping. */
static bool
console_preempting(struct console *c, bool *asked)
{
	const char	*job = getenv("SLURM_JOB_ID");
	char		 why[128];
	int		 left;

	if (console_preempt == 0)
		return false;
	if (backend_trylock(c->b) != 0)
		return true;
	if (!*asked) {
		snprintf(why, sizeof why, "%s%s%s%s", console_preempt == SIGUSR1 ?
		    "SIGUSR1" : "SIGTERM", job ? " (Slurm job " : "", job ? job :
		    "", job ? ")" : "");
		left = backend_preempt(c->b, why);
		console_say(c, EL_EVENT_WARN, "%s: %d job%s checkpoint%s and "
		    "stop%s; the console exits then", why, left, left == 1 ? "" :
		    "s", left == 1 ? "s" : "", left == 1 ? "s" : "");
		*asked = true;
	} else
		left = backend_preempt(c->b, "");
	backend_unlock(c->b);
	return left > 0;
}

uint64_t
console_mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdULL;
}

static uint64_t
console_hash_str(uint64_t h, const char *s)
{
	while (*s != '\0')
		h = console_mix(h, (unsigned char)*s++);
	return h;
}

int
console_top(void)
{
	return 1;
}

int
console_height(void)
{
	return LINES - 2;
}

WINDOW *
console_panel(struct console *c, int id, int y, int x, int h, int w,
    uint64_t key)
{
	struct panel	*p = &c->panels[id];

	if (id < 0 || id >= CONSOLE_PANELS || h <= 0 || w <= 0)
		return NULL;
	if (p->w == NULL || p->y != y || p->x != x || p->h != h || p->wd != w) {
		if (p->w != NULL)
			delwin(p->w);
		if ((p->w = newwin(h, w, y, x)) == NULL)
			return NULL;
		p->y = y, p->x = x, p->h = h, p->wd = w;
	} else if (!c->force && p->key == key)
		return NULL;
	p->key = key;
	p->dirty = true;
	werase(p->w);
	return p->w;
}

/* Drop every panel: a new screen or size lays them out afresh. */
static void
console_reset_panels(struct console *c)
{
	for (int i = 0; i < CONSOLE_PANELS; i++) {
		if (c->panels[i].w != NULL)
			delwin(c->panels[i].w);
		memset(&c->panels[i], 0, sizeof c->panels[i]);
	}
	c->force = true;
	clearok(curscr, TRUE);
}

void
console_say(struct console *c, enum elem e, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(c->msg, sizeof c->msg, fmt, ap);
	va_end(ap);
	c->msg_elem = e;
	c->msg_until = clock_mono() + MSG_S;
	feed_add(&c->feed, "", -1, "", e == EL_EVENT_ERROR ? "error" : "console",
	    e == EL_EVENT_ERROR ? EV_ERROR : EV_INFO, c->msg);
}

struct job_state *
console_job(struct console *c)
{
	struct job_state *j, *pick = NULL;
	int		 n = backend_njobs(c->b);

	for (int i = n - 1; i >= 0 && c->job[0] != '\0'; i--) {
		if (strcmp((j = backend_job_at(c->b, i))->name, c->job) == 0)
			return j;
	}
	for (int i = n - 1; i >= 0; i--) {
		j = backend_job_at(c->b, i);
		if (pick == NULL || (!job_done(j) && job_done(pick)))
			pick = j;
	}
	if (pick != NULL)
		snprintf(c->job, sizeof c->job, "%s", pick->name);
	return pick;
}

/* The top line: cluster, nodes, jobs, the screens, the time. */
static void
console_header(struct console *c)
{
	char	 left[256], right[160], clock[16];
	int	 up = 0, running = 0, nn = backend_nnodes(c->b);
	int	 nj = backend_njobs(c->b);
	time_t	 now = time(NULL);
	WINDOW	*w;

	for (int i = 0; i < nn; i++)
		up += backend_node_at(c->b, i)->up;
	for (int i = 0; i < nj; i++)
		running += !job_done(backend_job_at(c->b, i));
	strftime(clock, sizeof clock, "%H:%M:%S", localtime(&now));
	snprintf(left, sizeof left, " hunter%scluster %s%s%d nodes, %d up%s"
	    "%d job%s running", glyphs->sep, c->cluster_name, glyphs->sep, nn,
	    up, glyphs->sep, running, running == 1 ? "" : "s");
	snprintf(right, sizeof right, "%s ", clock);
	w = console_panel(c, P_HEADER, 0, 0, 1, COLS, console_hash_str(
	    console_hash_str(console_mix(c->ui_gen, (uint64_t)c->scr), left),
	    right));
	if (w == NULL)
		return;
	draw_fill(w, 0, 0, COLS, EL_HEADER);
	draw_text(w, 0, 0, COLS - 10, EL_HEADER, left);
	if (COLS >= 110) {
		char	 tab[SCR_COUNT][32];
		int	 x = COLS - 10;

		for (int i = 0; i < SCR_COUNT; i++) {
			snprintf(tab[i], sizeof tab[i], " %d %s ", i + 1,
			    screen_table[i]->name);
			x -= draw_width(tab[i]);
		}
		for (int i = 0; i < SCR_COUNT; i++)
			x += draw_text(w, 0, x, COLS - 10 - x, i == (int)c->scr ?
			    EL_SELECTED : EL_HEADER, tab[i]);
	}
	draw_text_right(w, 0, COLS - 10, 10, EL_HEADER, right);
}

static void
console_status(struct console *c)
{
	struct status_hint	 hints[24];
	struct statusbar_model	 m = { .screen = screen_table[c->scr]->name,
	    .hints = hints };
	uint64_t		 key;
	WINDOW			*w;

	m.nhints = keys_hints(c, hints, 24);
	if (c->msg[0] != '\0' && clock_mono() < c->msg_until) {
		m.msg = c->msg;
		m.msg_elem = c->msg_elem;
	}
	key = console_hash_str(console_mix(c->ui_gen, (uint64_t)c->scr),
	    m.msg != NULL ? m.msg : "");
	if ((w = console_panel(c, P_STATUS, LINES - 1, 0, 1, COLS, key)) != NULL)
		widget_draw(W_STATUSBAR, w, (struct rect){ 0, 0, 1, COLS }, &m);
}

static void
console_too_small(void)
{
	char	 msg[96];

	snprintf(msg, sizeof msg, "terminal too small (%d%s%d, need %d%s%d)",
	    COLS, glyphs->times, LINES, CONSOLE_MIN_W, glyphs->times,
	    CONSOLE_MIN_H);
	werase(stdscr);
	draw_text(stdscr, LINES / 2, COLS > draw_width(msg) ? (COLS -
	    draw_width(msg)) / 2 : 0, COLS, EL_EVENT_WARN, msg);
	if (LINES / 2 + 1 < LINES)
		draw_text(stdscr, LINES / 2 + 1, 0, COLS, EL_TEXT_DIM,
		    " q detaches");
	wnoutrefresh(stdscr);
}

static void
console_frame(struct console *c, bool *small)
{
	if (COLS < CONSOLE_MIN_W || LINES < CONSOLE_MIN_H) {
		if (!*small)
			console_reset_panels(c);
		*small = true;
		console_too_small();
		doupdate();
		return;
	}
	if (*small) {
		*small = false;
		werase(stdscr);
		wnoutrefresh(stdscr);
		console_reset_panels(c);
	}
	if (backend_trylock(c->b) == 0) {
		if (backend_detached(c->b)) {
			c->quit = true;
			c->detached_by_peer = true;
		}
		console_header(c);
		screen_table[c->scr]->draw(c);
		backend_unlock(c->b);
	}
	console_status(c);
	for (int i = 0; i < CONSOLE_PANELS; i++) {
		if (c->panels[i].dirty || (c->force && c->panels[i].w != NULL))
			wnoutrefresh(c->panels[i].w);
		c->panels[i].dirty = false;
	}
	if (c->modal.kind != MODAL_NONE)
		modal_draw(c);
	doupdate();
	c->force = false;
}

static int
console_key(struct console *c, int ch)
{
	int	 r;

	if (c->modal.kind != MODAL_NONE)
		r = modal_key(c, ch);
	else
		r = keys_dispatch(c, ch);
	if (r != ACT_NONE)
		c->ui_gen++;
	return r;
}

static bool
console_init_curses(struct console *c)
{
	const char	*nc = getenv("NO_COLOR");

	/* Unicode lines for boxes in a UTF-8 locale: the terminal's ACS
	 * mode is often lost on the way (tmux or screen with TERM=xterm
	 * shows "lqqk"). */
	if (glyphs->utf8)
		setenv("NCURSES_NO_UTF8_ACS", "1", 0);
	if (newterm(NULL, stdout, stdin) == NULL)
		return false;
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	curs_set(0);
	set_escdelay(25);
	timeout(100);
	c->colour = (nc == NULL || *nc == '\0') && has_colors();
	if (c->colour) {
		start_color();
		use_default_colors();
	}
	theme_apply(&c->theme, c->colour);
	return true;
}

int
console_run(struct console *c)
{
	struct sigaction sa = { .sa_handler = console_on_signal };
	double		 next = 0;
	bool		 small = false, asked = false;
	int		 pending = ERR, ch, r;

	if (!console_init_curses(c)) {
		fprintf(stderr, "hunter: cannot drive the terminal (TERM=%s)\n",
		    getenv("TERM") ? getenv("TERM") : "");
		return -1;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	c->force = true;
	while (!c->quit && !console_signalled) {
		if (!console_preempting(c, &asked) && asked)
			break;
		/*
		 * A key waits for the backend's lock; the keys typed after it
		 * wait in the terminal's input until it is taken, so none is
		 * lost while the backend is busy (a search typed fast lost
		 * its middle letters here).
		 */
		if (pending == ERR) {
			ch = getch();
			if (ch == KEY_RESIZE) {
				console_reset_panels(c);
				next = 0;
			} else if (ch != ERR)
				pending = ch;
		} else
			napms(10);	/* try the key again soon */
		if (pending != ERR && backend_trylock(c->b) == 0) {
			r = console_key(c, pending);
			backend_unlock(c->b);
			pending = ERR;
			if (r & ACT_LAYOUT)
				console_reset_panels(c);
			if (r != ACT_NONE)
				next = 0;
		}
		if (!c->quit && clock_mono() >= next) {
			console_frame(c, &small);
			next = clock_mono() + FRAME_S;
		}
	}
	for (int i = 0; i < CONSOLE_PANELS; i++) {
		if (c->panels[i].w != NULL)
			delwin(c->panels[i].w);
	}
	endwin();
	return 0;
}
