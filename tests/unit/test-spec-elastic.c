/*
 * test-spec-elastic.c: resources.ranks and train.batch.global as a number
 * or {min, max}, and program.elastic (backend/spec/spec-elastic.c): the
 * values stored, what code that reads resources.ranks sees, and each
 * error at its line and column with its words.
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

#include "backend/spec/spec.h"

static struct spec_errors	errs;
static struct job_spec		job;

static int
parse(const char *text)
{
	spec_errors_free(&errs);
	return spec_parse_job("t.yaml", text, strlen(text), &job, &errs);
}

static int
reset(void **state)
{
	(void)state;
	spec_errors_free(&errs);
	return 0;
}

/* Fail unless the text is refused with an error at line:col holding
 * want (and as many errors in all as n). */
static void
expect_errors(const char *text, size_t n, int line, int col, const char *want)
{
	assert_int_equal(parse(text), -1);
	for (size_t i = 0; i < errs.n; i++) {
		if (errs.v[i].line == line && errs.v[i].col == col &&
		    strstr(errs.v[i].msg, want) != NULL) {
			if (errs.n != n)
				spec_errors_print(stderr, &errs);
			assert_int_equal(errs.n, n);
			return;
		}
	}
	spec_errors_print(stderr, &errs);
	fail_msg("no error at %d:%d holding \"%s\"", line, col, want);
}

static void
t_fixed(void **state)
{
	(void)state;
	assert_int_equal(parse("name: x\n"), 0);
	assert_int_equal(job.resources.ranks, 4);
	assert_int_equal(job.resources.min_ranks, 4);
	assert_int_equal(job.resources.max_ranks, 4);
	assert_false(job.resources.elastic);
	assert_int_equal(job.train.batch.global_min, 256);
	assert_int_equal(job.train.batch.global_max, 256);
	assert_false(job.train.batch.adaptive);
	assert_false(job.program.elastic);
	assert_int_equal(parse("name: x\nresources: {ranks: 8}\n"
	    "train: {batch: {global: 512}}\n"), 0);
	assert_int_equal(job.resources.ranks, 8);
	assert_int_equal(job.resources.min_ranks, 8);
	assert_int_equal(job.resources.max_ranks, 8);
	assert_int_equal(job.train.batch.global, 512);
	assert_int_equal(job.train.batch.global_max, 512);
	/* A model kind's own default batch is the fixed one too. */
	assert_int_equal(parse("name: x\nmodel: {type: gpt}\n"), 0);
	assert_int_equal(job.train.batch.global, 32);
	assert_int_equal(job.train.batch.global_min, 32);
	assert_int_equal(job.train.batch.global_max, 32);
}

static void
t_elastic(void **state)
{
	(void)state;
	assert_int_equal(parse("name: x\nresources:\n  ranks: {min: 2, max: 6}\n"
	    "train:\n  batch: {global: {min: 128, max: 2048}}\n"), 0);
	/* What reads ranks today launches the min. */
	assert_int_equal(job.resources.ranks, 2);
	assert_int_equal(job.resources.min_ranks, 2);
	assert_int_equal(job.resources.max_ranks, 6);
	assert_true(job.resources.elastic);
	assert_int_equal(job.train.batch.global, 128);
	assert_int_equal(job.train.batch.global_min, 128);
	assert_int_equal(job.train.batch.global_max, 2048);
	assert_true(job.train.batch.adaptive);
	/* Block style and min == max. */
	assert_int_equal(parse("name: x\nresources:\n  ranks:\n    min: 3\n"
	    "    max: 3\ntrain: {batch: {global: 96}}\n"), 0);
	assert_true(job.resources.elastic);
	assert_int_equal(job.resources.max_ranks, 3);
}

