/*
 * test-spec-program.c: the program: key of a job file (spec-program.c):
 * argv and env into their packed buffers, the defaults, the checks that
 * a job is one kind (both is an error, at its place; neither is a model
 * job with the defaults), the
 * names hunter keeps for itself, and argv[0] looked up here.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/spec/spec.h"

static struct spec_errors	errs;
static struct job_spec		job;

static int
parse(const char *text)
{
	spec_errors_free(&errs);
	return spec_parse_job("/jobs/t.yaml", text, strlen(text), &job, &errs);
}

/* The only error is at line:col and holds want. */
static void
expect_only(const char *text, int line, int col, const char *want)
{
	assert_int_equal(parse(text), -1);
	if (errs.n != 1 || errs.v[0].line != line || errs.v[0].col != col ||
	    strstr(errs.v[0].msg, want) == NULL) {
		spec_errors_print(stderr, &errs);
		fail_msg("wanted one error at %d:%d holding \"%s\"", line, col,
		    want);
	}
}

static void
t_program(void **state)
{
	(void)state;
	assert_int_equal(parse("name: torch-fmnist\n"
	    "resources: {ranks: 2, device: cpu}\n"
	    "program:\n"
	    "  argv: [/usr/bin/python3, examples/programs/t.py, --epochs, \"5\"]\n"
	    "  env: {OMP_NUM_THREADS: \"1\", MODE: fast}\n"
	    "  stop_grace: 5s\n"
	    "checkpoint: {every_steps: 200, keep: 3}\n"), 0);
	assert_int_equal(job.kind, JOB_PROGRAM);
	assert_int_equal(job.program.argc, 4);
	assert_string_equal(spec_program_str(job.program.argv, 4, 0),
	    "/usr/bin/python3");
	assert_string_equal(spec_program_str(job.program.argv, 4, 3), "5");
	assert_null(spec_program_str(job.program.argv, 4, 4));
	assert_int_equal(job.program.argv_line[0], 4);
	assert_int_equal(job.program.argv_col[0], 10);
	assert_int_equal(job.program.nenv, 2);
	assert_string_equal(spec_program_str(job.program.env, 2, 0),
	    "OMP_NUM_THREADS=1");
	assert_string_equal(spec_program_str(job.program.env, 2, 1), "MODE=fast");
	assert_true(job.program.stop_grace_s == 5);
	assert_string_equal(job.program.dir, "/jobs");
	assert_int_equal(job.program.batch.micro, -1);
	assert_int_equal(job.checkpoint.every_steps, 200);

	assert_int_equal(parse("name: p\nprogram: {argv: [./run.sh], batch: "
	    "{micro: auto, min: 8, max: 512, trial_steps: 5}, "
	    "oom_exit_code: 42}\n"), 0);
	assert_int_equal(job.program.batch.micro, 0);
	assert_int_equal(job.program.batch.min, 8);
	assert_int_equal(job.program.batch.max, 512);
	assert_int_equal(job.program.oom_exit_code, 42);
	assert_true(job.program.stop_grace_s == 30);
	assert_int_equal(job.policy.max_restarts, 10);

	assert_int_equal(parse("name: m\nmodel: {type: mlp}\n"), 0);
	assert_int_equal(job.kind, JOB_MODEL);
	assert_int_equal(parse("name: m\n"), 0);	/* the defaults: mlp */
	assert_int_equal(job.kind, JOB_MODEL);
}

static void
t_program_errors(void **state)
{
	(void)state;
	expect_only("name: x\nprogram: {argv: [a]}\nmodel: {type: mlp}\n", 3, 1,
	    "model: a program job runs its own code and takes no model: "
	    "(program: is at line 2)");
	expect_only("name: x\nprogram: {env: {A: b}}\n", 2, 10,
	    "missing required key 'argv' in program");
	expect_only("name: x\nprogram: {argv: []}\n", 2, 17,
	    "program.argv: must name the program to run");
	expect_only("name: x\nprogram: {argv: python3}\n", 2, 17,
	    "program.argv: expected a list of strings");
	expect_only("name: x\nprogram: {argv: [a, [b]]}\n", 2, 21,
	    "program.argv[1]: expected a string, got a list");
	expect_only("name: x\nprogram: {argv: [a], env: {RANK: \"3\"}}\n", 2, 28,
	    "program.env.RANK: hunter sets RANK for each rank");
	expect_only("name: x\nprogram: {argv: [a], env: {HUNTER_FD: \"3\"}}\n",
	    2, 28, "hunter sets HUNTER_FD");
	expect_only("name: x\nprogram: {argv: [a], env: {'A-B': c}}\n", 2, 28,
	    "'A-B' is not an environment variable name");
	expect_only("name: x\nprogram: {argv: [a], stop_grace: soon}\n", 2, 34,
	    "program.stop_grace: malformed duration");
	expect_only("name: x\nprogram: {argv: [a], oom_exit_code: 300}\n", 2, 22,
	    "an exit status is 1..255, got 300");
	expect_only("name: x\nprogram: {argv: [a], batch: {min: 64, max: 8}}\n",
	    2, 30, "program.batch.min: must be <= program.batch.max (8)");
	expect_only("name: x\nprogram: {argv: [a], argc: 2}\n", 2, 22,
	    "unknown key 'argc' in program (did you mean 'argv'?)");
}

static void
t_program_find(void **state)
{
	char	 found[4096], err[4096], path[64];
	FILE	*f;

	(void)state;
	assert_int_equal(parse("name: x\nprogram: {argv: [sh, -c, 'exit 0']}\n"), 0);
	assert_int_equal(spec_program_find(&job, found, sizeof found, err,
	    sizeof err), 0);
	assert_non_null(strstr(found, "/sh"));
	assert_int_equal(parse("name: x\nprogram: {argv: [no-such-prog-7]}\n"), 0);
	assert_int_equal(spec_program_find(&job, found, sizeof found, err,
	    sizeof err), -1);
	assert_non_null(strstr(err, "'no-such-prog-7' is not on PATH"));

	/* Relative to the job file's folder, and checked by validate. */
	snprintf(path, sizeof path, "/tmp/spec-prog.XXXXXX");
	assert_non_null(mkdtemp(path));
	{
		char	 job_file[128], prog[128];

		snprintf(job_file, sizeof job_file, "%s/j.yaml", path);
		snprintf(prog, sizeof prog, "%s/run.sh", path);
		f = fopen(job_file, "w");
		fputs("name: x\nprogram:\n  argv: [./run.sh]\n", f);
		fclose(f);
		spec_errors_free(&errs);
		assert_int_equal(spec_check_job_here(job_file, &job, &errs), -1);
		assert_int_equal(errs.n, 1);
		assert_int_equal(errs.v[0].line, 3);
		assert_int_equal(errs.v[0].col, 10);
		assert_non_null(strstr(errs.v[0].msg, "program.argv[0]: './run.sh' "
		    "is not an executable file"));
		f = fopen(prog, "w");
		fputs("#!/bin/sh\n", f);
		fclose(f);
		chmod(prog, 0755);
		spec_errors_free(&errs);
		assert_int_equal(spec_check_job_here(job_file, &job, &errs), 0);
		unlink(prog);
		unlink(job_file);
		rmdir(path);
	}
	spec_errors_free(&errs);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_program),
		cmocka_unit_test(t_program_errors),
		cmocka_unit_test(t_program_find),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
