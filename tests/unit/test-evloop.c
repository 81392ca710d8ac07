/*
 * test-evloop.c: the event loop (lib/evloop.c) on real pipes and
 * socketpairs.  Checked: timers fire earliest first (also when several
 * are due in one turn) and never before they are due, a periodic one keeps firing at its pace and a one-shot fires
 * once; the poll waits no longer than the next timer; fds and timers
 * added and removed inside callbacks (themselves, others that are ready
 * in the same turn, an fd number closed and reused at once) are called
 * when they should be and never after they are removed; the events of an
 * fd asked of its function; the set grows past 1024 fds; another thread
 * wakes a loop that waits without a timeout.  A loop that waits forever
 * is ended by the alarm, and that fails the test.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/evloop.h"

#define WATCHDOG_S	20	/* SIGALRM ends (and fails) a test that hangs */

/* What the callbacks saw, in order. */
struct log {
	char	 order[64];
	size_t	 n;
	double	 at[64];
};

struct mark {
	struct log	*log;
	char		 tag;
};

static void
log_put(struct log *l, char tag)
{
	if (l->n < sizeof l->order - 1) {
		l->at[l->n] = clock_mono();
		l->order[l->n++] = tag;
		l->order[l->n] = '\0';
	}
}

static void
on_mark(void *arg)
{
	struct mark	*m = arg;

	log_put(m->log, m->tag);
}

/* Turn the loop until the log holds n entries; the alarm bounds it. */
static void
turn_until(struct evloop *loop, struct log *l, size_t n)
{
	while (l->n < n)
		assert_true(evloop_run_once(loop, -1) >= 0);
}

static void
test_timer_order(void **state)
{
	struct evloop	*loop = evloop_new();
	struct log	 l = { 0 };
	struct mark	 a = { &l, 'a' }, b = { &l, 'b' }, c = { &l, 'c' },
			 d = { &l, 'd' };
	double		 t0 = clock_mono();
	struct evloop_timer *tb, *tc, *td;

	(void)state;
	alarm(WATCHDOG_S);
	tc = evloop_timer_add(loop, 0.06, 0, on_mark, &c);
	evloop_timer_add(loop, 0.02, 0, on_mark, &a);
	tb = evloop_timer_add(loop, 0.04, 0, on_mark, &b);
	td = evloop_timer_add(loop, -1, 0, on_mark, &d);	/* unarmed */
	/* With no fd, nothing but the timers ends a wait of -1. */
	turn_until(loop, &l, 3);
	assert_string_equal(l.order, "abc");
	assert_true(l.at[0] - t0 >= 0.02);
	assert_true(l.at[1] - t0 >= 0.04);
	assert_true(l.at[2] - t0 >= 0.06);
	/* One-shots fired once: a turn now waits for its timeout only. */
	assert_int_equal(evloop_run_once(loop, 30), 0);
	assert_string_equal(l.order, "abc");
	/* Armed again, the unarmed one fires. */
	evloop_timer_set(td, 0.01, 0);
	turn_until(loop, &l, 4);
	assert_string_equal(l.order, "abcd");
	/* All due in one turn: still earliest first, not as added. */
	evloop_timer_set(tc, 0.003, 0);
	evloop_timer_set(td, 0.001, 0);
	evloop_timer_set(tb, 0.002, 0);
	usleep(20000);
	assert_int_equal(evloop_run_once(loop, 0), 3);
	assert_string_equal(l.order, "abcddbc");
	evloop_free(loop);
	alarm(0);
}

static void
test_timer_period(void **state)
{
	struct evloop	*loop = evloop_new();
	struct log	 l = { 0 };
	struct mark	 p = { &l, 'p' }, o = { &l, 'o' };
	double		 t0 = clock_mono(), period = 0.02, last = 0;
	struct evloop_timer *tp;
	int		 np = 0, no = 0;

	(void)state;
	alarm(WATCHDOG_S);
	tp = evloop_timer_add(loop, period, period, on_mark, &p);
	evloop_timer_add(loop, 0.05, 0, on_mark, &o);
	turn_until(loop, &l, 8);
	for (size_t i = 0; i < l.n; i++) {
		if (l.order[i] == 'o') {
			no++;
			continue;
		}
		/* The k-th firing is never before t0 + k periods (late
		 * ones, on a loaded machine, only push the next ones on). */
		np++;
		assert_true(l.at[i] - t0 >= np * period - 1e-6);
		assert_true(l.at[i] > last);
		last = l.at[i];
	}
	assert_int_equal(no, 1);
	assert_true(np >= 7);
	/* Disarmed, it stops. */
	evloop_timer_set(tp, -1, 0);
	assert_int_equal(evloop_run_once(loop, 60), 0);
	assert_int_equal(l.n, 8);
	evloop_free(loop);
	alarm(0);
}

