/*
 * evloop.c: the event loop (evloop.h).  The fds and the timers are two
 * arrays of pointers, in the order they were added; a removed entry is
 * marked dead and swept out before the next poll, so a callback may
 * remove anything, itself included, while the turn goes on.  The poll
 * set is rebuilt from the fds before every poll, with the map from each
 * pollfd back to its entry.  Timers are few (a handful a process): the
 * earliest is found by a scan.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/xmalloc.h"
#include "lib/evloop.h"

struct evloop_fd {
	struct evloop	*loop;
	int		 fd;
	short		 events;
	evloop_want_cb	*want;
	void		*want_arg;
	evloop_fd_cb	*cb;
	void		*arg;
	bool		 dead;
};

struct evloop_timer {
	struct evloop	*loop;
	double		 due;		/* CLOCK_MONOTONIC, while armed */
	double		 period;	/* 0: one-shot */
	bool		 armed;
	bool		 ready;		/* due in this turn's timer pass */
	bool		 dead;
	evloop_timer_cb	*cb;
	void		*arg;
};

struct evloop {
	struct evloop_fd **fds;
	size_t		 nfds, capfds, deadfds;
	struct evloop_timer **timers;
	size_t		 ntimers, captimers, deadtimers;

	/* The poll set of this turn, and the entry of each pollfd. */
	struct pollfd	*pfd;
	struct evloop_fd **polled;
	size_t		 npolled, cappoll;
	double		 first_due;	/* the earliest timer's, or -1 */
	bool		 dispatching;

	int		 wake[2];
	void		(*on_wake)(void *);
	void		*wake_arg;
};

struct evloop *
evloop_new(void)
{
	struct evloop	*loop = xcalloc(1, sizeof *loop);

	loop->wake[0] = loop->wake[1] = -1;
	loop->first_due = -1;
	return loop;
}

void
evloop_free(struct evloop *loop)
{
	if (loop == NULL)
		return;
	for (size_t i = 0; i < loop->nfds; i++)
		free(loop->fds[i]);
	for (size_t i = 0; i < loop->ntimers; i++)
		free(loop->timers[i]);
	free(loop->fds);
	free(loop->timers);
	free(loop->pfd);
	free(loop->polled);
	if (loop->wake[0] >= 0) {
		close(loop->wake[0]);
		close(loop->wake[1]);
	}
	free(loop);
}

/* Room for one more pointer in *v (n used of *cap). */
static void *
evloop_grow(void *v, size_t n, size_t *cap)
{
	if (n < *cap)
		return v;
	*cap = *cap != 0 ? 2 * *cap : 16;
	return xreallocarray(v, *cap, sizeof (void *));
}

struct evloop_fd *
evloop_fd_add(struct evloop *loop, int fd, short events, evloop_fd_cb *cb,
    void *arg)
{
	struct evloop_fd *e = xcalloc(1, sizeof *e);

	*e = (struct evloop_fd){ .loop = loop, .fd = fd, .events = events,
	    .cb = cb, .arg = arg };
	loop->fds = evloop_grow(loop->fds, loop->nfds, &loop->capfds);
	loop->fds[loop->nfds++] = e;
	return e;
}

void
evloop_fd_events(struct evloop_fd *e, short events)
{
	e->events = events;
}

void
evloop_fd_want(struct evloop_fd *e, evloop_want_cb *want, void *arg)
{
	e->want = want;
	e->want_arg = arg;
}

void
evloop_fd_del(struct evloop_fd *e)
{
	if (e == NULL || e->dead)
		return;
	e->dead = true;
	e->loop->deadfds++;
}

size_t
evloop_nfds(const struct evloop *loop)
{
	return loop->nfds - loop->deadfds;
}

struct evloop_timer *
evloop_timer_add(struct evloop *loop, double after_s, double period_s,
    evloop_timer_cb *cb, void *arg)
{
	struct evloop_timer *t = xcalloc(1, sizeof *t);

	*t = (struct evloop_timer){ .loop = loop, .cb = cb, .arg = arg };
	evloop_timer_set(t, after_s, period_s);
	loop->timers = evloop_grow(loop->timers, loop->ntimers,
	    &loop->captimers);
	loop->timers[loop->ntimers++] = t;
	return t;
}

void
evloop_timer_set(struct evloop_timer *t, double after_s, double period_s)
{
	t->period = period_s > 0 ? period_s : 0;
	t->armed = after_s >= 0;
	t->due = t->armed ? clock_mono() + after_s : 0;
	t->ready = false;	/* set again: not in this pass any more */
}

void
evloop_timer_del(struct evloop_timer *t)
{
	if (t == NULL || t->dead)
		return;
	t->dead = true;
	t->armed = t->ready = false;
	t->loop->deadtimers++;
}

static void
evloop_drain_wake(int fd, short revents, void *arg)
{
	struct evloop	*loop = arg;
	char		 buf[256];

	(void)revents;
	while (read(fd, buf, sizeof buf) > 0)
		;
	if (loop->on_wake != NULL)
		loop->on_wake(loop->wake_arg);
}

int
evloop_wake_on(struct evloop *loop, void (*cb)(void *), void *arg)
{
	if (loop->wake[0] < 0) {
		if (pipe2(loop->wake, O_CLOEXEC | O_NONBLOCK) != 0) {
			loop->wake[0] = loop->wake[1] = -1;
			return -1;
		}
		evloop_fd_add(loop, loop->wake[0], POLLIN, evloop_drain_wake,
		    loop);
	}
	loop->on_wake = cb;
	loop->wake_arg = arg;
	return 0;
}

