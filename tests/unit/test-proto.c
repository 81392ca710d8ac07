/*
 * test-proto.c: the frame codec of backend/proto.  Frames go through
 * encode and the incremental reader whole, a byte at a time and several
 * at once; every malformed kind the reader must refuse is fed in and its
 * message checked.  test-proto-io.c adds real fds, frames at the size
 * limit, base64 and hello.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "backend/proto/proto.h"

/* Feed raw bytes into a fresh reader and take one result. */
static int
feed_next(struct proto_reader *r, const void *p, size_t n, json_t **msg)
{
	proto_reader_init(r);
	proto_reader_feed(r, p, n);
	return proto_reader_next(r, msg);
}

/* A frame of the given body, as a peer might send it. */
static uint8_t *
raw_frame(const void *body, uint32_t n, size_t *len)
{
	uint8_t	*f = malloc(4 + (size_t)n);

	f[0] = n >> 24;
	f[1] = n >> 16;
	f[2] = n >> 8;
	f[3] = n;
	memcpy(f + 4, body, n);
	*len = 4 + (size_t)n;
	return f;
}

/* Feed a bad body and check the reader refuses it with a message that
 * starts with err. */
static void
expect_refused(const void *body, uint32_t n, const char *err)
{
	struct proto_reader	 r;
	json_t			*msg = (json_t *)1;
	uint8_t			*f;
	size_t			 len;

	f = raw_frame(body, n, &len);
	assert_int_equal(feed_next(&r, f, len, &msg), -1);
	assert_null(msg);
	if (strncmp(r.err, err, strlen(err)) != 0)
		fail_msg("got \"%s\", wanted \"%s...\"", r.err, err);
	/* Sticky: the link stays bad. */
	assert_int_equal(proto_reader_next(&r, &msg), -1);
	assert_int_equal(proto_reader_feed(&r, f, len), -1);
	proto_reader_free(&r);
	free(f);
}

static json_t *
sample(int i)
{
	switch (i) {
	case 0:
		return json_pack("{s:s}", "t", MSG_LOG);
	case 1:
		return json_pack("{s:s, s:i, s:f, s:s}", "t", MSG_EPOCH,
		    "epoch", 3, "loss", 0.125, "job", "mnist \"quoted\"");
	case 2:
		return json_pack("{s:s, s:[i, {s:n}], s:s}", "t", MSG_EVENT,
		    "rank", 1, "x", "y", "reason", "caf\xc3\xa9 \xe2\x9c\x93");
	default:
		return json_pack("{s:s, s:b, s:I}", "t", MSG_SUMMARY, "ok", 1,
		    "bytes_sent", (json_int_t)1 << 40);
	}
}

static void
t_round_trip(void **state)
{
	struct proto_reader	 r;
	json_t			*in, *out;
	uint8_t			*f;
	size_t			 len;
	int			 i;

	proto_reader_init(&r);
	for (i = 0; i < 4; i++) {
		in = sample(i);
		assert_non_null(f = proto_encode(in, &len, NULL, 0));
		assert_int_equal((f[0] << 24 | f[1] << 16 | f[2] << 8 | f[3]),
		    len - 4);
		assert_int_equal(proto_reader_feed(&r, f, len), 0);
		assert_int_equal(proto_reader_next(&r, &out), 1);
		assert_true(json_equal(in, out));
		json_decref(out);
		assert_int_equal(proto_reader_next(&r, &out), 0);
		assert_null(out);
		json_decref(in);
		free(f);
	}
	assert_string_equal(r.err, "");
	proto_reader_free(&r);
}

static void
t_byte_at_a_time(void **state)
{
	struct proto_reader	 r;
	json_t			*in, *out;
	uint8_t			*f;
	size_t			 len, i;
	int			 k, got;

	proto_reader_init(&r);
	for (k = 0; k < 4; k++) {
		in = sample(k);
		f = proto_encode(in, &len, NULL, 0);
		for (i = 0, got = 0; i < len; i++) {
			assert_int_equal(proto_reader_feed(&r, f + i, 1), 0);
			got = proto_reader_next(&r, &out);
			assert_int_equal(got, i + 1 == len ? 1 : 0);
		}
		assert_true(json_equal(in, out));
		json_decref(out);
		json_decref(in);
		free(f);
	}
	proto_reader_free(&r);
}

