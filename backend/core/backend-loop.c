/*
 * backend-loop.c: the backend's event loop (lib/evloop.h).  It watches
 * the wake-up of other threads (a posted command, a scrape that wants a
 * rendering), console.sock and its clients (backend-console.c) and one
 * fd per linked node (its frames are backend-poll.c's); the ticks are
 * timers: reconnect and the detectors once a second, the journal's
 * batched fsync and the store's deadlines four times a second (the pace
 * of the idle loop before they were timers), console.sock's idle
 * clients and the exporters' bookkeeping once a second.
 *
 * A turn takes the state lock for what it handles, never while it
 * sleeps: the poll set is made under the lock, the poll runs without it,
 * and the callbacks run under it again.
 */
#include <stdlib.h>

#include "lib/clock.h"
#include "lib/evloop.h"
#include "lib/xmalloc.h"
#include "backend/proto/proto.h"
#include "backend/core/backend-internal.h"

/* A node's link in the loop: the fd it was added with, which the node
 * may have closed (and a new link reopened) since. */
struct backend_link {
	struct backend	*b;
	struct fleet_node *fn;
	struct evloop_fd *ev;
	int		 fd;
};

static void
loop_on_wake(void *arg)
{
	backend_export_tick(arg);	/* a scrape may wait for a rendering */
}

static void
loop_on_reconnect(void *arg)
{
	struct backend	*b = arg;

	/* Never waits: a node that does not answer is connected to on a
	 * thread of its own (fleet.c). */
	fleet_connect_async(&b->fleet, backend_report_node, b);
}

static void
loop_on_detect(void *arg)
{
	detect_tick(arg, clock_mono());
}

static void
loop_on_journal(void *arg)
{
	backend_journal_tick(arg, clock_mono());
}

static void
loop_on_store(void *arg)
{
	struct backend	*b = arg;

	store_tick(b->store, clock_mono());
}

static void
loop_on_reap(void *arg)
{
	backend_console_reap(arg, clock_mono());
}

static void
loop_on_export(void *arg)
{
	backend_export_tick(arg);
}

int
backend_loop_open(struct backend *b)
{
	b->loop = evloop_new();
	if (evloop_wake_on(b->loop, loop_on_wake, b) != 0)
		return -1;
	evloop_timer_add(b->loop, 0, 1.0, loop_on_reconnect, b);
	b->detect_timer = evloop_timer_add(b->loop, 0, 1.0, loop_on_detect, b);
	evloop_timer_add(b->loop, 0.25, 0.25, loop_on_journal, b);
	evloop_timer_add(b->loop, 0.25, 0.25, loop_on_store, b);
	evloop_timer_add(b->loop, 1.0, 1.0, loop_on_reap, b);
	evloop_timer_add(b->loop, 1.0, 1.0, loop_on_export, b);
	return 0;
}

void
backend_loop_free(struct backend *b)
{
	evloop_free(b->loop);
	b->loop = NULL;
	free(b->links);
	b->links = NULL;
}

static void
loop_on_console(int fd, short revents, void *arg)
{
	(void)fd;
	(void)revents;
	backend_console_accept(arg);
}

static void
loop_on_node(int fd, short revents, void *arg)
{
	struct backend_link *l = arg;

	if ((revents & POLLOUT) && l->fn->fd == fd)
		backend_node_output(l->b, l->fn);
	if ((revents & ~POLLOUT) && l->fn->fd == fd)
		backend_node_input(l->b, l->fn);
}

/*
 * The poll set follows the links: every node of the cluster whose fd is
 * open, not a fixed number of them (nodes past the first 1024 were once
 * never read, silently dead).  A link the fleet closed or reopened since
 * the last turn is dropped or added here.
 */
static void
backend_loop_sync(struct backend *b)
{
	if (b->console_ev == NULL && b->console_fd >= 0)
		b->console_ev = evloop_fd_add(b->loop, b->console_fd, POLLIN,
		    loop_on_console, b);
	if (b->links == NULL && b->fleet.n > 0 && b->fleet.nodes != NULL) {
		b->links = xcalloc((size_t)b->fleet.n, sizeof *b->links);
		for (int i = 0; i < b->fleet.n; i++)
			b->links[i] = (struct backend_link){ .b = b,
			    .fn = &b->fleet.nodes[i], .fd = -1 };
	}
	for (int i = 0; b->links != NULL && i < b->fleet.n; i++) {
		struct backend_link *l = &b->links[i];

		if (l->fd == l->fn->fd)
			continue;
		evloop_fd_del(l->ev);
		l->ev = NULL;
		if ((l->fd = l->fn->fd) < 0)
			continue;
		l->ev = evloop_fd_add(b->loop, l->fd, POLLIN, loop_on_node, l);
		evloop_fd_want(l->ev, proto_queue_want, &l->fn->q);
	}
}

int
backend_loop_once(struct backend *b, int timeout_ms)
{
	int	 rc;

	pthread_mutex_lock(&b->mu);
	b->in_loop = true;
	backend_run_commands(b);
	backend_loop_sync(b);
	evloop_prepare(b->loop);
	b->in_loop = false;
	pthread_mutex_unlock(&b->mu);

	if (evloop_wait(b->loop, timeout_ms) < 0)
		return 0;

	pthread_mutex_lock(&b->mu);
	b->in_loop = true;
	backend_run_commands(b);
	backend_after_stall(b, clock_mono(), timeout_ms);
	evloop_dispatch(b->loop);
	rc = b->detach ? -1 : 0;
	b->in_loop = false;
	pthread_mutex_unlock(&b->mu);
	return rc;
}

int
backend_poll(struct backend *b, int timeout_ms)
{
	if (b->threaded)
		return -1;
	return backend_loop_once(b, timeout_ms);
}
