/*
 * console.h: what the console's files share.  The console is one loop
 * on the main thread (console.c) over a backend whose own thread does
 * all I/O; the loop reads the backend's state only under trylock, and
 * keeps the last frame when the lock is busy.  Screens (screen-*.c, one
 * const struct screen each, listed in screen_table[]) draw into panels,
 * windows the loop redraws only when the data they show has changed.
 * Keys go through the binding table in keys.c.
 */
#ifndef HUNTER_CONSOLE_H
#define HUNTER_CONSOLE_H

#include <stdbool.h>
#include <stdint.h>

#include <curses.h>

#include "lib/cmd-entry.h"
#include "backend/core/backend.h"
#include "tui/feed.h"
#include "tui/theme.h"
#include "tui/widget.h"

#define CONSOLE_MIN_W	80
#define CONSOLE_MIN_H	24
#define CONSOLE_PANELS	16
#define CONSOLE_FILTER	64

enum screen_id { SCR_OVERVIEW, SCR_NODES, SCR_JOB, SCR_LOGS, SCR_HELP,
	SCR_COUNT };

/* What an action asks of the loop. */
#define ACT_NONE	0
#define ACT_REDRAW	1	/* state the panels show changed */
#define ACT_LAYOUT	2	/* new windows: another screen, theme, size */
#define ACT_QUIT	4

struct console;

struct screen {
	const char	*name;
	const char	*about;		/* one line for the help screen */
	const char	*filter_what;	/* prompt for '/', NULL = none */
	/* All but help run with the backend lock held. */
	void		(*draw)(struct console *);
	int		(*nav)(struct console *, int dy, int dx);
	int		(*enter)(struct console *);
	int		(*sort)(struct console *);
	/* Esc: back out of a view within the screen; ACT_NONE when there
	 * is none (Esc then clears the filter). */
	int		(*back)(struct console *);
};

extern const struct screen screen_overview, screen_nodes, screen_job,
	screen_logs, screen_help;
extern const struct screen *const screen_table[SCR_COUNT];

struct panel {
	WINDOW		*w;
	int		 y, x, h, wd;
	uint64_t	 key;
	bool		 dirty;		/* drawn this frame */
};

enum modal_kind { MODAL_NONE, MODAL_PROMPT, MODAL_CONFIRM, MODAL_PICK };

#define MODAL_ITEMS	64
#define MODAL_ERRORS	6

struct modal {
	enum modal_kind	 kind;
	char		 title[128];
	char		 input[1024];
	int		 len;
	char		 items[MODAL_ITEMS][96];
	int		 map[MODAL_ITEMS];	/* item -> rank or node */
	int		 nitems, sel;
	char		 errors[MODAL_ERRORS][256];
	int		 nerrors;
	int		 arg;		/* e.g. the rank a migration moves */
	/* ok: Enter or y; else Esc or n.  Returns ACT_ flags. */
	int		(*done)(struct console *, bool ok);
};

struct console {
	struct backend	*b;
	const char	*cluster_name;
	bool		 simulated;
	struct feed	 feed;		/* the observer's; under the lock */

	enum screen_id	 scr;
	char		 job[SPEC_NAME_MAX];	/* the selected job */
	int		 node;		/* the selected node */
	int		 rank;		/* the selected rank (job screen) */
	int		 log_rank;	/* the logs screen's rank, -1 = all */
	bool		 focus_nodes;	/* overview: Enter opens the node */
	bool		 node_detail;	/* nodes: the selected node's detail */
	int		 detail_sel;	/* its process list's selected row */
	int		 detail_top;	/* its first row shown (PgUp, PgDn) */
	bool		 detail_follow;	/* scroll to the selected process */
	int		 heat;		/* overview: the heat map's metric */
	int		 scroll[SCR_COUNT];
	int		 sel[SCR_COUNT];	/* table rows */
	int		 sort_col[SCR_COUNT];
	bool		 sort_desc[SCR_COUNT];
	char		 filter[SCR_COUNT][CONSOLE_FILTER];

	struct modal	 modal;
	char		 msg[512];
	enum elem	 msg_elem;
	double		 msg_until;

	struct theme	 theme;
	bool		 colour;
	char		 themes[THEME_MAX][THEME_NAME_MAX];
	int		 nthemes;

	struct panel	 panels[CONSOLE_PANELS];
	bool		 force;		/* redraw every panel */
	uint64_t	 ui_gen;	/* bumped by every handled key */
	bool		 quit;
	bool		 detached_by_peer;	/* another console took over */
};