static void
t_errors(void **state)
{
	(void)state;
	expect_errors("name: x\nresources:\n  ranks: {min: 6, max: 1}\n", 1,
	    3, 11, "resources.ranks.min: must be <= resources.ranks.max (1), "
	    "got 6");
	expect_errors("name: x\nresources:\n  ranks: {min: 1, mx: 6}\n", 2,
	    3, 19, "unknown key 'mx' in resources.ranks (did you mean 'max'?)");
	expect_errors("name: x\nresources:\n  ranks: {min: 1, mx: 6}\n", 2,
	    3, 10, "missing required key 'max' in resources.ranks");
	expect_errors("name: x\nresources:\n  ranks: {min: 0, max: 2}\n", 1,
	    3, 16, "resources.ranks.min: must be > 0, got 0");
	expect_errors("name: x\nresources: {ranks: lots}\n", 1, 2, 20,
	    "resources.ranks: expected an integer or {min: A, max: B}, got "
	    "'lots'");
	expect_errors("name: x\nresources: {ranks: [1, 4]}\n", 1, 2, 20,
	    "resources.ranks: expected an integer or {min: A, max: B}, got "
	    "a list");
	expect_errors("name: x\nresources: {ranks: -2}\n", 1, 2, 20,
	    "resources.ranks: must be > 0, got -2");
	expect_errors("name: x\nresources: {ranks: {min: 1, max: 99999999999}}\n",
	    1, 2, 34, "resources.ranks.max: 99999999999 is too large");
	expect_errors("name: x\ntrain:\n  batch: {global: {min: 512, max: 64}}\n",
	    1, 3, 20, "train.batch.global.min: must be <= "
	    "train.batch.global.max (64), got 512");
	expect_errors("name: x\ntrain: {batch: {global: {min: 64, max: 1.5}}}\n",
	    1, 2, 40, "train.batch.global.max: expected an integer, got '1.5'");
	/* The first configuration cuts the batch evenly. */
	expect_errors("name: x\nresources:\n  ranks: {min: 3, max: 6}\n", 1, 3,
	    3, "resources.ranks.min: the job starts at 3 ranks, and "
	    "train.batch.global (256) is not a multiple of it");
	expect_errors("name: x\nresources:\n  ranks: {min: 3, max: 6}\n"
	    "train: {batch: {global: {min: 100, max: 400}}}\n", 1, 3, 3,
	    "train.batch.global.min (100) is not a multiple");
	expect_errors("name: x\nresources: {ranks: {min: 2, max: 4}}\n"
	    "train:\n  batch: {global: 256, micro: 48}\n", 1, 4, 24,
	    "(48 x 2 = 96)");
}

static void
t_program(void **state)
{
	(void)state;
	expect_errors("name: p\nresources:\n  ranks: {min: 1, max: 4}\n"
	    "program: {argv: [/bin/true]}\n", 1, 3, 3,
	    "a program job must say it can be: write program.elastic: true");
	assert_int_equal(parse("name: p\nresources:\n  ranks: {min: 1, max: 4}\n"
	    "program: {argv: [/bin/true], elastic: true}\n"), 0);
	assert_true(job.program.elastic);
	assert_int_equal(job.resources.ranks, 1);
	assert_int_equal(job.resources.max_ranks, 4);
	/* A fixed count may say so too: it is never resized. */
	assert_int_equal(parse("name: p\nprogram: {argv: [/bin/true], "
	    "elastic: yes}\n"), 0);
	assert_true(job.program.elastic);
	assert_false(job.resources.elastic);
	expect_errors("name: p\nprogram: {argv: [/bin/true], elastic: maybe}\n",
	    1, 2, 39, "program.elastic: expected true or false, got 'maybe'");
}

int
main(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test_teardown(t_fixed, reset),
		cmocka_unit_test_teardown(t_elastic, reset),
		cmocka_unit_test_teardown(t_errors, reset),
		cmocka_unit_test_teardown(t_program, reset),
	};

	return cmocka_run_group_tests(t, NULL, NULL);
}
