/*
 * pool.c: the shared pools of threads behind pool.h.
 *
 * A run lives on its caller's stack.  The caller publishes it (cur) and
 * bumps the generation; a worker that sees a new generation announces
 * itself (users), reads cur and takes parts from it by an atomic
 * counter until none is left.  The caller takes parts too, waits until
 * every part is done, withdraws the run and waits for the workers still
 * inside it to leave: a worker that has not announced itself by then
 * finds cur empty (the stores and loads of cur and users are sequentially
 * consistent, so the two sides cannot miss each other) and the run can
 * leave the stack.  A worker late to a run costs nothing but its own
 * lateness: the caller never waits for a worker that took no part.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/pool.h"
#include "lib/xmalloc.h"

/* How long an idle worker (and a caller waiting for the last part)
 * spins before it sleeps: the kernels of a training step follow each
 * other within microseconds, and a wake-up through the kernel costs
 * tens of them. */
#define POOL_SPIN_S	100e-6

struct pool_work {
	pool_fn		*fn;
	void		*arg;
	int		 parts;
	atomic_int	 next;		/* the next part to take */
	atomic_int	 done;		/* parts finished */
};

struct pool {
	int		 threads;
	int		 refs;		/* under pools_lock */
	struct pool	*next;		/* the list of shared pools */
	pthread_t	*tid;
	pthread_mutex_t	 run_lock;	/* held by the run in progress */
	pthread_mutex_t	 lock;		/* sleeping, waking, the last part */
	pthread_cond_t	 wake;		/* a new run, or stop */
	pthread_cond_t	 finished;	/* the last part of a run is done */
	int		 sleepers;
	int		 waiting;	/* the caller sleeps on finished */
	_Atomic(struct pool_work *) cur;
	atomic_uint	 gen;
	atomic_int	 users;		/* workers inside cur */
	atomic_int	 stop;
};

struct pool_worker {
	struct pool	*p;
	int		 index;
};

static pthread_mutex_t	 pools_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pool	*pools;

static inline void
pool_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* Take and run parts of w until none is left. */
static void
pool_take(struct pool *p, struct pool_work *w, int thread)
{
	int	 i;

	while ((i = atomic_fetch_add(&w->next, 1)) < w->parts) {
		w->fn(w->arg, i, thread);
		if (atomic_fetch_add(&w->done, 1) == w->parts - 1) {
			pthread_mutex_lock(&p->lock);
			if (p->waiting)
				pthread_cond_signal(&p->finished);
			pthread_mutex_unlock(&p->lock);
		}
	}
}

/* Wait for a generation after seen (or stop): spin, then sleep. */
static unsigned
pool_idle(struct pool *p, unsigned seen)
{
	double	 until = clock_mono() + POOL_SPIN_S;
	unsigned g;

	for (int i = 0;; i++) {
		if ((g = atomic_load(&p->gen)) != seen ||
		    atomic_load(&p->stop))
			return g;
		if ((i & 63) == 63 && clock_mono() > until)
			break;
		pool_relax();
	}
	pthread_mutex_lock(&p->lock);
	p->sleepers++;
	while ((g = atomic_load(&p->gen)) == seen && !atomic_load(&p->stop))
		pthread_cond_wait(&p->wake, &p->lock);
	p->sleepers--;
	pthread_mutex_unlock(&p->lock);
	return g;
}

static void *
pool_worker(void *arg)
{
	struct pool_worker	 self = *(struct pool_worker *)arg;
	struct pool		*p = self.p;
	/* The generation the pool started at, not the one it is at when
	 * this thread first runs: a run may already be waiting. */
	unsigned		 seen = 0;

	free(arg);
	for (;;) {
		struct pool_work *w;

		seen = pool_idle(p, seen);
		if (atomic_load(&p->stop))
			break;
		atomic_fetch_add(&p->users, 1);
		if ((w = atomic_load(&p->cur)) != NULL)
			pool_take(p, w, self.index);
		atomic_fetch_sub(&p->users, 1);
	}
	return NULL;
}

