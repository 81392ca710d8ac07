/*
 * lock.h: one backend per state directory.  The lock is an flock on
 * STATE/backend.lock, which also holds the owner's pid, so a second
 * backend can name the first; the kernel drops it when the owner dies,
 * however it dies.
 */
#ifndef HUNTER_LOCK_H
#define HUNTER_LOCK_H

#include <sys/types.h>

/* Take the lock.  Returns the fd (kept open while we own it), or -1 with
 * *holder set to the owner's pid (0 if unknown) or errno on error. */
int	lock_take(const char *state_dir, pid_t *holder);
/* Wait up to timeout_ms for the lock. */
int	lock_wait(const char *state_dir, int timeout_ms, pid_t *holder);

#endif
