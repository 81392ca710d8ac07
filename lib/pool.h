/*
 * pool.h: a small pool of threads that runs the parts of one piece of
 * work at a time: the caller and threads - 1 workers take parts until
 * none is left, and pool_run returns when every part is done.  Which
 * thread runs which part is left to chance; what a part computes must
 * not depend on it, so a piece of work gives the same result on any
 * number of threads, or on none (a NULL pool runs the parts in order on
 * the calling thread).  The kernels of kernels/cpu cut their work into
 * parts this way, by their shapes alone.
 *
 * Pools are shared: pool_get(n) hands out the process's pool of n
 * threads, started by its first user and stopped when the last one puts
 * it back.  A run asked for while another holds the pool (another
 * thread's, or a part that asks for one) runs its parts in order on its
 * own thread instead of waiting, so nothing ever runs more threads than
 * its pool has, and nothing deadlocks.
 *
 * Idle workers spin for a fraction of a millisecond after each run (the
 * next one usually follows at once), then sleep on a condition variable.
 */
#ifndef HUNTER_POOL_H
#define HUNTER_POOL_H

struct pool;

/* Part `part` of a run; `thread` is 0 for the caller, 1 .. threads - 1
 * for the workers: an index into scratch kept a thread. */
typedef void	pool_fn(void *arg, int part, int thread);

/* The shared pool of `threads` threads (1 or less: one, the caller's,
 * and no workers), its count of users raised. */
struct pool	*pool_get(int threads);
/* Give back a pool from pool_get; NULL is ignored. */
void		 pool_put(struct pool *);
/* Its threads, the caller included; 1 for NULL. */
int		 pool_threads(const struct pool *);
/* Run fn(arg, i, thread) for every i in [0, parts) and return when all
 * are done. */
void		 pool_run(struct pool *, int parts, pool_fn *fn, void *arg);

#endif
