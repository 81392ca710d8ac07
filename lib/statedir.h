/*
 * statedir.h: the one directory where hunter keeps its state (journal,
 * checkpoints, sockets): $HUNTER_STATE_DIR, else $XDG_STATE_HOME/hunter,
 * else ~/.local/state/hunter.  Created 0700.
 */
#ifndef HUNTER_STATEDIR_H
#define HUNTER_STATEDIR_H

#include <stddef.h>

/* Resolve the state directory into buf.  Returns 0, or -1 if no home. */
int	statedir_path(char *buf, size_t len);
/* Create dir and its parents; the last component gets mode.  0 or -1
 * (errno set). */
int	mkdir_p(const char *dir, unsigned mode);

#endif
