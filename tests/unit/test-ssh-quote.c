/*
 * test-ssh-quote.c: the SSH launcher's remote command line
 * (backend/fleet/ssh-cmd.c).  Hostile strings are quoted, then handed to
 * a real /bin/sh, which must give each back as one unchanged word and run
 * nothing: a marker file that an injected `touch` would create must not
 * appear.  Also: the full agent command, buffers too small, and the build
 * id as a path component.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "backend/fleet/ssh.h"

static char	marker[128];

/* Strings that would run `touch MARKER` (or worse) if unquoted; %s is
 * the marker's path. */
static const char *const hostile[] = {
	"n0;touch %s",
	"$(touch %s)",
	"`touch %s`",
	"x' ; touch %s ; echo '",
	"'\\''; touch %s #",
	"a\"b\" && touch %s",
	"x\ntouch %s",
	"|| touch %s &",
	"~root/$HOME/${IFS}touch${IFS}%s",
	"> %s",
	"",
	"'",
	"''''",
	"\\",
	"* ? [a] {b,c}",
};

static int
setup(void **state)
{
	(void)state;
	snprintf(marker, sizeof marker, "/tmp/hunter-quote-marker.%ld",
	    (long)getpid());
	unlink(marker);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	unlink(marker);
	return 0;
}

/* What /bin/sh -c cmd prints (a static buffer). */
static const char *
sh_output(const char *cmd)
{
	static char	 out[8192];
	FILE		*p;
	size_t		 n;

	/* popen runs /bin/sh -c cmd: cmd is exactly the remote line. */
	assert_non_null(p = popen(cmd, "r"));
	n = fread(out, 1, sizeof out - 1, p);
	out[n] = '\0';
	pclose(p);
	return out;
}

static void
t_quote_roundtrip(void **state)
{
	char	 s[512], q[2048], cmd[4096], want[600];

	(void)state;
	for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
		snprintf(s, sizeof s, hostile[i], marker);
		assert_int_equal(fleet_ssh_quote(q, sizeof q, s), 0);
		snprintf(cmd, sizeof cmd, "printf '[%%s]\\n' %s", q);
		snprintf(want, sizeof want, "[%s]\n", s);
		assert_string_equal(sh_output(cmd), want);
		assert_int_equal(access(marker, F_OK), -1);
	}
}

static void
t_quote_exact(void **state)
{
	char	 q[64];

	(void)state;
	assert_int_equal(fleet_ssh_quote(q, sizeof q, "n0"), 0);
	assert_string_equal(q, "'n0'");
	assert_int_equal(fleet_ssh_quote(q, sizeof q, "it's"), 0);
	assert_string_equal(q, "'it'\\''s'");
	assert_int_equal(fleet_ssh_quote(q, sizeof q, ""), 0);
	assert_string_equal(q, "''");
	/* Too small: refused, never cut short (a cut quote would open). */
	assert_int_equal(fleet_ssh_quote(q, 4, "abc"), -1);
	assert_string_equal(q, "");
	assert_int_equal(fleet_ssh_quote(q, 5, "abc"), -1);
	assert_int_equal(fleet_ssh_quote(q, 6, "abc"), 0);
	assert_string_equal(q, "'abc'");
	assert_int_equal(fleet_ssh_quote(q, 8, "a'b"), -1);
	assert_int_equal(fleet_ssh_quote(q, 9, "a'b"), 0);
	assert_int_equal(fleet_ssh_quote(q, 0, "a"), -1);
}

/* The whole agent command: every argument comes back as one word. */
static void
t_command(void **state)
{
	char	 node[256], dir[256], cmd[4096], want[2048];

	(void)state;
	snprintf(node, sizeof node, "n1;touch %s", marker);
	snprintf(dir, sizeof dir, "~/x'$(touch %s)'", marker);
	assert_int_equal(fleet_ssh_command(cmd, sizeof cmd, "/bin/echo",
	    node, dir, 900), 0);
	snprintf(want, sizeof want, "agent --stdio --node %s --dir %s "
	    "--idle-exit 900\n", node, dir);
	assert_string_equal(sh_output(cmd), want);
	assert_int_equal(access(marker, F_OK), -1);
	/* The exe is one word too, spaces and all. */
	assert_int_equal(fleet_ssh_command(cmd, sizeof cmd,
	    "/home/a b/.local/lib/hunter/x/hunter", "n0", "/d", 5), 0);
	assert_string_equal(cmd, "'/home/a b/.local/lib/hunter/x/hunter' "
	    "agent --stdio --node 'n0' --dir '/d' --idle-exit 5");
	assert_int_equal(fleet_ssh_command(cmd, 20, "hunter", "n0", "/d", 5),
	    -1);
	assert_string_equal(cmd, "");
}

static void
t_build_dir(void **state)
{
	char	 d[64];

	(void)state;
	fleet_ssh_build_dir(d, sizeof d, "d87c86a-dirty (ncursesw gloo cuda)");
	assert_string_equal(d, "d87c86a-dirty__ncursesw_gloo_cuda_");
	fleet_ssh_build_dir(d, sizeof d, "../../etc");
	assert_string_equal(d, "_._.._etc");
	fleet_ssh_build_dir(d, sizeof d, "-rf");
	assert_string_equal(d, "_rf");
	fleet_ssh_build_dir(d, sizeof d, "");
	assert_string_equal(d, "unknown");
	fleet_ssh_build_dir(d, 4, "abcdef");
	assert_string_equal(d, "abc");
	assert_null(strchr(d, '/'));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_quote_exact),
		cmocka_unit_test_setup_teardown(t_quote_roundtrip, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(t_command, setup, teardown),
		cmocka_unit_test(t_build_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
