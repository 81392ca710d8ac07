/*
 * frame-send.c: encoding a message into a frame and writing it out.
 *
 * The encoder refuses what the decoder on the other end would refuse
 * (not an object, no "t", a NUL inside a string, over PROTO_MAX_FRAME),
 * so a bad message fails where it was made instead of closing the link.
 *
 * One write, frame_write_some, serves every sender: the links' queues
 * (frame-queue.c) and proto_send, the one-shot send of a short-lived
 * client.  It never blocks on a socket (MSG_DONTWAIT), retries on EINTR
 * and never raises SIGPIPE: sockets get MSG_NOSIGNAL, and other fds
 * (pipes) are written with SIGPIPE blocked in this thread, consuming the
 * signal if the write raised it.  proto_send writes the whole frame or
 * fails (a frame cut short would desynchronise the stream for good),
 * waiting for the fd at most PROTO_SEND_TIMEOUT_MS.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/errf.h"
#include "lib/xmalloc.h"
#include "backend/proto/proto.h"
#include "backend/proto/frame-internal.h"

/*
 * Whether compact JSON text holds an escaped NUL.  Outside strings
 * there are no backslashes, so stepping over each escape is enough.
 */
static int
frame_has_nul_escape(const char *s, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (s[i] != '\\' || i + 1 >= n)
			continue;
		if (s[i + 1] == 'u' && i + 5 < n &&
		    memcmp(s + i + 2, "0000", 4) == 0)
			return 1;
		i++;
	}
	return 0;
}

uint8_t *
proto_encode(const json_t *msg, size_t *len, char *err, size_t errlen)
{
	const json_t	*t;
	uint8_t		*frame;
	size_t		 n;

	if (!json_is_object(msg)) {
		errf(err, errlen, "message is not a JSON object");
		return NULL;
	}
	t = json_object_get(msg, "t");
	if (!json_is_string(t) || json_string_length(t) == 0) {
		errf(err, errlen, "message has no string field \"t\"");
		return NULL;
	}
	if ((n = json_dumpb(msg, NULL, 0, JSON_COMPACT)) == 0) {
		errf(err, errlen, "\"%s\" message cannot be encoded",
		    json_string_value(t));
		return NULL;
	}
	if (n > PROTO_MAX_FRAME) {
		errf(err, errlen, "\"%s\" message of %zu bytes exceeds "
		    "the %u-byte limit", json_string_value(t), n,
		    PROTO_MAX_FRAME);
		return NULL;
	}
	frame = xmalloc(4 + n);
	if (json_dumpb(msg, (char *)frame + 4, n, JSON_COMPACT) != n) {
		free(frame);
		errf(err, errlen, "\"%s\" message changed while being "
		    "encoded", json_string_value(t));
		return NULL;
	}
	if (frame_has_nul_escape((char *)frame + 4, n)) {
		free(frame);
		errf(err, errlen, "\"%s\" message has a NUL inside a "
		    "string (send binary data as base64)",
		    json_string_value(t));
		return NULL;
	}
	frame[0] = (uint8_t)(n >> 24);
	frame[1] = (uint8_t)(n >> 16);
	frame[2] = (uint8_t)(n >> 8);
	frame[3] = (uint8_t)n;
	*len = 4 + n;
	return frame;
}

/* write() with SIGPIPE held off, for fds that are not sockets. */
static ssize_t
frame_write_nosigpipe(int fd, const void *p, size_t n)
{
	static const struct timespec	 zero;
	sigset_t			 pipe_set, pending, old;
	ssize_t				 w;
	int				 was_pending, saved;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigpending(&pending);
	was_pending = sigismember(&pending, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	w = write(fd, p, n);
	saved = errno;
	if (w == -1 && saved == EPIPE && !was_pending) {
		while (sigtimedwait(&pipe_set, NULL, &zero) == -1 &&
		    errno == EINTR)
			;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	return w;
}

ssize_t
frame_write_some(int fd, const void *p, size_t n, int *is_socket)
{
	ssize_t	w;

	for (;;) {
		if (*is_socket != 0) {
			w = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (w == -1 && errno == ENOTSOCK) {
				*is_socket = 0;
				continue;
			}
			if (w >= 0)
				*is_socket = 1;
		} else
			w = frame_write_nosigpipe(fd, p, n);
		if (w == -1 && errno == EINTR)
			continue;
		if (w == -1 && errno == EWOULDBLOCK)
			errno = EAGAIN;
		return w;
	}
}

int
frame_wait_writable(int fd, double deadline)
{
	struct pollfd	pfd = { .fd = fd, .events = POLLOUT };
	double		left;
	int		rc;

	do {
		left = deadline < 0 ? -1 : deadline - clock_mono();
		if (deadline >= 0 && left <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		rc = poll(&pfd, 1, left < 0 ? -1 : (int)(left * 1000) + 1);
	} while (rc == -1 && errno == EINTR);
	if (rc == 0) {
		errno = ETIMEDOUT;
		return -1;
	}
	return rc == -1 ? -1 : 0;
}

int
proto_send(int fd, const json_t *msg)
{
	double	 deadline = clock_mono() + PROTO_SEND_TIMEOUT_MS / 1000.0;
	uint8_t	*frame;
	size_t	 len, off = 0;
	ssize_t	 w;
	int	 saved = 0, is_socket = -1;

	if ((frame = proto_encode(msg, &len, NULL, 0)) == NULL) {
		errno = EINVAL;
		return -1;
	}
	while (off < len) {
		if ((w = frame_write_some(fd, frame + off, len - off,
		    &is_socket)) >= 0)
			off += (size_t)w;
		else if (errno != EAGAIN || frame_wait_writable(fd,
		    deadline) != 0) {
			saved = errno;
			break;
		}
	}
	free(frame);
	errno = saved;
	return off == len ? 0 : -1;
}

int
proto_send_new(int fd, json_t *msg)
{
	int	rc, saved;

	rc = proto_send(fd, msg);
	saved = errno;
	json_decref(msg);
	errno = saved;
	return rc;
}
