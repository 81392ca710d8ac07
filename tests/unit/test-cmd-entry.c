/*
 * test-cmd-entry.c: the one parser of the subcommands' options
 * (lib/cmd-entry.c) and the "did you mean" of names (lib/suggest.c).
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/cmd-entry.h"
#include "lib/suggest.h"

static const struct cmd_option opts[] = {
	{ "json", 'j', NULL, "JSON lines" },
	{ "resume", 'r', NULL, "resume" },
	{ "cluster", 'c', "FILE", "the cluster file" },
	{ "inject", 0, "KIND=VALUE", "a fault" },
	{ "tokens", 'n', "N", "how many" },
	{ "temperature", 't', "T", "how hot" },
	{ NULL }
};

static int	ran;

static int
t_exec(const struct cmd_args *a)
{
	ran++;
	return cmd_has(a, "json") ? 7 : 0;
}

static const struct cmd_entry entry = {
	.name = "t", .usage = "FILE\n--other", .summary = "a test command",
	.options = opts, .args_min = 1, .args_max = 2, .exec = t_exec,
};

/* What stderr got while f ran. */
static char	 said[4096];

static int
capture(int (*f)(void *), void *arg)
{
	FILE	*tmp = tmpfile();
	int	 saved = dup(2), rc;
	size_t	 n;

	fflush(stderr);
	dup2(fileno(tmp), 2);
	rc = f(arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	n = fread(said, 1, sizeof said - 1, tmp);
	said[n] = '\0';
	fclose(tmp);
	return rc;
}

struct parse_call {
	int		 argc;
	char		**argv;
	struct cmd_args	*a;
};

static int
do_parse(void *arg)
{
	struct parse_call *p = arg;

	return cmd_parse(&entry, p->argc, p->argv, p->a);
}

static int
parse(struct cmd_args *a, char **argv)
{
	struct parse_call p = { .argv = argv, .a = a };

	while (argv[p.argc] != NULL)
		p.argc++;
	return capture(do_parse, &p);
}

/* Long, short, grouped, =VALUE, a value in the next word, repeated
 * options, arguments before and after options, and "--". */
static void
t_forms(void **state)
{
	struct cmd_args	 a;
	char		*argv[] = { "t", "x.yaml", "-jr", "--cluster=c1.yaml",
	    "-cc2.yaml", "--inject", "slow=5", "--inject=crash-at=3", "--",
	    "-not-an-option", NULL };

	(void)state;
	assert_int_equal(parse(&a, argv), 0);
	assert_true(cmd_has(&a, "json"));
	assert_true(cmd_has(&a, "resume"));
	assert_false(cmd_has(&a, "tokens"));
	assert_null(cmd_get(&a, "tokens"));
	assert_string_equal(cmd_get(&a, "json"), "");
	assert_string_equal(cmd_get(&a, "cluster"), "c2.yaml");
	assert_string_equal(cmd_get_nth(&a, "cluster", 0), "c1.yaml");
	assert_string_equal(cmd_get_nth(&a, "inject", 0), "slow=5");
	assert_string_equal(cmd_get_nth(&a, "inject", 1), "crash-at=3");
	assert_null(cmd_get_nth(&a, "inject", 2));
	assert_int_equal(a.argc, 2);
	assert_string_equal(a.argv[0], "x.yaml");
	assert_string_equal(a.argv[1], "-not-an-option");
	cmd_args_free(&a);
}

/* Each mistake is refused with a message that names it. */
static void
t_errors(void **state)
{
	struct cmd_args	 a;
	char		*unknown[] = { "t", "--clustr", "x", "x", NULL };
	char		*letter[] = { "t", "-q", "x", NULL };
	char		*novalue[] = { "t", "x", "--cluster", NULL };
	char		*flagval[] = { "t", "x", "--json=yes", NULL };
	char		*toomany[] = { "t", "x", "y", "z", NULL };
	char		*none[] = { "t", "-j", NULL };

	(void)state;
	assert_int_equal(parse(&a, unknown), -1);
	assert_non_null(strstr(said, "hunter t: unknown option '--clustr' "
	    "(did you mean --cluster?)"));
	cmd_args_free(&a);
	assert_int_equal(parse(&a, letter), -1);
	assert_non_null(strstr(said, "unknown option '-q'"));
	cmd_args_free(&a);
	assert_int_equal(parse(&a, novalue), -1);
	assert_non_null(strstr(said, "--cluster needs FILE"));
	cmd_args_free(&a);
	assert_int_equal(parse(&a, flagval), -1);
	assert_non_null(strstr(said, "--json takes no value"));
	cmd_args_free(&a);
	assert_int_equal(parse(&a, toomany), -1);
	assert_non_null(strstr(said, "usage: hunter t [OPTION...] FILE\n"
	    "       hunter t [OPTION...] --other\n"));
	cmd_args_free(&a);
	assert_int_equal(parse(&a, none), -1);
	assert_non_null(strstr(said, "hunter t --help lists the options"));
	cmd_args_free(&a);
}

/* -h and --help anywhere ask for the help, whatever else is wrong. */
static void
t_help(void **state)
{
	struct cmd_args	 a;
	char		*h1[] = { "t", "--help", NULL };
	char		*h2[] = { "t", "-jh", NULL };
	FILE		*f = tmpfile();
	char		 text[4096];
	size_t		 n;

	(void)state;
	assert_int_equal(parse(&a, h1), 1);
	cmd_args_free(&a);
	assert_int_equal(parse(&a, h2), 1);
	cmd_args_free(&a);
	cmd_print_help(&entry, f);
	rewind(f);
	n = fread(text, 1, sizeof text - 1, f);
	text[n] = '\0';
	fclose(f);
	for (const struct cmd_option *o = opts; o->name != NULL; o++) {
		char	want[64];

		snprintf(want, sizeof want, "--%s%s%s", o->name, o->arg ? " " :
		    "", o->arg ? o->arg : "");
		assert_non_null(strstr(text, want));
		assert_non_null(strstr(text, o->help));
	}
	assert_non_null(strstr(text, "-h, --help"));
	assert_non_null(strstr(text, "a test command"));
}

struct main_call {
	char	**argv;
	int	  argc;
};

static int
do_main(void *arg)
{
	struct main_call *m = arg;

	return cmd_main(&entry, m->argc, m->argv);
}

/* cmd_main: the command's own status, 0 after --help without running
 * it, 2 after a usage error without running it. */
static void
t_main(void **state)
{
	char	*ok[] = { "t", "-j", "x", NULL };
	char	*help[] = { "t", "--help", NULL };
	char	*bad[] = { "t", NULL };
	int	 saved = dup(1), null = open("/dev/null", O_WRONLY);

	(void)state;
	ran = 0;
	assert_int_equal(capture(do_main, &(struct main_call){ ok, 3 }), 7);
	assert_int_equal(ran, 1);
	fflush(stdout);
	dup2(null, 1);
	close(null);
	assert_int_equal(capture(do_main, &(struct main_call){ help, 2 }), 0);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	assert_int_equal(capture(do_main, &(struct main_call){ bad, 1 }), 2);
	assert_int_equal(ran, 1);
}

static int	got_long_rc;

static int
do_numbers(void *arg)
{
	struct cmd_args	*a = arg;
	long long	 n = -5;
	double		 t = -5;

	got_long_rc = cmd_get_long(a, "tokens", 0, 100, &n);
	return cmd_get_real(a, "temperature", 0, 10, &t);
}

/* Numbers: in range, or a message naming the option and the range. */
static void
t_numbers(void **state)
{
	struct cmd_args	 a;
	char		*good[] = { "t", "x", "-n", "100", "-t", "0.5", NULL };
	char		*bad[] = { "t", "x", "-n", "101", "-t", "0", NULL };
	char		*junk[] = { "t", "x", "--tokens=12x", "-tnan", NULL };
	long long	 n = -1;
	double		 t = -1;

	(void)state;
	assert_int_equal(parse(&a, good), 0);
	assert_int_equal(cmd_get_long(&a, "tokens", 0, 100, &n), 0);
	assert_int_equal(n, 100);
	assert_int_equal(cmd_get_real(&a, "temperature", 0, 10, &t), 0);
	assert_true(t == 0.5);
	cmd_args_free(&a);
	assert_int_equal(parse(&a, bad), 0);
	assert_int_equal(capture(do_numbers, &a), -1);
	assert_int_equal(got_long_rc, -1);
	assert_non_null(strstr(said, "--tokens wants a whole number from 0 to "
	    "100, got '101'"));
	assert_non_null(strstr(said, "--temperature wants a number above 0"));
	cmd_args_free(&a);
	assert_int_equal(parse(&a, junk), 0);
	assert_int_equal(capture(do_numbers, &a), -1);
	assert_int_equal(got_long_rc, -1);
	assert_non_null(strstr(said, "got '12x'"));
	assert_non_null(strstr(said, "got 'nan'"));
	cmd_args_free(&a);
}

static void
t_takes(void **state)
{
	(void)state;
	assert_true(cmd_takes_option(&entry, "--cluster"));
	assert_true(cmd_takes_option(&entry, "--cluster=x"));
	assert_true(cmd_takes_option(&entry, "-j"));
	assert_false(cmd_takes_option(&entry, "--clusterx"));
	assert_false(cmd_takes_option(&entry, "--version"));
	assert_false(cmd_takes_option(&entry, "-"));
}

/* Slips, initials, parts, and nothing where nothing is near. */
static void
t_suggest(void **state)
{
	const char *train[] = { "epochs", "seed", "optimizer", "lr", "batch",
	    "eval_every", "grad_clip", "zero", "overlap", "bucket_size", NULL };
	const char *ck[] = { "every_steps", "keep", "dir", NULL };

	(void)state;
	assert_string_equal(suggest("epoch", train), "epochs");
	assert_string_equal(suggest("learning_rate", train), "lr");
	assert_string_equal(suggest("batch_size", train), "batch");
	assert_string_equal(suggest("num_epochs", train), "epochs");
	assert_string_equal(suggest("bucket", train), "bucket_size");
	assert_string_equal(suggest("sede", train), "seed");
	assert_string_equal(suggest("every", ck), "every_steps");
	assert_null(suggest("momentum", train));
	assert_null(suggest("xyzzy", ck));
	assert_null(suggest("a_b_c_d", ck));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_forms),
		cmocka_unit_test(t_errors),
		cmocka_unit_test(t_help),
		cmocka_unit_test(t_main),
		cmocka_unit_test(t_numbers),
		cmocka_unit_test(t_takes),
		cmocka_unit_test(t_suggest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
