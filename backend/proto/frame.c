/*
 * frame.c: the frame decoder and encoder of docs/architecture.md, "Frames".
 *
 * The reader keeps the unconsumed bytes of a link in one buffer, r->buf
 * from r->off to r->len, which never grows past PROTO_READER_LIMIT (one
 * largest frame with its header).  Every time bytes arrive, the headers
 * of the frames now buffered are checked, so a length of zero or over
 * PROTO_MAX_FRAME is refused from its four bytes, before anything is
 * allocated for it.  When a feed brings more than fits, the complete
 * frame at the front is decoded early into r->pending, which
 * proto_reader_next hands out first, in order.
 *
 * NUL bytes: valid JSON text never holds a raw NUL (a string needs
 * "\u0000"), so a frame containing one is refused with its offset, and
 * JSON_ALLOW_NUL is not passed, so "\u0000" inside a string is refused
 * by jansson too.  Every consumer reads strings as C strings, and a
 * string cut short at a NUL would be a silent lie; binary data travels
 * as base64 (proto_b64_encode).
 *
 * r->err is sticky: once set, the link must close.  Frames complete
 * before the bad spot are still handed out by proto_reader_next, which
 * then returns -1.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/xmalloc.h"
#include "backend/proto/proto.h"

/* Below this a buffer is never shrunk; above it, freed once drained. */
#define READER_MIN_CAP	4096
#define READER_KEEP_CAP	(64u << 10)

static uint32_t
frame_get_u32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) |
	    ((uint32_t)p[2] << 8) | p[3];
}

void
proto_reader_init(struct proto_reader *r)
{
	memset(r, 0, sizeof *r);
}

void
proto_reader_free(struct proto_reader *r)
{
	free(r->buf);
	json_decref(r->pending);
	proto_reader_init(r);
}

/* Check a frame length from the wire; 0 if acceptable. */
static int
frame_check_length(struct proto_reader *r, uint32_t n)
{
	if (n == 0) {
		snprintf(r->err, sizeof r->err, "frame of 0 bytes (a frame "
		    "holds one JSON object)");
		return -1;
	}
	if (n > PROTO_MAX_FRAME) {
		snprintf(r->err, sizeof r->err, "frame of %u bytes exceeds "
		    "the %u-byte limit", n, PROTO_MAX_FRAME);
		return -1;
	}
	return 0;
}

/*
 * Walk the complete frames buffered and check the header of the first
 * incomplete one.  Returns -1 (r->err set) on a bad length.
 */
static int
frame_scan(struct proto_reader *r)
{
	size_t		pos = r->off;
	uint32_t	n;

	while (r->len - pos >= 4) {
		n = frame_get_u32(r->buf + pos);
		if (frame_check_length(r, n) != 0)
			return -1;
		if (r->len - pos - 4 < n)
			break;
		pos += 4 + (size_t)n;
	}
	return 0;
}

/* Parse the n bytes of one frame body.  NULL (r->err set) if bad. */
static json_t *
frame_decode(struct proto_reader *r, const uint8_t *p, size_t n)
{
	json_error_t	 e;
	json_t		*msg, *t;
	const uint8_t	*nul;

	if ((nul = memchr(p, '\0', n)) != NULL) {
		snprintf(r->err, sizeof r->err, "frame contains a NUL byte "
		    "at offset %zu", (size_t)(nul - p));
		return NULL;
	}
	msg = json_loadb((const char *)p, n, JSON_REJECT_DUPLICATES, &e);
	if (msg == NULL) {
		snprintf(r->err, sizeof r->err, "frame is not JSON: %s "
		    "(line %d col %d)", e.text, e.line, e.column);
		return NULL;
	}
	if (!json_is_object(msg)) {
		snprintf(r->err, sizeof r->err, "frame is not a JSON object");
		json_decref(msg);
		return NULL;
	}
	t = json_object_get(msg, "t");
	if (!json_is_string(t)) {
		snprintf(r->err, sizeof r->err,
		    "frame has no string field \"t\"");
		json_decref(msg);
		return NULL;
	}
	if (json_string_length(t) == 0) {
		snprintf(r->err, sizeof r->err, "frame has an empty \"t\"");
		json_decref(msg);
		return NULL;
	}
	return msg;
}

/*
 * Decode the frame at the front of the buffer.  Returns 1 with *msg, 0
 * if it is not complete yet, -1 (r->err set) if it is bad.  The frame is
 * consumed only when it decodes, so a bad one fails again next time.
 */
