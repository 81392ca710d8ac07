/*
 * test-worker-link.c: a real worker (worker_main, forked) against a fake
 * agent on a socketpair.  The agent answers the rendezvous' store gets
 * with frames that break the protocol; the worker must refuse each with
 * a message and fail its rendezvous, never crash.  (A store answer with
 * no "op" once made it call strcmp(NULL).)
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "backend/proto/launch.h"
#include "backend/proto/proto.h"
#include "backend/worker/worker.h"

static const char job_yaml[] =
    "name: wl\n"
    "resources: {ranks: 2}\n"
    "model: {type: mlp, hidden: [8]}\n"
    "data: {path: /nonexistent}\n"
    "train: {epochs: 1, batch: {global: 8, micro: 4}}\n";

/* Run a rank 0 of 2; answer each store get with bad(req).  Returns the
 * worker's wait status, and what it printed in out. */
static int
run_worker(json_t *(*bad)(json_int_t req), char *out, size_t outlen)
{
	struct proto_reader	 rd;
	struct launch_order	 l;
	char			 lerr[128];
	int			 sv[2], ep[2], status, rc;
	char			 fd[16];
	size_t			 got = 0;
	ssize_t			 n;
	json_t			*msg;
	pid_t			 pid;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(pipe(ep), 0);
	if ((pid = fork()) == 0) {
		char *argv[] = { "worker", "--fd", fd, NULL };

		/* cmocka's handlers would catch a crash in the child. */
		signal(SIGSEGV, SIG_DFL);
		signal(SIGBUS, SIG_DFL);
		signal(SIGILL, SIG_DFL);
		signal(SIGFPE, SIG_DFL);
		close(sv[0]);
		close(ep[0]);
		dup2(ep[1], 2);
		snprintf(fd, sizeof fd, "%d", sv[1]);
		_exit(worker_main(3, argv));
	}
	close(sv[1]);
	close(ep[1]);
	l = (struct launch_order){ .rank = 0, .world = 2, .run = 1,
	    .spec_yaml = (char *)job_yaml, .timeout_ms = 500 };
	snprintf(l.job, sizeof l.job, "wl");
	snprintf(l.node, sizeof l.node, "n0");
	snprintf(l.addr, sizeof l.addr, "127.0.0.1");
	snprintf(l.spec_file, sizeof l.spec_file, "wl.yaml");
	snprintf(l.checkpoint_dir, sizeof l.checkpoint_dir, "/nonexistent");
	assert_int_equal(proto_send_new(sv[0], launch_pack(&l, lerr, sizeof lerr)), 0);
	proto_reader_init(&rd);
	/* The worker gives up its rendezvous about a second after the bad
	 * answer; 30 s is a hang. */
	for (int polls = 0; polls < 300; polls++) {
		struct pollfd p = { .fd = sv[0], .events = POLLIN };

		if (poll(&p, 1, 100) <= 0)
			continue;
		n = proto_reader_fill(&rd, sv[0]);
		while ((rc = proto_reader_next(&rd, &msg)) == 1) {
			const char *op = json_string_value(json_object_get(msg,
			    "op"));

			if (proto_kind(msg, NULL, 0) == PK_STORE &&
			    strcmp(op, "get") == 0)
				proto_send_new(sv[0], bad(json_integer_value(
				    json_object_get(msg, "req"))));
			json_decref(msg);
		}
		if (n == 0 || rc < 0)
			break;
	}
	proto_reader_free(&rd);
	close(sv[0]);
	/* EOF comes as it shuts the link, a moment before it exits. */
	for (int i = 0; i < 100 && waitpid(pid, &status, WNOHANG) == 0; i++)
		usleep(100000);
	if (waitpid(pid, &status, WNOHANG) == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		fail_msg("the worker hung after a bad store answer");
	}
	while (got + 1 < outlen && (n = read(ep[0], out + got,
	    outlen - 1 - got)) > 0)
		got += (size_t)n;
	out[got] = '\0';
	close(ep[0]);
	return status;
}

static json_t *
answer_no_op(json_int_t req)
{
	return json_pack("{s:s, s:I}", "t", MSG_STORE, "req", req);
}

static json_t *
answer_no_value(json_int_t req)
{
	return json_pack("{s:s, s:s, s:I}", "t", MSG_STORE, "op", "value",
	    "req", req);
}

static json_t *
answer_bad_value(json_int_t req)
{
	return json_pack("{s:s, s:s, s:I, s:i}", "t", MSG_STORE, "op", "value",
	    "req", req, "value", 7);
}

static void
t_store_answer_without_op(void **state)
{
	char	 out[8192];
	int	 st;

	(void)state;
	st = run_worker(answer_no_op, out, sizeof out);
	assert_false(WIFSIGNALED(st));
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 1);
	assert_non_null(strstr(out, "refusing 'store' frame: no \"op\""));
}

static void
t_store_answer_without_value(void **state)
{
	char	 out[8192];
	int	 st;

	(void)state;
	st = run_worker(answer_no_value, out, sizeof out);
	assert_false(WIFSIGNALED(st));
	assert_non_null(strstr(out, "refusing 'store' frame: no \"value\""));
	st = run_worker(answer_bad_value, out, sizeof out);
	assert_false(WIFSIGNALED(st));
	assert_non_null(strstr(out,
	    "refusing 'store' frame: \"value\" is not a string"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_store_answer_without_op),
		cmocka_unit_test(t_store_answer_without_value),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