static struct pool *
pool_start(int threads)
{
	struct pool	*p = xcalloc(1, sizeof *p);

	p->threads = threads;
	pthread_mutex_init(&p->run_lock, NULL);
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->wake, NULL);
	pthread_cond_init(&p->finished, NULL);
	atomic_init(&p->cur, NULL);
	atomic_init(&p->gen, 0);
	atomic_init(&p->users, 0);
	atomic_init(&p->stop, 0);
	p->tid = xcalloc((size_t)threads, sizeof *p->tid);
	for (int i = 1; i < threads; i++) {
		struct pool_worker *w = xmalloc(sizeof *w);
		int	 e;

		w->p = p;
		w->index = i;
		e = pthread_create(&p->tid[i], NULL, pool_worker, w);
		if (e != 0) {
			/* A broken invariant: the process cannot start the
			 * threads it was told it has. */
			fprintf(stderr, "pool: pthread_create: %s\n",
			    strerror(e));
			abort();
		}
	}
	return p;
}

static void
pool_stop(struct pool *p)
{
	pthread_mutex_lock(&p->lock);
	atomic_store(&p->stop, 1);
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->lock);
	for (int i = 1; i < p->threads; i++)
		pthread_join(p->tid[i], NULL);
	pthread_cond_destroy(&p->wake);
	pthread_cond_destroy(&p->finished);
	pthread_mutex_destroy(&p->lock);
	pthread_mutex_destroy(&p->run_lock);
	free(p->tid);
	free(p);
}

struct pool *
pool_get(int threads)
{
	struct pool	*p;

	if (threads < 1)
		threads = 1;
	pthread_mutex_lock(&pools_lock);
	for (p = pools; p != NULL; p = p->next)
		if (p->threads == threads)
			break;
	if (p == NULL) {
		p = pool_start(threads);
		p->next = pools;
		pools = p;
	}
	p->refs++;
	pthread_mutex_unlock(&pools_lock);
	return p;
}

void
pool_put(struct pool *p)
{
	struct pool	**pp;

	if (p == NULL)
		return;
	pthread_mutex_lock(&pools_lock);
	if (--p->refs > 0) {
		pthread_mutex_unlock(&pools_lock);
		return;
	}
	for (pp = &pools; *pp != p; pp = &(*pp)->next)
		;
	*pp = p->next;
	pthread_mutex_unlock(&pools_lock);
	pool_stop(p);
}

int
pool_threads(const struct pool *p)
{
	return p != NULL ? p->threads : 1;
}

void
pool_run(struct pool *p, int parts, pool_fn *fn, void *arg)
{
	struct pool_work w = { .fn = fn, .arg = arg, .parts = parts };
	double		 until;

	if (parts <= 0)
		return;
	if (p == NULL || p->threads < 2 || parts == 1 ||
	    pthread_mutex_trylock(&p->run_lock) != 0) {
		for (int i = 0; i < parts; i++)
			fn(arg, i, 0);
		return;
	}
	atomic_init(&w.next, 0);
	atomic_init(&w.done, 0);
	pthread_mutex_lock(&p->lock);
	atomic_store(&p->cur, &w);
	atomic_fetch_add(&p->gen, 1);
	if (p->sleepers > 0)
		pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->lock);

	pool_take(p, &w, 0);
	until = clock_mono() + POOL_SPIN_S;
	for (int i = 0; atomic_load(&w.done) < parts; i++) {
		if ((i & 63) == 63 && clock_mono() > until) {
			pthread_mutex_lock(&p->lock);
			p->waiting = 1;
			while (atomic_load(&w.done) < parts)
				pthread_cond_wait(&p->finished, &p->lock);
			p->waiting = 0;
			pthread_mutex_unlock(&p->lock);
			break;
		}
		pool_relax();
	}
	/* Withdraw the run; a worker inside it is leaving (no part is
	 * left), one not yet in will find nothing. */
	atomic_store(&p->cur, NULL);
	while (atomic_load(&p->users) > 0)
		sched_yield();
	pthread_mutex_unlock(&p->run_lock);
}
