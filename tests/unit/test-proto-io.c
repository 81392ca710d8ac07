/*
 * test-proto-io.c: the parts of test-proto that need real fds or big
 * buffers (proto_send and proto_reader_fill over socketpairs and pipes,
 * frames at exactly the size limit), then base64 and hello.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "backend/proto/proto.h"

int	test_proto_io(void);

/* A log message whose JSON is exactly size bytes. */
static json_t *
sized(size_t size, char fill)
{
	static const size_t	 overhead = sizeof "{\"t\":\"log\",\"line\":\"\"}" - 1;
	char			*s = malloc(size - overhead + 1);
	json_t			*msg;

	memset(s, fill, size - overhead);
	s[size - overhead] = '\0';
	msg = json_pack("{s:s, s:s}", "t", MSG_LOG, "line", s);
	free(s);
	return msg;
}

/* Fill from fd until want messages came, checking the buffer bound. */
static void
drain(int fd, json_t **out, int want)
{
	struct proto_reader	r;
	int			got = 0, rc;

	proto_reader_init(&r);
	while (got < want) {
		rc = proto_reader_next(&r, &out[got]);
		assert_int_not_equal(rc, -1);
		if (rc == 1) {
			got++;
			continue;
		}
		assert_true(proto_reader_fill(&r, fd) > 0);
		assert_true(r.cap <= PROTO_READER_LIMIT);
	}
	assert_string_equal(r.err, "");
	proto_reader_free(&r);
}