static void
t_several_in_one_feed(void **state)
{
	struct proto_reader	 r;
	json_t			*in[4], *out;
	uint8_t			 all[4096], *f;
	size_t			 len, n = 0;
	int			 i;

	for (i = 0; i < 4; i++) {
		in[i] = sample(i);
		f = proto_encode(in[i], &len, NULL, 0);
		memcpy(all + n, f, len);
		n += len;
		free(f);
	}
	proto_reader_init(&r);
	/* Three and a half frames, then the rest. */
	assert_int_equal(proto_reader_feed(&r, all, n - 5), 0);
	for (i = 0; i < 3; i++) {
		assert_int_equal(proto_reader_next(&r, &out), 1);
		assert_true(json_equal(in[i], out));
		json_decref(out);
	}
	assert_int_equal(proto_reader_next(&r, &out), 0);
	assert_int_equal(proto_reader_feed(&r, all + n - 5, 5), 0);
	assert_int_equal(proto_reader_next(&r, &out), 1);
	assert_true(json_equal(in[3], out));
	json_decref(out);
	assert_int_equal(proto_reader_next(&r, &out), 0);
	for (i = 0; i < 4; i++)
		json_decref(in[i]);
	proto_reader_free(&r);
}

/* Many small frames, whole and in odd chunks, come out complete and in
 * order. */
static void
t_many_small(void **state)
{
	static uint8_t		 all[64 << 10];
	struct proto_reader	 r;
	json_t			*in, *out;
	uint8_t			*f;
	size_t			 len, n = 0, pos, chunk;
	int			 i, k, seq;

	for (i = 0; i < 1000; i++) {
		in = json_pack("{s:s, s:i}", "t", MSG_METRICS, "seq", i);
		f = proto_encode(in, &len, NULL, 0);
		assert_true(n + len <= sizeof all);
		memcpy(all + n, f, len);
		n += len;
		free(f);
		json_decref(in);
	}
	for (k = 0; k < 3; k++) {
		chunk = k == 0 ? n : k == 1 ? 7 : 4093;
		proto_reader_init(&r);
		for (pos = 0, seq = 0; pos < n; pos += len) {
			len = n - pos < chunk ? n - pos : chunk;
			assert_int_equal(proto_reader_feed(&r, all + pos, len), 0);
			while (proto_reader_next(&r, &out) == 1) {
				assert_int_equal(json_integer_value(
				    json_object_get(out, "seq")), seq++);
				json_decref(out);
			}
		}
		assert_int_equal(seq, 1000);
		assert_string_equal(r.err, "");
		proto_reader_free(&r);
	}
}

static void
t_truncated(void **state)
{
	struct proto_reader	 r;
	json_t			*in = sample(1), *out = (json_t *)1;
	uint8_t			*f;
	size_t			 len, cut;
	int			 sv[2];

	f = proto_encode(in, &len, NULL, 0);
	for (cut = 0; cut < len; cut++) {
		assert_int_equal(feed_next(&r, f, cut, &out), 0);
		assert_null(out);
		assert_string_equal(r.err, "");
		proto_reader_free(&r);
	}
	/* The peer goes away 10 bytes into the body. */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(write(sv[0], f, 14), 14);
	close(sv[0]);
	proto_reader_init(&r);
	assert_int_equal(proto_reader_fill(&r, sv[1]), 14);
	assert_int_equal(proto_reader_next(&r, &out), 0);
	assert_int_equal(proto_reader_fill(&r, sv[1]), 0);
	assert_non_null(strstr(r.err, "link closed 10 bytes into a"));
	assert_int_equal(proto_reader_next(&r, &out), -1);
	proto_reader_free(&r);
	close(sv[1]);
	json_decref(in);
	free(f);
}

static void
t_oversized(void **state)
{
	struct proto_reader	 r;
	json_t			*out;
	const uint8_t		 gib[4] = { 0x40, 0, 0, 0 };
	const uint8_t		 over[4] = { 0, 0x10, 0, 1 };

	proto_reader_init(&r);
	assert_int_equal(proto_reader_feed(&r, gib, 4), -1);
	assert_string_equal(r.err,
	    "frame of 1073741824 bytes exceeds the 1048576-byte limit");
	assert_true(r.cap <= 4096);
	assert_int_equal(proto_reader_next(&r, &out), -1);
	proto_reader_free(&r);

	proto_reader_init(&r);
	assert_int_equal(proto_reader_feed(&r, over, 4), -1);
	assert_string_equal(r.err,
	    "frame of 1048577 bytes exceeds the 1048576-byte limit");
	proto_reader_free(&r);
}