void
evloop_wake(struct evloop *loop)
{
	int	 saved = errno;

	if (loop->wake[1] >= 0 && write(loop->wake[1], "", 1) < 0) {
		/* The pipe is full: a wake-up is pending already. */
	}
	errno = saved;
}

int
evloop_wake_fd(const struct evloop *loop)
{
	return loop->wake[1];
}

/* Free what was removed; no pollfd points at it any more. */
static void
evloop_sweep(struct evloop *loop)
{
	size_t	 k = 0;

	if (loop->deadfds > 0) {
		for (size_t i = 0; i < loop->nfds; i++) {
			if (loop->fds[i]->dead)
				free(loop->fds[i]);
			else
				loop->fds[k++] = loop->fds[i];
		}
		loop->nfds = k;
		loop->deadfds = 0;
	}
	if (loop->deadtimers > 0) {
		k = 0;
		for (size_t i = 0; i < loop->ntimers; i++) {
			if (loop->timers[i]->dead)
				free(loop->timers[i]);
			else
				loop->timers[k++] = loop->timers[i];
		}
		loop->ntimers = k;
		loop->deadtimers = 0;
	}
}

void
evloop_prepare(struct evloop *loop)
{
	size_t	 n = 0;

	if (loop->dispatching) {
		/* A callback that turns the loop would free entries the turn
		 * it runs in still holds: a broken invariant. */
		fprintf(stderr, "evloop: a turn inside a callback\n");
		abort();
	}
	evloop_sweep(loop);
	if (loop->cappoll < loop->nfds) {
		loop->cappoll = loop->nfds;
		loop->pfd = xreallocarray(loop->pfd, loop->cappoll,
		    sizeof *loop->pfd);
		loop->polled = xreallocarray(loop->polled, loop->cappoll,
		    sizeof *loop->polled);
	}
	for (size_t i = 0; i < loop->nfds; i++) {
		struct evloop_fd *e = loop->fds[i];

		if (e->fd < 0)
			continue;
		loop->pfd[n] = (struct pollfd){ .fd = e->fd,
		    .events = e->want != NULL ? e->want(e->want_arg) :
		    e->events };
		loop->polled[n++] = e;
	}
	loop->npolled = n;
	loop->first_due = -1;
	for (size_t i = 0; i < loop->ntimers; i++) {
		const struct evloop_timer *t = loop->timers[i];

		if (t->armed && (loop->first_due < 0 ||
		    t->due < loop->first_due))
			loop->first_due = t->due;
	}
}

/* Milliseconds until the earliest armed timer of the poll set's making
 * (rounded up, so that it is due when poll returns), or -1 if none. */
static int
evloop_next_ms(const struct evloop *loop)
{
	double	 now, ms;

	if (loop->first_due < 0)
		return -1;
	if ((now = clock_mono()) >= loop->first_due)
		return 0;
	if ((ms = (loop->first_due - now) * 1000) >= INT_MAX - 1)
		return INT_MAX;
	return (int)ms < ms ? (int)ms + 1 : (int)ms;
}

/* Touches nothing but the poll set and first_due, which evloop_prepare
 * made: another thread may change fds and timers meanwhile. */
int
evloop_wait(struct evloop *loop, int timeout_ms)
{
	int	 next = evloop_next_ms(loop), rc;

	if (next >= 0 && (timeout_ms < 0 || next < timeout_ms))
		timeout_ms = next;
	rc = poll(loop->pfd, (nfds_t)loop->npolled, timeout_ms);
	if (rc < 0) {
		for (size_t i = 0; i < loop->npolled; i++)
			loop->pfd[i].revents = 0;
		return errno == EINTR ? 0 : -1;
	}
	return rc;
}

/* The armed timers due now, earliest first (in the order they were added
 * when due together); one re-armed or removed by a callback on the way
 * drops out of this pass. */
static int
evloop_run_timers(struct evloop *loop)
{
	double	 now = clock_mono();
	int	 ran = 0;

	for (size_t i = 0; i < loop->ntimers; i++) {
		struct evloop_timer *t = loop->timers[i];

		t->ready = t->armed && t->due <= now;
	}
	for (;;) {
		struct evloop_timer *t = NULL;

		for (size_t i = 0; i < loop->ntimers; i++) {
			struct evloop_timer *c = loop->timers[i];

			if (c->ready && (t == NULL || c->due < t->due))
				t = c;
		}
		if (t == NULL)
			return ran;
		t->ready = false;
		if (t->period > 0) {
			t->due += t->period;
			if (t->due <= now)
				t->due = now + t->period;
		} else
			t->armed = false;
		t->cb(t->arg);
		ran++;
	}
}

int
evloop_dispatch(struct evloop *loop)
{
	int	 ran = 0;

	loop->dispatching = true;
	for (size_t i = 0; i < loop->npolled; i++) {
		struct evloop_fd *e = loop->polled[i];
		short		 rev = loop->pfd[i].revents;

		if (rev == 0 || e->dead)
			continue;
		e->cb(e->fd, rev, e->arg);
		ran++;
	}
	loop->npolled = 0;		/* delivered: not again */
	ran += evloop_run_timers(loop);
	loop->dispatching = false;
	return ran;
}

int
evloop_run_once(struct evloop *loop, int timeout_ms)
{
	evloop_prepare(loop);
	if (evloop_wait(loop, timeout_ms) < 0)
		return -1;
	return evloop_dispatch(loop);
}
