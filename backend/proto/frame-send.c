/*
 * frame-send.c: encoding a message into a frame and writing it out.
 *
 * The encoder refuses what the decoder on the other end would refuse
 * (not an object, no "t", a NUL inside a string, over PROTO_MAX_FRAME),
 * so a bad message fails where it was made instead of closing the link.
 *
 * proto_send writes the whole frame or fails: a frame cut short would
 * desynchronise the stream for good.  It retries on EINTR, waits in
 * poll() if the fd turns out to be non-blocking, and never raises
 * SIGPIPE: sockets get MSG_NOSIGNAL, and pipes (an SSH channel is the
 * ssh client's stdin) are written with SIGPIPE blocked in this thread,
 * consuming the signal if the write raised it.
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

#include "lib/errf.h"
#include "lib/xmalloc.h"
#include "backend/proto/proto.h"

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

/* Wait until a non-blocking fd can take more.  0 or -1 (errno). */
static int
frame_wait_writable(int fd)
{
	struct pollfd	pfd = { .fd = fd, .events = POLLOUT };
	int		rc;

	do
		rc = poll(&pfd, 1, -1);
	while (rc == -1 && errno == EINTR);
	return rc == -1 ? -1 : 0;
}

static int
frame_write_all(int fd, const uint8_t *p, size_t n)
{
	ssize_t	w;
	int	is_socket = 1;

	while (n > 0) {
		if (is_socket) {
			w = send(fd, p, n, MSG_NOSIGNAL);
			if (w == -1 && errno == ENOTSOCK) {
				is_socket = 0;
				continue;
			}
		} else
			w = frame_write_nosigpipe(fd, p, n);
		if (w == -1) {
			if (errno == EINTR)
				continue;
			if ((errno == EAGAIN || errno == EWOULDBLOCK) &&
			    frame_wait_writable(fd) == 0)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int
proto_send(int fd, const json_t *msg)
{
	uint8_t	*frame;
	size_t	 len;
	int	 rc, saved;

	if ((frame = proto_encode(msg, &len, NULL, 0)) == NULL) {
		errno = EINVAL;
		return -1;
	}
	rc = frame_write_all(fd, frame, len);
	saved = errno;
	free(frame);
	errno = saved;
	return rc;
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