static void
t_zero_length(void **state)
{
	struct proto_reader	 r;
	json_t			*out;
	const uint8_t		 zero[4] = { 0 };

	proto_reader_init(&r);
	assert_int_equal(proto_reader_feed(&r, zero, 4), -1);
	assert_non_null(strstr(r.err, "frame of 0 bytes"));
	assert_int_equal(proto_reader_next(&r, &out), -1);
	proto_reader_free(&r);
}

static void
t_not_json(void **state)
{
	expect_refused("{\"t\": nope}", 11, "frame is not JSON: invalid "
	    "token near 'nope' (line 1 col 10)");
	expect_refused("{\"t\":\"x\"} {}", 12, "frame is not JSON: end of "
	    "file expected");
	expect_refused("{\"t\":\"\xff\"}", 9, "frame is not JSON: unable to "
	    "decode byte 0xff");
	expect_refused("{\"t\":\"log\",\"t\":\"cmd\"}", 21, "frame is not "
	    "JSON: duplicate object key");
}

static void
t_shape(void **state)
{
	expect_refused("[1, 2]", 6, "frame is not a JSON object");
	expect_refused("{\"type\":\"hello\"}", 16,
	    "frame has no string field \"t\"");
	expect_refused("{\"t\":7}", 7, "frame has no string field \"t\"");
	expect_refused("{\"t\":null}", 10, "frame has no string field \"t\"");
	expect_refused("{\"t\":\"\"}", 8, "frame has an empty \"t\"");
}

static void
t_nul(void **state)
{
	json_t	*msg;
	uint8_t	*f;
	char	 err[256];
	size_t	 len;

	expect_refused("{\"t\":\"log\"}\0junk", 16,
	    "frame contains a NUL byte at offset 11");
	expect_refused("{\"t\":\"lo\0g\"}", 12,
	    "frame contains a NUL byte at offset 8");
	expect_refused("{\"t\":\"a\\u0000b\"}", 16, "frame is not JSON: "
	    "\\u0000 is not allowed");

	/* The encoder refuses it too; an escaped backslash is fine. */
	msg = json_pack("{s:s, s:s%}", "t", "log", "line", "a\0b", (size_t)3);
	assert_null(proto_encode(msg, &len, err, sizeof err));
	assert_non_null(strstr(err, "NUL"));
	json_decref(msg);
	msg = json_pack("{s:s, s:s}", "t", "log", "line", "C:\\u0000");
	assert_non_null(f = proto_encode(msg, &len, err, sizeof err));
	free(f);
	json_decref(msg);
}

static void
t_good_then_bad(void **state)
{
	struct proto_reader	 r;
	json_t			*in = sample(0), *out;
	uint8_t			 buf[64], *f;
	size_t			 len;

	f = proto_encode(in, &len, NULL, 0);
	memcpy(buf, f, len);
	memset(buf + len, 0xff, 4);
	proto_reader_init(&r);
	assert_int_equal(proto_reader_feed(&r, buf, len + 4), -1);
	assert_int_equal(proto_reader_next(&r, &out), 1);
	assert_true(json_equal(in, out));
	json_decref(out);
	assert_int_equal(proto_reader_next(&r, &out), -1);
	assert_non_null(strstr(r.err, "exceeds"));
	proto_reader_free(&r);
	json_decref(in);
	free(f);
}

int	test_proto_io(void);
int	test_proto_kind(void);
int	test_proto_queue(void);

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(t_round_trip),
		cmocka_unit_test(t_byte_at_a_time),
		cmocka_unit_test(t_several_in_one_feed),
		cmocka_unit_test(t_many_small),
		cmocka_unit_test(t_truncated),
		cmocka_unit_test(t_oversized),
		cmocka_unit_test(t_zero_length),
		cmocka_unit_test(t_not_json),
		cmocka_unit_test(t_shape),
		cmocka_unit_test(t_nul),
		cmocka_unit_test(t_good_then_bad),
	};
	int	failed;

	failed = cmocka_run_group_tests_name("proto frames", tests, NULL, NULL);
	return failed + test_proto_io() + test_proto_kind() +
	    test_proto_queue();
}
