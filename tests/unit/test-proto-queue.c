/*
 * test-proto-queue.c: a link's outgoing queue (backend/proto/frame-queue.c)
 * over socketpairs whose far end does not read.  Checked: a send never
 * blocks; once the bound waits, metrics, log and step frames are dropped
 * and counted by kind and nothing else is; what was queued arrives whole
 * and in order once the reader reads; the drop report comes only after
 * the reader caught up, with the counts, and once; never-droppable frames
 * past PROTO_QUEUE_HARD fail the link; a closed peer fails it without
 * SIGPIPE; the kind table's drop policy.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/net.h"
#include "backend/proto/proto.h"

int	test_proto_queue(void);

static json_t *
frame(const char *t, int i)
{
	return json_pack("{s:s, s:s, s:s, s:i, s:s, s:s}", "t", t, "scope",
	    "node", "kind", "x", "seq", i, "line", "some line of output",
	    "job", "j");
}

/* Read every frame from fd (non-blocking) into the reader r. */
static int
take_all(struct proto_reader *r, int fd, json_t **out, int max)
{
	json_t	*m;
	int	 n = 0;

	for (;;) {
		while (n < max && proto_reader_next(r, &m) == 1)
			out[n++] = m;
		if (proto_reader_fill(r, fd) <= 0)
			break;
	}
	while (n < max && proto_reader_next(r, &m) == 1)
		out[n++] = m;
	return n;
}

static void
t_drop_policy(void **state)
{
	struct proto_queue	 q;
	struct proto_reader	 r;
	static json_t		*got[20000];
	int			 sv[2], sent_ev = 0, sent_log = 0, n, dropped;
	int			 last_ev = -1;
	json_t			*ev;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	proto_queue_init(&q, sv[0], 16384);
	net_set_nonblock(sv[1], 1);
	/* Nobody reads: the socket fills, then the queue; every call
	 * returns at once. */
	for (int i = 0; i < 6000; i++) {
		bool	 is_ev = i % 10 == 0;
		int	 rc = proto_queue_send_new(&q, frame(is_ev ? MSG_EVENT :
		    MSG_LOG, i));

		assert_true(rc == 0 || rc == 1);
		if (is_ev) {
			assert_int_equal(rc, 0);	/* never dropped */
			sent_ev++;
		} else
			sent_log += rc == 0;
	}
	dropped = (int)q.dropped[PK_LOG];
	assert_true(dropped > 0);
	assert_int_equal(dropped + sent_log, 5400);
	assert_int_equal(q.dropped[PK_EVENT], 0);
	assert_true(proto_queue_waiting(&q) > 0);
	assert_int_equal(proto_queue_events(&q), POLLOUT);
	/* Still behind: no report yet. */
	assert_null(proto_queue_drop_event(&q, "test link"));

	/* The reader catches up; the owner flushes as poll would. */
	proto_reader_init(&r);
	n = 0;
	for (int round = 0; round < 10000 && (n < sent_ev + sent_log); round++) {
		n += take_all(&r, sv[1], got + n, 20000 - n);
		assert_int_equal(proto_queue_flush(&q), 0);
	}
	assert_int_equal(n, sent_ev + sent_log);
	assert_int_equal(proto_queue_waiting(&q), 0);
	assert_int_equal(proto_queue_events(&q), 0);
	/* In order, each whole, every event there. */
	for (int i = 0, prev = -1; i < n; i++) {
		int seq = (int)json_integer_value(json_object_get(got[i], "seq"));

		assert_true(seq > prev);
		prev = seq;
		if (strcmp(proto_type(got[i]), MSG_EVENT) == 0) {
			assert_int_equal(seq, last_ev + 1 + (last_ev < 0 ? 0 : 9));
			last_ev = seq;
		}
		json_decref(got[i]);
	}
	assert_int_equal(last_ev, 5990);
	ev = proto_queue_drop_event(&q, "test link");
	assert_non_null(ev);
	assert_int_equal(proto_kind(ev, NULL, 0), PK_EVENT);
	assert_string_equal(json_string_value(json_object_get(ev, "kind")),
	    "dropped");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(ev,
	    "dropped"), "log")), dropped);
	assert_non_null(strstr(json_string_value(json_object_get(ev, "reason")),
	    "test link: dropped "));
	json_decref(ev);
	assert_null(proto_queue_drop_event(&q, "test link"));	/* once */
	proto_reader_free(&r);
	proto_queue_free(&q);
	close(sv[0]);
	close(sv[1]);
}

