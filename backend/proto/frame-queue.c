/*
 * frame-queue.c: a link's outgoing queue (proto.h, struct proto_queue).
 * Frames are kept encoded, back to back, in one buffer: what the fd did
 * not take when a frame was sent waits there, in order, and goes out when
 * the owner's loop finds the fd writable.  The drop policy is the kind
 * table's (kind.c): a droppable frame that finds the bound reached is
 * counted instead of queued; nothing else is ever dropped.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/xmalloc.h"
#include "backend/proto/proto.h"
#include "backend/proto/frame-internal.h"

void
proto_queue_init(struct proto_queue *q, int fd, size_t bound)
{
	int	fl;

	memset(q, 0, sizeof *q);
	q->fd = fd;
	q->bound = bound != 0 ? bound : PROTO_QUEUE_BOUND;
	q->is_socket = -1;
	if (fd >= 0 && (fl = fcntl(fd, F_GETFL)) != -1)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

void
proto_queue_free(struct proto_queue *q)
{
	free(q->buf);
	memset(q, 0, sizeof *q);
	q->fd = -1;
	q->is_socket = -1;
}

size_t
proto_queue_waiting(const struct proto_queue *q)
{
	return q->len - q->off;
}

short
proto_queue_events(const struct proto_queue *q)
{
	return q->fd >= 0 && q->err == 0 && q->len > q->off ? POLLOUT : 0;
}

short
proto_queue_want(void *q)
{
	return POLLIN | proto_queue_events(q);
}

static int
queue_fail(struct proto_queue *q, int err)
{
	q->err = err;
	free(q->buf);
	q->buf = NULL;
	q->off = q->len = q->cap = 0;
	errno = err;
	return -1;
}

int
proto_queue_flush(struct proto_queue *q)
{
	ssize_t	w;

	if (q->err != 0) {
		errno = q->err;
		return -1;
	}
	while (q->off < q->len) {
		w = frame_write_some(q->fd, q->buf + q->off, q->len - q->off,
		    &q->is_socket);
		if (w < 0 && errno == EAGAIN)
			return 0;
		if (w < 0)
			return queue_fail(q, errno);
		q->off += (size_t)w;
	}
	q->off = q->len = 0;
	return 0;
}

/* Room for n more bytes at the end, moving what waits to the front. */
static void
queue_reserve(struct proto_queue *q, size_t n)
{
	size_t	waiting = q->len - q->off;

	if (q->off > 0 && q->len + n > q->cap) {
		memmove(q->buf, q->buf + q->off, waiting);
		q->off = 0;
		q->len = waiting;
	}
	if (q->len + n > q->cap) {
		size_t cap = q->cap ? q->cap : 4096;

		while (cap < q->len + n)
			cap *= 2;
		q->buf = xrealloc(q->buf, cap);
		q->cap = cap;
	}
}

int
proto_queue_send(struct proto_queue *q, const json_t *msg)
{
	enum proto_kind	 k;
	uint8_t		*frame;
	size_t		 len, waiting = q->len - q->off;

	if (q->err != 0 || q->fd < 0) {
		errno = q->err != 0 ? q->err : EBADF;
		return -1;
	}
	if ((frame = proto_encode(msg, &len, NULL, 0)) == NULL) {
		errno = EINVAL;
		return -1;
	}
	k = proto_kind_named(proto_type(msg));
	/* An empty queue takes any frame: the bound is on the backlog. */
	if (waiting > 0 && waiting + len > q->bound &&
	    proto_kind_droppable(k)) {
		q->dropped[k]++;
		q->dropped_bytes += len;
		free(frame);
		return 1;
	}
	if (waiting + len > PROTO_QUEUE_HARD) {
		free(frame);
		return queue_fail(q, ENOBUFS);
	}
	queue_reserve(q, len);
	memcpy(q->buf + q->len, frame, len);
	q->len += len;
	free(frame);
	return proto_queue_flush(q);
}

int
proto_queue_send_new(struct proto_queue *q, json_t *msg)
{
	int	rc, saved;

	rc = proto_queue_send(q, msg);
	saved = errno;
	json_decref(msg);
	errno = saved;
	return rc;
}

int
proto_queue_drain(struct proto_queue *q, int timeout_ms)
{
	double	deadline = timeout_ms < 0 ? -1 : clock_mono() + timeout_ms / 1e3;

	for (;;) {
		if (proto_queue_flush(q) != 0)
			return -1;
		if (q->off == q->len)
			return 0;
		if (frame_wait_writable(q->fd, deadline) != 0)
			return -1;
	}
}

json_t *
proto_queue_drop_event(struct proto_queue *q, const char *link)
{
	json_t	*counts;
	char	 what[256], reason[512];
	size_t	 n = 0;
	uint64_t total = 0;

	for (int k = 0; k < PK_COUNT; k++)
		total += q->dropped[k];
	if (total == 0 || q->len - q->off > q->bound / 4)
		return NULL;
	counts = json_object();
	what[0] = '\0';
	for (int k = 0; k < PK_COUNT; k++) {
		if (q->dropped[k] == 0 || n >= sizeof what)
			continue;
		json_object_set_new(counts, proto_kind_name(k),
		    json_integer((json_int_t)q->dropped[k]));
		n += (size_t)snprintf(what + n, sizeof what - n,
		    "%s%llu %s", n > 0 ? ", " : "",
		    (unsigned long long)q->dropped[k], proto_kind_name(k));
	}
	snprintf(reason, sizeof reason, "%s: dropped %s frames (%llu kB) "
	    "while the reader was more than %zu KiB behind", link, what,
	    (unsigned long long)(q->dropped_bytes + 999) / 1000,
	    q->bound / 1024);
	memset(q->dropped, 0, sizeof q->dropped);
	q->dropped_bytes = 0;
	return json_pack("{s:s, s:s, s:s, s:s, s:o}", "t", MSG_EVENT,
	    "kind", "dropped", "link", link, "reason", reason,
	    "dropped", counts);
}