/* console.c */
int		 console_run(struct console *);
/* A panel at this place for the current screen: its window when its
 * key (a hash of what it shows) changed or a redraw is forced, else
 * NULL and the old contents stay on the screen. */
WINDOW		*console_panel(struct console *, int id, int y, int x, int h,
		    int w, uint64_t key);
/* A message on the status bar (and in the event pane). */
void		 console_say(struct console *, enum elem, const char *fmt, ...)
		    __attribute__((format(printf, 3, 4)));
/* The selected job (NULL if none) and its feed; lock held. */
struct job_state *console_job(struct console *);
uint64_t	 console_mix(uint64_t h, uint64_t v);
/* The rows below the header and above the status bar. */
int		 console_top(void);
int		 console_height(void);

/* jobinfo.c: one job's figures as the screens show them, merged from
 * the state model, the feed and the epoch frames. */
struct job_info {
	const char	*state;		/* running, paused, finished ... */
	enum elem	 state_e;
	bool		 has_step, has_loss, has_acc, has_samples;
	bool		 has_tune, has_bytes, has_ratio, has_density;
	bool		 tokens;	/* a token model: val loss, no acc */
	bool		 has_val, has_mfu;
	double		 val_loss, tokens_per_s, mfu;
	long		 step;
	int		 epoch, epochs;	/* epochs done, of the spec's */
	double		 loss, acc, samples_per_s;
	int		 micro, accum;
	double		 bytes_step, ratio, density;
	int		 running;	/* ranks */
};

void		 job_info(struct console *, const struct job_state *,
		    struct job_info *);
/* A rank's step: the feed's (kept through a pause), else the model's. */
long		 job_rank_step(struct console *, const struct job_state *, int r);
/* The median step time of the job's running ranks (0 when unknown). */
double		 job_median_step_ms(struct console *, const struct job_state *);

/* screen-nodes.c: a row of a node's or a GPU's history as a sparkline
 * (ref must outlive the model). */
struct hist_ref {
	const struct node_hist	*nh;
	const struct gpu_hist	*gh;
	int			 k;
};
struct spark_model hist_spark(const struct hist_ref *, enum elem, bool pool);

/* node-detail.c: the nodes screen's detail view of c->node (Enter on a
 * node): per-CPU strip, everything its agent samples with a sparkline
 * beside every rate, its GPUs, its processes with the job and rank each
 * belongs to. */
void		 node_detail_draw(struct console *);
int		 node_detail_nav(struct console *, int dy, int dx);
int		 node_detail_enter(struct console *);

/* heat.c: the metrics the overview's heat map can colour by ('v'). */
int		 heat_count(void);
const char	*heat_name(int);
/* The cell of node nv by metric k; max is the metric's largest over the
 * nodes (heat_max), for the rates, which have no ceiling. */
void		 heat_cell_of(int k, const struct node_view *, double max,
		    struct heat_cell *, char *value, size_t len);
double		 heat_max(int k, struct console *);
int		 action_heat(struct console *, int key);

/* keys.c */
int		 keys_dispatch(struct console *, int key);
int		 keys_hints(const struct console *, struct status_hint *, int max);
/* The lines of the help screen; returns how many. */
int		 keys_help(const struct console *, char lines[][160], int max);

/* actions.c: the commands an operator gives. */
int		 action_pause(struct console *, int key);
int		 action_checkpoint(struct console *, int key);
int		 action_migrate(struct console *, int key);
int		 action_stop(struct console *, int key);
int		 action_new_job(struct console *, int key);
int		 action_theme(struct console *, int key);
int		 action_quit(struct console *, int key);
/* Load the theme called name (a path when it holds a '/') and, when
 * apply, set up its colours; -1 with the errors said if it is bad. */
int		 console_set_theme(struct console *, const char *name, bool apply);

/* modal.c */
void		 modal_prompt(struct console *, const char *title,
		    const char *init, int (*done)(struct console *, bool));
void		 modal_confirm(struct console *, const char *title,
		    const char *question,
		    int (*done)(struct console *, bool));
void		 modal_pick(struct console *, const char *title,
		    int (*done)(struct console *, bool));
void		 modal_add_item(struct console *, const char *fmt, ...)
		    __attribute__((format(printf, 2, 3)));
int		 modal_key(struct console *, int key);
void		 modal_draw(struct console *);
void		 modal_close(struct console *);

/* console-open.c: `hunter [options] [JOB.yaml...]`. */
extern const struct cmd_entry console_entry;

#endif
