/*
 * test-ranklog.c: a worker's output as the agent handles it
 * (backend/agent/ranklog.c).  A real pipe stands for the worker's stdout
 * and a socketpair for the backend link; the test reads the log frames
 * off the far end.  Checked: every byte reaches the rank's log file;
 * each line is one frame with job, rank and node; control characters and
 * bytes that are not UTF-8 become '?', valid UTF-8 stays; a long line is
 * cut into RANKLOG_LINE-byte pieces; a partial last line is sent at EOF;
 * past 20 lines in a second the rest are held back and the next frame
 * says how many.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/net.h"
#include "backend/agent/agent.h"

struct rig {
	struct agent		 a;
	struct agent_peer	 peer;
	struct agent_peer	*peers[1];
	struct agent_worker	 w;
	int			 in;		/* the worker's end of the pipe */
	int			 far;		/* the backend's end */
	struct proto_reader	 rd;
	char			 dir[64], path[PATH_MAX];
};

static int
setup(void **state)
{
	struct rig	*r = calloc(1, sizeof *r);
	int		 sv[2], po[2];

	assert_non_null(r);
	snprintf(r->dir, sizeof r->dir, "/tmp/test-ranklog.XXXXXX");
	assert_non_null(mkdtemp(r->dir));
	snprintf(r->path, sizeof r->path, "%s/j.rank1.log", r->dir);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(pipe(po), 0);
	snprintf(r->a.node, sizeof r->a.node, "n7");
	r->peer.fd = sv[0];
	proto_queue_init(&r->peer.q, sv[0], 0);
	r->peer.is_backend = true;
	r->peers[0] = &r->peer;
	r->a.peers = r->peers;
	r->a.npeers = 1;
	snprintf(r->w.job, sizeof r->w.job, "j");
	r->w.rank = 1;
	r->w.run = 42;
	r->far = sv[1];
	net_set_nonblock(r->far, 1);
	r->in = po[1];
	proto_reader_init(&r->rd);
	ranklog_open(&r->w, po[0], r->path);
	*state = r;
	return 0;
}

static int
teardown(void **state)
{
	struct rig	*r = *state;

	if (r->in >= 0)
		close(r->in);
	ranklog_close(&r->a, &r->w);
	proto_queue_free(&r->peer.q);
	close(r->peer.fd);
	close(r->far);
	proto_reader_free(&r->rd);
	unlink(r->path);
	rmdir(r->dir);
	free(r);
	return 0;
}

static void
put(struct rig *r, const char *s, size_t n)
{
	assert_int_equal(write(r->in, s, n), (ssize_t)n);
}

/* The next log frame's line (the caller frees), or NULL when none came. */
static char *
next_line(struct rig *r)
{
	json_t	*m;
	char	*line;

	if (proto_reader_next(&r->rd, &m) != 1) {
		proto_reader_fill(&r->rd, r->far);
		if (proto_reader_next(&r->rd, &m) != 1)
			return NULL;
	}
	assert_string_equal(json_string_value(json_object_get(m, "t")), "log");
	assert_string_equal(json_string_value(json_object_get(m, "job")), "j");
	assert_int_equal(json_integer_value(json_object_get(m, "rank")), 1);
	assert_string_equal(json_string_value(json_object_get(m, "node")), "n7");
	assert_int_equal(json_integer_value(json_object_get(m, "run")), 42);
	line = strdup(json_string_value(json_object_get(m, "line")));
	json_decref(m);
	return line;
}

static void
expect_line(struct rig *r, const char *want)
{
	char	*got = next_line(r);

	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

static void
t_lines(void **state)
{
	struct rig	*r = *state;
	const char	 text[] = "plain\nbell\a and esc\x1b[31m red\r\n"
	    "caf\xc3\xa9 ok, bad \xff\xc3 and \xed\xa0\x80 end\npartial";
	char		 file[256];
	ssize_t		 n;
	int		 fd;

	put(r, text, sizeof text - 1);
	ranklog_input(&r->a, &r->w);
	expect_line(r, "plain");
	expect_line(r, "bell? and esc?[31m red");
	expect_line(r, "caf\xc3\xa9 ok, bad ?? and ??? end");
	assert_null(next_line(r));		/* "partial" waits for its end */
	close(r->in);
	r->in = -1;
	ranklog_input(&r->a, &r->w);		/* EOF: sent, and closed */
	expect_line(r, "partial");
	assert_int_equal(r->w.out, -1);
	/* The file has every byte as the worker wrote it. */
	assert_true((fd = open(r->path, O_RDONLY)) >= 0);
	n = read(fd, file, sizeof file);
	close(fd);
	assert_int_equal(n, (ssize_t)sizeof text - 1);
	assert_memory_equal(file, text, sizeof text - 1);
}

static void
t_long(void **state)
{
	struct rig	*r = *state;
	char		 big[RANKLOG_LINE * 2 + 10 + 1], *got;

	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 2] = '\n';
	put(r, big, sizeof big - 1);
	ranklog_input(&r->a, &r->w);
	for (int i = 0; i < 2; i++) {
		assert_non_null(got = next_line(r));
		assert_int_equal(strlen(got), RANKLOG_LINE);
		free(got);
	}
	assert_non_null(got = next_line(r));
	assert_int_equal(strlen(got), 9);
	free(got);
}

static void
t_rate(void **state)
{
	struct rig	*r = *state;
	char		 line[32], *got;
	int		 sent = 0;

	for (int i = 0; i < 30; i++) {
		snprintf(line, sizeof line, "line %d\n", i);
		put(r, line, strlen(line));
	}
	ranklog_input(&r->a, &r->w);
	while ((got = next_line(r)) != NULL) {
		snprintf(line, sizeof line, "line %d", sent++);
		assert_string_equal(got, line);
		free(got);
	}
	assert_int_equal(sent, 20);
	sleep(1);
	put(r, "later\n", 6);
	ranklog_input(&r->a, &r->w);
	expect_line(r, "(10 lines held back, in j.rank1.log on this node) "
	    "later");
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test_setup_teardown(t_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(t_long, setup, teardown),
		cmocka_unit_test_setup_teardown(t_rate, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
