/*
 * theme.h: colours by element name.  Screens and widgets draw with an
 * element (EL_NODE_HOT, EL_BAR_LOW ...), never with a colour pair; a
 * theme file in themes/NAME.yaml maps each element to colours and
 * attributes.
 */
#ifndef HUNTER_THEME_H
#define HUNTER_THEME_H

#include <stdbool.h>

#include <curses.h>

#include "backend/spec/spec.h"

enum elem {
	EL_TEXT, EL_TEXT_DIM, EL_HEADER, EL_BORDER, EL_TITLE, EL_SELECTED,
	EL_BAR_LOW, EL_BAR_MID, EL_BAR_HIGH,
	EL_NODE_IDLE, EL_NODE_BUSY, EL_NODE_HOT, EL_NODE_DOWN, EL_NODE_SPARE,
	EL_CHART_LINE, EL_CHART_EPOCH, EL_CHART_AXIS, EL_SPARK_RX, EL_SPARK_TX,
	EL_EVENT_INFO, EL_EVENT_WARN, EL_EVENT_ERROR,
	EL_STATUS, EL_STATUS_KEY, EL_MESSAGE, EL_STRAGGLER, EL_PAUSED,
	EL_PROMPT, EL_MATCH,
	EL_COUNT
};

#define THEME_NAME_MAX	64
#define THEME_MAX	32	/* theme files listed for `t` */

/* A colour is -1 (the terminal's default) or 0..255; THEME_UNSET = not
 * given. */
#define THEME_UNSET	(-2)
struct theme_elem {
	short	 fg, bg, fg8, bg8;
	attr_t	 attr;
	bool	 set;
};

struct theme {
	char		 name[THEME_NAME_MAX];
	char		 file[SPEC_PATH_MAX];
	struct theme_elem e[EL_COUNT];
};

/* "node_hot" for EL_NODE_HOT. */
const char	*theme_elem_name(enum elem);

/* The built-in theme, used when no theme file can be read. */
void		 theme_builtin(struct theme *);
/* Parse a theme file's text; name is used in errors. */
int		 theme_parse(const char *file, const char *buf, size_t len,
		    struct theme *, struct spec_errors *);
/* Find NAME.yaml in the theme directories (or read NAME itself when it
 * holds a '/'), then parse it.  0, or -1 with errs filled. */
int		 theme_load(const char *name, struct theme *, struct spec_errors *);
/* The theme names found, sorted; returns how many. */
int		 theme_list(char names[][THEME_NAME_MAX], int max);
/* The directory themes are read from ("" when none exists). */
const char	*theme_dir(void);

/* Set up colour pairs after initscr: colour false (NO_COLOR or a
 * terminal without colours) keeps only the attributes. */
void		 theme_apply(const struct theme *, bool colour);
attr_t		 theme_attr(enum elem);

#endif