/* An empty queue takes a frame bigger than its bound. */
static void
t_big_first(void **state)
{
	struct proto_queue	 q;
	char			*s = malloc(100000);
	int			 sv[2];

	(void)state;
	memset(s, 'a', 99999);
	s[99999] = '\0';
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	proto_queue_init(&q, sv[0], 1024);
	assert_int_equal(proto_queue_send_new(&q, json_pack("{s:s, s:s}", "t",
	    MSG_LOG, "line", s)), 0);
	/* ... but the next droppable one waits behind the bound. */
	if (proto_queue_waiting(&q) > 1024)
		assert_int_equal(proto_queue_send_new(&q, json_pack("{s:s, s:s}",
		    "t", MSG_LOG, "line", "x")), 1);
	free(s);
	proto_queue_free(&q);
	close(sv[0]);
	close(sv[1]);
}

static void
t_hard_limit(void **state)
{
	struct proto_queue	 q;
	size_t			 big = 900000;
	char			*s = malloc(big + 1);
	int			 sv[2], rc = 0, i;

	(void)state;
	memset(s, 'e', big);
	s[big] = '\0';
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	proto_queue_init(&q, sv[0], 0);
	for (i = 0; i < 200 && rc == 0; i++)
		rc = proto_queue_send_new(&q, json_pack("{s:s, s:s, s:s}", "t",
		    MSG_EVENT, "kind", "x", "reason", s));
	assert_int_equal(rc, -1);
	assert_int_equal(errno, ENOBUFS);
	assert_int_equal(q.err, ENOBUFS);
	assert_true((size_t)i * big > PROTO_QUEUE_HARD);
	assert_true((size_t)(i - 1) * big <= PROTO_QUEUE_HARD + big);
	/* The link is failed for good. */
	assert_int_equal(proto_queue_send_new(&q, frame(MSG_CMD, 1)), -1);
	assert_int_equal(proto_queue_events(&q), 0);
	free(s);
	proto_queue_free(&q);
	close(sv[0]);
	close(sv[1]);
}

static void
t_peer_closed(void **state)
{
	struct proto_queue	 q;
	int			 sv[2];
	int			 rc;

	(void)state;
	signal(SIGPIPE, SIG_DFL);	/* a SIGPIPE would end the test */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	close(sv[1]);
	proto_queue_init(&q, sv[0], 0);
	rc = proto_queue_send_new(&q, frame(MSG_CMD, 1));
	assert_int_equal(rc, -1);
	assert_int_equal(q.err, EPIPE);
	assert_int_equal(proto_queue_flush(&q), -1);
	proto_queue_free(&q);
	close(sv[0]);
	/* An encoder's refusal is not the link's failure. */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	proto_queue_init(&q, sv[0], 0);
	assert_int_equal(proto_queue_send_new(&q, json_array()), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(q.err, 0);
	assert_int_equal(proto_queue_send_new(&q, frame(MSG_CMD, 2)), 0);
	proto_queue_free(&q);
	close(sv[0]);
	close(sv[1]);
	signal(SIGPIPE, SIG_IGN);
}

/* A queue of no link refuses at once. */
static void
t_no_link(void **state)
{
	struct proto_queue	 q;

	(void)state;
	proto_queue_init(&q, -1, 0);
	assert_int_equal(proto_queue_send_new(&q, frame(MSG_CMD, 1)), -1);
	assert_int_equal(errno, EBADF);
	assert_int_equal(proto_queue_events(&q), 0);
	assert_int_equal(proto_queue_drain(&q, 0), 0);
	proto_queue_free(&q);
}

static void
t_kinds(void **state)
{
	static const enum proto_kind keep[] = { PK_HELLO, PK_EVENT, PK_EPOCH,
	    PK_SUMMARY, PK_STORE, PK_CMD, PK_EXIT, PK_ERROR, PK_AUTOTUNE,
	    PK_OK, PK_JOB, PK_JOB_END, PK_DECISION, PK_UNKNOWN, PK_INVALID };

	(void)state;
	assert_true(proto_kind_droppable(PK_METRICS));
	assert_true(proto_kind_droppable(PK_LOG));
	assert_true(proto_kind_droppable(PK_STEP));
	for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++)
		assert_false(proto_kind_droppable(keep[i]));
	assert_int_equal(proto_kind_named("metrics"), PK_METRICS);
	assert_int_equal(proto_kind_named("cmd"), PK_CMD);
	assert_int_equal(proto_kind_named("nope"), PK_UNKNOWN);
}

int
test_proto_queue(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(t_drop_policy),
		cmocka_unit_test(t_big_first),
		cmocka_unit_test(t_hard_limit),
		cmocka_unit_test(t_peer_closed),
		cmocka_unit_test(t_no_link),
		cmocka_unit_test(t_kinds),
	};

	return cmocka_run_group_tests_name("proto queue", tests, NULL, NULL);
}
