/*
 * evloop.h: the one event loop of every hunter process (the backend, the
 * agent, the worker's reader thread, the relays): poll(2) over a set of
 * fds that grows as it needs to, a callback for each; timers on the
 * monotonic clock, one-shot or periodic; and a wake-up other threads (or
 * a signal handler) may ring.
 *
 * Callbacks may add and remove fds and timers, their own included: a
 * removed one is never called again, and its memory goes at the next
 * evloop_prepare.  An fd's events are fixed, or asked of a function before
 * each poll (a link with a queue wants POLLOUT only while bytes wait).
 *
 * evloop_run_once is one turn: poll, then the callbacks of the fds that
 * are ready, in the order they were added, then those of the timers that
 * are due, earliest first.  A caller that holds a lock while it handles
 * events but not while it sleeps (the backend) calls the three parts
 * itself: evloop_prepare and evloop_dispatch under its lock, evloop_wait
 * without.  Only evloop_wait and evloop_wake may run beside another
 * thread's use of the loop.
 */
#ifndef HUNTER_EVLOOP_H
#define HUNTER_EVLOOP_H

#include <poll.h>

struct evloop;
struct evloop_fd;
struct evloop_timer;

/* fd is ready: revents as poll(2) gave them (POLLHUP, POLLERR and
 * POLLNVAL come whatever was asked for). */
typedef void	evloop_fd_cb(int fd, short revents, void *arg);
/* The events to poll for now, asked before each poll. */
typedef short	evloop_want_cb(void *arg);
typedef void	evloop_timer_cb(void *arg);

struct evloop	*evloop_new(void);
/* Frees the loop and every fd and timer still in it (it closes no fd but
 * its own wake-up pipe). */
void		 evloop_free(struct evloop *);

/* Watch fd for events (POLLIN, POLLOUT) until evloop_fd_del.  The same
 * fd may be added more than once. */
struct evloop_fd *evloop_fd_add(struct evloop *, int fd, short events,
		    evloop_fd_cb *, void *arg);
void		 evloop_fd_events(struct evloop_fd *, short events);
/* Ask want(arg) for the events before each poll, instead of fixed ones
 * (want NULL: back to the fixed ones). */
void		 evloop_fd_want(struct evloop_fd *, evloop_want_cb *want,
		    void *arg);
/* Stop watching (NULL is nothing); call it before the fd is closed. */
void		 evloop_fd_del(struct evloop_fd *);
/* Live fds in the loop. */
size_t		 evloop_nfds(const struct evloop *);

/*
 * A timer due in after_s seconds, then every period_s (0: once; a
 * negative after_s leaves it unarmed).  A periodic timer keeps its pace;
 * one that fell more than a period behind fires once and counts its next
 * period from then.  It stays until evloop_timer_del, and
 * evloop_timer_set arms it again (or disarms it, after_s < 0).
 */
struct evloop_timer *evloop_timer_add(struct evloop *, double after_s,
		    double period_s, evloop_timer_cb *, void *arg);
void		 evloop_timer_set(struct evloop_timer *, double after_s,
		    double period_s);
void		 evloop_timer_del(struct evloop_timer *);

/* Make the loop wakeable: a pipe it watches, and cb(arg) (may be NULL)
 * called in a turn that was woken.  0, or -1 with errno. */
int		 evloop_wake_on(struct evloop *, void (*cb)(void *), void *arg);
/* Wake the loop from any thread or a signal handler; errno is kept. */
void		 evloop_wake(struct evloop *);
/* The pipe's write end, for code that rings with write(2); -1 if none. */
int		 evloop_wake_fd(const struct evloop *);

/* One turn; timeout_ms -1 waits for an event or the next timer.  The
 * number of callbacks that ran, or -1 with errno when poll failed (EINTR
 * is not a failure: the timers still run). */
int		 evloop_run_once(struct evloop *, int timeout_ms);
/* The turn in parts: the poll set (want callbacks run here), the poll
 * (bounded by the next timer; 0, the number of fds ready, or -1 with
 * errno), and the callbacks (their number). */
void		 evloop_prepare(struct evloop *);
int		 evloop_wait(struct evloop *, int timeout_ms);
int		 evloop_dispatch(struct evloop *);

#endif