static void
t_send_socketpair(void **state)
{
	json_t	*in[2], *out[2];
	int	 sv[2], i;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	in[0] = json_pack("{s:s, s:s}", "t", MSG_CMD, "cmd", "pause");
	in[1] = json_pack("{s:s, s:i}", "t", MSG_EXIT, "pid", 42);
	assert_int_equal(proto_send(sv[0], in[0]), 0);
	assert_int_equal(proto_send_new(sv[0], json_incref(in[1])), 0);
	drain(sv[1], out, 2);
	for (i = 0; i < 2; i++) {
		assert_true(json_equal(in[i], out[i]));
		json_decref(in[i]);
		json_decref(out[i]);
	}
	/* An unencodable message fails without writing a byte. */
	errno = 0;
	assert_int_equal(proto_send_new(sv[0], json_array()), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(proto_send_new(sv[0], NULL), -1);
	close(sv[0]);
	{
		struct proto_reader	r;

		proto_reader_init(&r);
		assert_int_equal(proto_reader_fill(&r, sv[1]), 0);
		assert_string_equal(r.err, "");
		proto_reader_free(&r);
	}
	close(sv[1]);
}

/* A dead peer is -1 with EPIPE, never a SIGPIPE that kills us. */
static void
t_send_epipe(void **state)
{
	json_t		*msg = json_pack("{s:s}", "t", MSG_HELLO), *out;
	sigset_t	 pending;
	int		 p[2], sv[2];

	assert_int_equal(pipe(p), 0);
	assert_int_equal(proto_send(p[1], msg), 0);
	drain(p[0], &out, 1);
	assert_true(json_equal(msg, out));
	json_decref(out);
	close(p[0]);
	errno = 0;
	assert_int_equal(proto_send(p[1], msg), -1);
	assert_int_equal(errno, EPIPE);
	close(p[1]);

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	close(sv[1]);
	errno = 0;
	assert_int_equal(proto_send(sv[0], msg), -1);
	assert_int_equal(errno, EPIPE);
	close(sv[0]);

	sigpending(&pending);
	assert_false(sigismember(&pending, SIGPIPE));
	json_decref(msg);
}

static void
t_limit(void **state)
{
	struct proto_reader	 r;
	json_t			*msg[3], *out, *big;
	uint8_t			*all, *f;
	size_t			 len, n = 0;
	char			 err[256];
	int			 i;

	big = sized(PROTO_MAX_FRAME + 1, 'z');
	assert_null(proto_encode(big, &len, err, sizeof err));
	assert_string_equal(err, "\"log\" message of 1048577 bytes exceeds "
	    "the 1048576-byte limit");
	json_decref(big);

	/* Three largest frames in one feed: the reader decodes early to
	 * stay within its limit, and hands them out in order. */
	all = malloc(3 * PROTO_READER_LIMIT);
	for (i = 0; i < 3; i++) {
		msg[i] = sized(PROTO_MAX_FRAME, 'a' + i);
		assert_non_null(f = proto_encode(msg[i], &len, NULL, 0));
		assert_int_equal(len, PROTO_READER_LIMIT);
		memcpy(all + n, f, len);
		n += len;
		free(f);
	}
	proto_reader_init(&r);
	assert_int_equal(proto_reader_feed(&r, all, n - 1), 0);
	assert_true(r.cap <= PROTO_READER_LIMIT);
	for (i = 0; i < 2; i++) {
		assert_int_equal(proto_reader_next(&r, &out), 1);
		assert_true(json_equal(msg[i], out));
		json_decref(out);
	}
	assert_int_equal(proto_reader_next(&r, &out), 0);
	assert_int_equal(proto_reader_feed(&r, all + n - 1, 1), 0);
	assert_int_equal(proto_reader_next(&r, &out), 1);
	assert_true(json_equal(msg[2], out));
	json_decref(out);
	proto_reader_free(&r);
	for (i = 0; i < 3; i++)
		json_decref(msg[i]);
	free(all);
}

/* Largest frames through a socket the writer made non-blocking. */
static void
t_fill_large(void **state)
{
	json_t	*msg[3], *out[3];
	pid_t	 pid;
	int	 sv[2], i, status;

	for (i = 0; i < 3; i++)
		msg[i] = sized(i == 1 ? 100 : PROTO_MAX_FRAME, 'x');
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	if ((pid = fork()) == 0) {
		close(sv[1]);
		fcntl(sv[0], F_SETFL, O_NONBLOCK);
		for (i = 0; i < 3; i++) {
			if (proto_send(sv[0], msg[i]) != 0)
				_exit(1);
		}
		_exit(0);
	}
	assert_true(pid > 0);
	close(sv[0]);
	drain(sv[1], out, 3);
	close(sv[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	for (i = 0; i < 3; i++) {
		assert_true(json_equal(msg[i], out[i]));
		json_decref(msg[i]);
		json_decref(out[i]);
	}
}

static void
on_alarm(int sig)
{
}

/* A signal while fill waits in read() is not the link's end. */
static void
t_fill_eintr(void **state)
{
	struct proto_reader	 r;
	struct sigaction	 sa = { .sa_handler = on_alarm }, old;
	json_t			*msg = json_pack("{s:s}", "t", MSG_LOG), *out;
	pid_t			 pid;
	int			 sv[2], status;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	if ((pid = fork()) == 0) {
		usleep(300 * 1000);
		_exit(proto_send(sv[0], msg) == 0 ? 0 : 1);
	}
	close(sv[0]);
	sigaction(SIGALRM, &sa, &old);	/* no SA_RESTART */
	ualarm(50 * 1000, 0);
	proto_reader_init(&r);
	assert_true(proto_reader_fill(&r, sv[1]) > 0);
	sigaction(SIGALRM, &old, NULL);
	assert_int_equal(proto_reader_next(&r, &out), 1);
	assert_true(json_equal(msg, out));
	json_decref(out);
	proto_reader_free(&r);
	close(sv[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	json_decref(msg);
}

static void
t_encode_refuses(void **state)
{
	json_t	*msg;
	size_t	 len;
	char	 err[256];

	msg = json_array();
	assert_null(proto_encode(msg, &len, err, sizeof err));
	assert_string_equal(err, "message is not a JSON object");
	json_decref(msg);
	msg = json_pack("{s:i}", "t", 1);
	assert_null(proto_encode(msg, &len, err, sizeof err));
	assert_string_equal(err, "message has no string field \"t\"");
	assert_null(proto_encode(msg, &len, NULL, 0));
	json_decref(msg);
}

static void
t_b64(void **state)
{
	static const char *const vec[][2] = {
		{ "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" },
		{ "foo", "Zm9v" }, { "foob", "Zm9vYg==" },
		{ "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" },
	};
	static const char *const bad[] = {
		"Zg", "Zg=", "Zg=a", "Z===", "====", "=Zg=", "Zh==", "Zm9=",
		"Zm9v!A==", "Zm 9", "Zm9v\n", "Zm-_", "Zg==Zg==",
	};
	uint8_t		 data[64];
	char		*s;
	uint8_t		*d;
	size_t		 i, n, len;

	for (i = 0; i < sizeof vec / sizeof vec[0]; i++) {
		s = proto_b64_encode(vec[i][0], strlen(vec[i][0]));
		assert_string_equal(s, vec[i][1]);
		free(s);
		assert_non_null(d = proto_b64_decode(vec[i][1], &len));
		assert_int_equal(len, strlen(vec[i][0]));
		assert_memory_equal(d, vec[i][0], len);
		free(d);
	}
	srand(7);
	for (n = 0; n <= sizeof data; n++) {
		for (i = 0; i < n; i++)
			data[i] = (uint8_t)rand();
		if (n > 1)
			data[0] = 0, data[n - 1] = 0xff;
		s = proto_b64_encode(data, n);
		assert_int_equal(strlen(s), (n + 2) / 3 * 4);
		assert_non_null(d = proto_b64_decode(s, &len));
		assert_int_equal(len, n);
		assert_memory_equal(d, data, n);
		free(d);
		free(s);
	}
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_null(proto_b64_decode(bad[i], &len));
}

static void
t_hello(void **state)
{
	json_t		*h, *v;
	uint8_t		*f;
	const char	*keys[] = { "hunter", "build", "libc", "openblas",
	    "jansson", "gloo", "nccl", "cuda" };
	size_t		 i;

	unsetenv("HUNTER_FAKE_VERSION");
	h = proto_hello("agent", "n1");
	assert_int_equal(proto_kind(h, NULL, 0), PK_HELLO);
	assert_string_equal(proto_type(h), "hello");
	assert_int_equal(json_integer_value(json_object_get(h, "proto")),
	    PROTO_VERSION);
	assert_string_equal(json_string_value(json_object_get(h, "role")),
	    "agent");
	assert_string_equal(json_string_value(json_object_get(h, "node")),
	    "n1");
	v = json_object_get(h, "versions");
	for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		assert_true(json_is_string(json_object_get(v, keys[i])));
		assert_true(json_string_length(json_object_get(v, keys[i])) > 0);
	}
	assert_string_equal(json_string_value(json_object_get(v, "hunter")),
	    PACKAGE_VERSION);
	assert_string_equal(json_string_value(json_object_get(v, "jansson")),
	    JANSSON_VERSION);
	assert_non_null(strstr(json_string_value(json_object_get(v, "build")),
	    "(" HUNTER_FEATURES ")"));
	assert_non_null(f = proto_encode(h, &i, NULL, 0));
	free(f);
	json_decref(h);

	setenv("HUNTER_FAKE_VERSION", "9.9.9-fake", 1);
	h = proto_hello("backend", NULL);
	v = json_object_get(h, "versions");
	assert_string_equal(json_string_value(json_object_get(v, "hunter")),
	    "9.9.9-fake");
	assert_true(json_is_null(json_object_get(h, "node")));
	assert_int_equal(proto_kind(h, NULL, 0), PK_HELLO);
	json_decref(h);
	unsetenv("HUNTER_FAKE_VERSION");

	h = json_object();
	assert_string_equal(proto_type(h), "");
	json_decref(h);
}

int
test_proto_io(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(t_send_socketpair),
		cmocka_unit_test(t_send_epipe),
		cmocka_unit_test(t_limit),
		cmocka_unit_test(t_fill_large),
		cmocka_unit_test(t_fill_eintr),
		cmocka_unit_test(t_encode_refuses),
		cmocka_unit_test(t_b64),
		cmocka_unit_test(t_hello),
	};

	return cmocka_run_group_tests_name("proto io", tests, NULL, NULL);
}
