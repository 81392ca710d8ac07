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
/* Whether dir may hold this user's sockets and files: a directory
 * owned by this user that neither its group nor others can write to.
 * 0, or -1 with err saying what is wrong and how to fix it (errno
 * EPERM for the owner or the mode, ENOENT when there is none). */
int	statedir_check(const char *dir, char *err, size_t errlen);
/* mkdir_p(dir, 0700), statedir_check, then make it 0700.  0, or -1 with
 * err. */
int	statedir_make(const char *dir, char *err, size_t errlen);

#endif
