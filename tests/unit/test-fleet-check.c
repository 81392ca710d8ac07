/*
 * test-fleet-check.c: fleet_check_versions (backend/fleet/check.c) over
 * hand-made hellos: all equal, one node on another hunter, the console on
 * another build, Gloo differing between nodes, nodes without a hello, and
 * a message too long for its buffer; and fleet_send to an agent that
 * closed its end, whose link stays for the poll to read the EOF and say
 * so (it was closed in silence: a launch then failed with no word of
 * the lost link).
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "backend/fleet/fleet.h"

#define NODES	3

static struct node_spec	 specs[NODES];
static struct fleet_node nodes[NODES];
static struct fleet	 fleet = { .nodes = nodes, .n = NODES };

static json_t *
hello(const char *hunter, const char *build, const char *gloo)
{
	json_t	*h = json_pack("{s:s, s:{s:s, s:s, s:s, s:s, s:s}}", "t", "hello",
	    "versions", "hunter", hunter, "build", build, "gloo", gloo,
	    "nccl", "none", "cuda", "none");

	assert_non_null(h);
	return h;
}

static int
setup(void **state)
{
	(void)state;
	for (int i = 0; i < NODES; i++) {
		snprintf(specs[i].name, sizeof specs[i].name, "n%d", i);
		nodes[i].spec = &specs[i];
		nodes[i].hello = hello("0.1.0", "B", "g1");
		nodes[i].up = true;
	}
	fleet.n = NODES;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	for (int i = 0; i < NODES; i++) {
		json_decref(nodes[i].hello);
		nodes[i].hello = NULL;
	}
	return 0;
}

static void
replace(int i, json_t *h)
{
	json_decref(nodes[i].hello);
	nodes[i].hello = h;
}

static void
t_equal(void **state)
{
	char	 err[512] = "x";
	json_t	*own = hello("0.1.0", "B", "other gloo: not compared");

	(void)state;
	assert_int_equal(fleet_check_versions(&fleet, own, err, sizeof err), 0);
	assert_string_equal(err, "");
	assert_int_equal(fleet_check_versions(&fleet, NULL, err, sizeof err), 0);
	json_decref(own);
}

static void
t_node_differs(void **state)
{
	char	 err[512];
	json_t	*own = hello("0.1.0", "B", "g1");

	(void)state;
	replace(1, hello("0.1.0-fake", "B", "g1"));
	assert_int_equal(fleet_check_versions(&fleet, own, err, sizeof err), -1);
	assert_string_equal(err, "version mismatch: n1 runs hunter 0.1.0-fake "
	    "(build B), n0, n2 and this console run 0.1.0 (build B)");
	json_decref(own);
}

static void
t_console_differs(void **state)
{
	char	 err[512];
	json_t	*own = hello("0.1.0", "C", "g1");

	(void)state;
	assert_int_equal(fleet_check_versions(&fleet, own, err, sizeof err), -1);
	assert_string_equal(err, "version mismatch: n0, n1 and n2 run hunter "
	    "0.1.0 (build B), this console runs 0.1.0 (build C)");
	/* Without the console's hello the nodes agree. */
	assert_int_equal(fleet_check_versions(&fleet, NULL, err, sizeof err), 0);
	json_decref(own);
}

static void
t_gloo_differs(void **state)
{
	char	 err[512];

	(void)state;
	replace(2, hello("0.1.0", "B", "g2"));
	assert_int_equal(fleet_check_versions(&fleet, NULL, err, sizeof err), -1);
	assert_string_equal(err, "version mismatch: gloo differs: n0 and n1 "
	    "have g1, n2 has g2");
}

static void
t_down_nodes_skipped(void **state)
{
	char	 err[512];

	(void)state;
	replace(1, hello("9", "Z", "g9"));
	nodes[1].up = false;
	assert_int_equal(fleet_check_versions(&fleet, NULL, err, sizeof err), 0);
	nodes[1].up = true;
	json_decref(nodes[2].hello);
	nodes[2].hello = NULL;
	assert_int_equal(fleet_check_versions(&fleet, NULL, err, sizeof err), -1);
	assert_string_equal(err, "version mismatch: n0 runs hunter 0.1.0 "
	    "(build B), n1 runs 9 (build Z); gloo differs: n0 has g1, n1 has g9");
}

static void
t_short_buffer(void **state)
{
	char	 err[16];

	(void)state;
	replace(0, hello("2", "X", "g3"));
	assert_int_equal(fleet_check_versions(&fleet, NULL, err, sizeof err), -1);
	assert_int_equal(strlen(err), sizeof err - 1);
	assert_int_equal(fleet_check_versions(&fleet, NULL, err, 0), -1);
}

static void
t_send_peer_closed(void **state)
{
	struct fleet_node *fn = &nodes[0];
	int		 sv[2];
	char		 c;
	struct pollfd	 pfd = { .events = POLLIN };
	json_t		*m = json_pack("{s:s, s:s}", "t", "cmd", "cmd", "ping");

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	fn->fd = sv[0];
	proto_queue_init(&fn->q, fn->fd, 0);
	assert_int_equal(fleet_send(fn, m), 0);		/* a live agent */
	close(sv[1]);
	assert_int_equal(fleet_send(fn, m), -1);
	assert_int_equal(errno, EPIPE);
	assert_int_equal(fn->fd, sv[0]);		/* still open ... */
	pfd.fd = fn->fd;				/* ... and the poll */
	assert_int_equal(poll(&pfd, 1, 0), 1);		/* sees the end */
	assert_true(pfd.revents & (POLLIN | POLLHUP));
	assert_true(recv(fn->fd, &c, 1, MSG_DONTWAIT) <= 0);
	fn->fd = -1;					/* now closed: no link */
	assert_int_equal(fleet_send(fn, m), -1);
	assert_int_equal(errno, ENOTCONN);
	proto_queue_free(&fn->q);
	close(sv[0]);
	json_decref(m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(t_equal, setup, teardown),
		cmocka_unit_test_setup_teardown(t_node_differs, setup, teardown),
		cmocka_unit_test_setup_teardown(t_console_differs, setup, teardown),
		cmocka_unit_test_setup_teardown(t_gloo_differs, setup, teardown),
		cmocka_unit_test_setup_teardown(t_down_nodes_skipped, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(t_short_buffer, setup, teardown),
		cmocka_unit_test_setup_teardown(t_send_peer_closed, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