static int
frame_take(struct proto_reader *r, json_t **msg)
{
	size_t		avail = r->len - r->off;
	uint32_t	n;

	if (avail < 4)
		return 0;
	n = frame_get_u32(r->buf + r->off);
	if (frame_check_length(r, n) != 0)
		return -1;
	if (avail - 4 < n)
		return 0;
	if ((*msg = frame_decode(r, r->buf + r->off + 4, n)) == NULL)
		return -1;
	r->off += 4 + (size_t)n;
	if (r->off == r->len) {
		r->off = r->len = 0;
		if (r->cap > READER_KEEP_CAP) {
			free(r->buf);
			r->buf = NULL;
			r->cap = 0;
		}
	}
	return 1;
}

/*
 * Make room for want more bytes.  The unconsumed bytes move to the front
 * only when the buffer would otherwise grow, and when it is full, its
 * front frame (complete, as no frame is larger than the buffer) is
 * decoded into r->pending.  Returns the free space up to the limit, or
 * -1 (r->err set).
 */
static ssize_t
frame_make_room(struct proto_reader *r, size_t want)
{
	json_t	*msg;

	for (;;) {
		if (r->off > 0 && r->len + want > r->cap) {
			memmove(r->buf, r->buf + r->off, r->len - r->off);
			r->len -= r->off;
			r->off = 0;
		}
		if (r->len < PROTO_READER_LIMIT)
			return (ssize_t)(PROTO_READER_LIMIT - r->len);
		if (frame_take(r, &msg) != 1)
			return -1;
		if (r->pending == NULL)
			r->pending = json_array();
		json_array_append_new(r->pending, msg);
	}
}

/* Grow the buffer to hold at least want bytes, never past the limit. */
static void
frame_reserve(struct proto_reader *r, size_t want)
{
	size_t	cap = r->cap < READER_MIN_CAP ? READER_MIN_CAP : r->cap;

	if (want <= r->cap)
		return;
	while (cap < want)
		cap *= 2;
	if (cap > PROTO_READER_LIMIT)
		cap = PROTO_READER_LIMIT;
	r->buf = xrealloc(r->buf, cap);
	r->cap = cap;
}

int
proto_reader_feed(struct proto_reader *r, const void *data, size_t n)
{
	const uint8_t	*p = data;
	ssize_t		 room;
	size_t		 take;

	if (r->err[0] != '\0')
		return -1;
	while (n > 0) {
		if ((room = frame_make_room(r, n)) < 0)
			return -1;
		take = n < (size_t)room ? n : (size_t)room;
		frame_reserve(r, r->len + take);
		memcpy(r->buf + r->len, p, take);
		r->len += take;
		p += take;
		n -= take;
		if (frame_scan(r) != 0)
			return -1;
	}
	return 0;
}

int
proto_reader_next(struct proto_reader *r, json_t **msg)
{
	int	rc;

	*msg = NULL;
	if (json_array_size(r->pending) > 0) {
		*msg = json_incref(json_array_get(r->pending, 0));
		json_array_remove(r->pending, 0);
		return 1;
	}
	if ((rc = frame_take(r, msg)) != 0)
		return rc;
	return r->err[0] != '\0' ? -1 : 0;
}

/* The number of bytes of an unfinished frame left in the buffer. */
static size_t
frame_partial(const struct proto_reader *r, uint32_t *want)
{
	size_t	pos = r->off;

	*want = 0;
	while (r->len - pos >= 4) {
		*want = frame_get_u32(r->buf + pos);
		if (r->len - pos - 4 < *want)
			break;
		pos += 4 + (size_t)*want;
	}
	return r->len - pos;
}

/*
 * One read() into the reader.  Protocol errors in the bytes read are not
 * this call's failure: it returns the count, and proto_reader_next hands
 * out the good frames before returning -1.  EAGAIN comes back as -1 with
 * errno set and r->err left empty, since the link is still good.  At EOF
 * in the middle of a frame, r->err says how far it got.
 */
ssize_t
proto_reader_fill(struct proto_reader *r, int fd)
{
	ssize_t		room, n;
	size_t		part;
	uint32_t	want;

	if (r->err[0] != '\0') {
		errno = EPROTO;
		return -1;
	}
	if ((room = frame_make_room(r, READER_MIN_CAP)) < 0) {
		errno = EPROTO;
		return -1;
	}
	frame_reserve(r, r->len + (room < READER_MIN_CAP ?
	    (size_t)room : READER_MIN_CAP));
	do
		n = read(fd, r->buf + r->len, r->cap - r->len);
	while (n == -1 && errno == EINTR);
	if (n == -1) {
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			snprintf(r->err, sizeof r->err, "read: %s",
			    strerror(errno));
		return -1;
	}
	if (n == 0) {
		if ((part = frame_partial(r, &want)) > 0 && part < 4)
			snprintf(r->err, sizeof r->err, "link closed after "
			    "%zu of 4 header bytes", part);
		else if (part > 0)
			snprintf(r->err, sizeof r->err, "link closed %zu "
			    "bytes into a %u-byte frame", part - 4, want);
		return 0;
	}
	r->len += (size_t)n;
	frame_scan(r);
	return n;
}