/* Removals and additions from inside the callbacks. */
struct rig {
	struct evloop	*loop;
	int		 p[4][2];	/* pipes: the loop reads [i][0] */
	struct evloop_fd *e[4];
	struct evloop_timer *t[3];
	int		 calls[4], tcalls[3];
	int		 late[2];	/* the pipe added inside a callback */
	struct evloop_fd *late_e;
	int		 late_calls;
	int		 reused_calls;	/* an entry on a reused fd number */
};

static struct rig *rig_now;

static void
on_late(int fd, short rev, void *arg)
{
	char	 c;

	(void)rev;
	(void)arg;
	if (read(fd, &c, 1) == 1)
		rig_now->late_calls++;
}

static void
on_reused(int fd, short rev, void *arg)
{
	(void)fd;
	(void)rev;
	(void)arg;
	rig_now->reused_calls++;
}

/* Pipe 0 removes itself and pipe 1 (ready too, after it: never called);
 * pipe 2 adds a fresh pipe that is ready at once (not called in this
 * turn); pipe 3 is removed, closed, and its number reused by a new
 * socketpair in the same callback: the old revents go to nobody. */
static void
on_pipe(int fd, short rev, void *arg)
{
	struct rig	*r = rig_now;
	int		 i = (int)(intptr_t)arg, sv[2];
	char		 c;

	(void)rev;
	r->calls[i]++;
	if (read(fd, &c, 1) != 1)
		fail_msg("pipe %d was called but had nothing", i);
	switch (i) {
	case 0:
		evloop_fd_del(r->e[0]);
		evloop_fd_del(r->e[1]);
		evloop_fd_del(r->e[3]);
		/* pipe 3's number, closed, is a new socket's at once */
		close(r->p[3][0]);
		close(r->p[3][1]);
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
		if (sv[0] != r->p[3][0]) {
			assert_int_equal(dup2(sv[0], r->p[3][0]), r->p[3][0]);
			close(sv[0]);
		}
		r->p[3][1] = sv[1];
		assert_int_equal(write(sv[1], "x", 1), 1);
		evloop_fd_add(r->loop, r->p[3][0], POLLIN, on_reused, NULL);
		break;
	case 2:
		assert_int_equal(pipe(r->late), 0);
		assert_int_equal(write(r->late[1], "x", 1), 1);
		r->late_e = evloop_fd_add(r->loop, r->late[0], POLLIN, on_late,
		    NULL);
		break;
	default:
		break;
	}
}

static void
on_timer(void *arg)
{
	struct rig	*r = rig_now;
	int		 i = (int)(intptr_t)arg;

	r->tcalls[i]++;
	if (i == 0) {
		evloop_timer_del(r->t[0]);	/* itself */
		evloop_timer_del(r->t[1]);	/* due too, later: not called */
	}
}

static void
test_add_remove_in_callbacks(void **state)
{
	struct rig	 r = { 0 };

	(void)state;
	alarm(WATCHDOG_S);
	rig_now = &r;
	r.loop = evloop_new();
	for (int i = 0; i < 4; i++) {
		assert_int_equal(pipe(r.p[i]), 0);
		r.e[i] = evloop_fd_add(r.loop, r.p[i][0], POLLIN, on_pipe,
		    (void *)(intptr_t)i);
	}
	for (int i = 0; i < 4; i++)
		assert_int_equal(write(r.p[i][1], "x", 1), 1);
	r.t[0] = evloop_timer_add(r.loop, 0, 0, on_timer, (void *)0);
	r.t[1] = evloop_timer_add(r.loop, 0, 0, on_timer, (void *)1);
	r.t[2] = evloop_timer_add(r.loop, 0, 0, on_timer, (void *)2);
	assert_int_equal(evloop_nfds(r.loop), 4);
	usleep(1000);
	assert_true(evloop_run_once(r.loop, 0) > 0);
	assert_int_equal(r.calls[0], 1);
	assert_int_equal(r.calls[1], 0);	/* removed while it was ready */
	assert_int_equal(r.calls[2], 1);
	assert_int_equal(r.calls[3], 0);	/* removed; its fd reused */
	assert_int_equal(r.reused_calls, 0);	/* added in this turn */
	assert_int_equal(r.late_calls, 0);	/* added in this turn */
	assert_int_equal(r.tcalls[0], 1);
	assert_int_equal(r.tcalls[1], 0);
	assert_int_equal(r.tcalls[2], 1);
	/* 0, 1, 3 gone; 2, the late pipe and the reused number in. */
	assert_int_equal(evloop_nfds(r.loop), 3);
	/* The next turn: the new ones, with what waits on them. */
	assert_true(evloop_run_once(r.loop, 1000) >= 2);
	assert_int_equal(r.late_calls, 1);
	assert_true(r.reused_calls >= 1);
	assert_int_equal(r.calls[1], 0);
	assert_int_equal(r.tcalls[0] + r.tcalls[1] + r.tcalls[2], 2);
	evloop_free(r.loop);
	for (int i = 0; i < 4; i++) {
		close(r.p[i][0]);
		close(r.p[i][1]);
	}
	close(r.late[0]);
	close(r.late[1]);
	alarm(0);
}

/* The events of an fd asked before each poll: POLLOUT only when wanted. */
static bool want_out;
static int out_calls;

static short
want_fn(void *arg)
{
	(void)arg;
	return want_out ? POLLOUT : 0;
}

static void
on_out(int fd, short rev, void *arg)
{
	(void)fd;
	(void)arg;
	if (rev & POLLOUT)
		out_calls++;
}

static void
test_want(void **state)
{
	struct evloop	*loop = evloop_new();
	struct evloop_fd *e;
	int		 sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	e = evloop_fd_add(loop, sv[0], POLLOUT, on_out, NULL);
	evloop_fd_want(e, want_fn, NULL);
	want_out = false;
	assert_int_equal(evloop_run_once(loop, 20), 0);
	assert_int_equal(out_calls, 0);
	want_out = true;
	assert_int_equal(evloop_run_once(loop, 1000), 1);
	assert_int_equal(out_calls, 1);
	/* Fixed events again: none. */
	evloop_fd_want(e, NULL, NULL);
	evloop_fd_events(e, 0);
	assert_int_equal(evloop_run_once(loop, 20), 0);
	evloop_free(loop);
	close(sv[0]);
	close(sv[1]);
}

#define MANY	1500	/* pipes: 3000 fds, well past 1024 */

static int many_calls;

static void
on_many(int fd, short rev, void *arg)
{
	char	 c;

	(void)rev;
	(void)arg;
	if (read(fd, &c, 1) == 1)
		many_calls++;
}

static void
test_grows_past_1024(void **state)
{
	struct rlimit	 rl;
	struct evloop	*loop;
	static int	 p[MANY][2];
	int		 ran = 0;

	(void)state;
	alarm(WATCHDOG_S);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur < 2 * MANY + 64) {
		rl.rlim_cur = rl.rlim_max < 2 * MANY + 64 ? rl.rlim_max :
		    2 * MANY + 64;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur < 2 * MANY + 64) {
		print_message("RLIMIT_NOFILE's hard limit is %llu: cannot "
		    "open %d fds\n", (unsigned long long)rl.rlim_max, 2 * MANY);
		skip();
	}
	loop = evloop_new();
	for (int i = 0; i < MANY; i++) {
		assert_int_equal(pipe(p[i]), 0);
		evloop_fd_add(loop, p[i][0], POLLIN, on_many, NULL);
	}
	assert_true(p[MANY - 1][0] > 1024);
	assert_int_equal(evloop_nfds(loop), MANY);
	for (int i = 0; i < MANY; i++)
		assert_int_equal(write(p[i][1], "x", 1), 1);
	while (many_calls < MANY) {
		int n = evloop_run_once(loop, 1000);

		assert_true(n > 0);
		ran += n;
	}
	assert_int_equal(ran, MANY);	/* each fd once */
	evloop_free(loop);
	for (int i = 0; i < MANY; i++) {
		close(p[i][0]);
		close(p[i][1]);
	}
	alarm(0);
}

static int woken;

static void
on_wake(void *arg)
{
	(void)arg;
	woken++;
}

static void *
waker(void *arg)
{
	nanosleep(&(struct timespec){ 0, 50 * 1000000L }, NULL);
	evloop_wake(arg);
	return NULL;
}

static void
test_wake_from_thread(void **state)
{
	struct evloop	*loop = evloop_new();
	pthread_t	 t;

	(void)state;
	alarm(WATCHDOG_S);
	assert_int_equal(evloop_wake_fd(loop), -1);
	assert_int_equal(evloop_wake_on(loop, on_wake, NULL), 0);
	assert_true(evloop_wake_fd(loop) >= 0);
	assert_int_equal(pthread_create(&t, NULL, waker, loop), 0);
	/* No timer, no timeout: only the other thread ends this wait. */
	while (woken == 0)
		assert_true(evloop_run_once(loop, -1) >= 0);
	pthread_join(t, NULL);
	assert_int_equal(woken, 1);
	/* Many rings before a turn are one wake-up, drained. */
	for (int i = 0; i < 1000; i++)
		evloop_wake(loop);
	assert_int_equal(evloop_run_once(loop, 1000), 1);
	assert_int_equal(evloop_run_once(loop, 20), 0);
	assert_int_equal(woken, 2);
	evloop_free(loop);
	alarm(0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timer_order),
		cmocka_unit_test(test_timer_period),
		cmocka_unit_test(test_add_remove_in_callbacks),
		cmocka_unit_test(test_want),
		cmocka_unit_test(test_grows_past_1024),
		cmocka_unit_test(test_wake_from_thread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
