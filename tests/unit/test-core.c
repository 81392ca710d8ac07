/*
 * test-core.c: the backend's store and journal, and the UTF-8 cut that
 * the backend's reasons go through.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/utf8.h"
#include "backend/core/journal.h"
#include "backend/core/store.h"

struct replies {
	json_t	*v[16];
	int	 link[16];
	int	 n;
};

static void
collect(void *ctx, int link, json_t *reply)
{
	struct replies *r = ctx;

	assert_true(r->n < 16);
	r->link[r->n] = link;
	r->v[r->n++] = reply;
}

static void
replies_free(struct replies *r)
{
	for (int i = 0; i < r->n; i++)
		json_decref(r->v[i]);
	r->n = 0;
}

static json_t *
get(const char *key, int req, int timeout_ms)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:i, s:i, s:i}", "t", "store",
	    "op", "get", "key", key, "job", "j", "rank", 1, "req", req,
	    "timeout_ms", timeout_ms);
}

static void
t_store_park_and_wake(void **state)
{
	struct replies	 r = { 0 };
	struct store	*s = store_create(collect, &r);
	json_t		*m;

	(void)state;
	m = get("j/g0/a", 7, 1000);
	store_handle(s, 3, "1.g0", m, 0.0);
	json_decref(m);
	assert_int_equal(r.n, 0);		/* parked */
	m = json_pack("{s:s, s:s, s:s, s:s}", "t", "store", "op", "set",
	    "key", "j/g0/a", "value", "QUJD");
	store_handle(s, 5, "1.g0", m, 0.1);
	json_decref(m);
	assert_int_equal(r.n, 1);		/* woken, answered on link 3 */
	assert_int_equal(r.link[0], 3);
	assert_string_equal(json_string_value(json_object_get(r.v[0], "op")), "value");
	assert_string_equal(json_string_value(json_object_get(r.v[0], "value")), "QUJD");
	assert_int_equal(json_integer_value(json_object_get(r.v[0], "req")), 7);
	assert_int_equal(json_integer_value(json_object_get(r.v[0], "rank")), 1);
	/* A second get is answered at once. */
	m = get("j/g0/a", 8, 1000);
	store_handle(s, 4, "1.g0", m, 0.2);
	json_decref(m);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.link[1], 4);
	assert_int_equal(store_size(s), 1);
	replies_free(&r);
	store_free(s);
}

static void
t_store_timeout_and_drop(void **state)
{
	struct replies	 r = { 0 };
	struct store	*s = store_create(collect, &r);
	json_t		*m;

	(void)state;
	m = get("missing", 1, 500);
	store_handle(s, 1, "1.g0", m, 10.0);
	json_decref(m);
	m = get("other", 2, 500);
	store_handle(s, 2, "1.g0", m, 10.0);
	json_decref(m);
	store_tick(s, 10.4);
	assert_int_equal(r.n, 0);
	store_drop_link(s, 2);			/* link 2 went away */
	store_tick(s, 10.6);
	assert_int_equal(r.n, 1);		/* only link 1's get times out */
	assert_int_equal(r.link[0], 1);
	assert_string_equal(json_string_value(json_object_get(r.v[0], "op")), "error");
	replies_free(&r);
	m = json_pack("{s:s, s:s}", "t", "store", "op", "set");
	store_handle(s, 1, "1.g0", m, 11.0);		/* no key: an error, not a crash */
	json_decref(m);
	assert_int_equal(r.n, 1);
	assert_string_equal(json_string_value(json_object_get(r.v[0], "op")), "error");
	replies_free(&r);
	store_free(s);
}

static void
count_rec(void *ctx, json_t *rec)
{
	int	*n = ctx;

	assert_non_null(json_object_get(rec, "ts"));
	assert_int_equal(json_integer_value(json_object_get(rec, "i")), *n);
	(*n)++;
}

static void
t_journal_cut_line(void **state)
{
	char		 dir[] = "/tmp/hunter-test-journal.XXXXXX", path[256];
	char		 err[512] = "", cmd[300];
	struct journal	*j;
	int		 n = 0, bad, rc;
	FILE		*f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/journal.jsonl", dir);
	j = journal_open(path, err, sizeof err);
	assert_non_null(j);
	for (int i = 0; i < 3; i++) {
		json_t *o = json_pack("{s:s, s:i}", "t", "x", "i", i);
		assert_int_equal(journal_append(j, o), 0);
		json_decref(o);
	}
	journal_close(j);
	/* A crash mid-write leaves half a record. */
	f = fopen(path, "a");
	fputs("{\"t\":\"x\",\"i\":3,\"tru", f);
	fclose(f);
	rc = journal_replay(path, count_rec, &n, &bad, err, sizeof err);
	assert_int_equal(rc, 3);
	assert_int_equal(n, 3);
	assert_int_equal(bad, 1);
	assert_non_null(strstr(err, ":4: last line is cut short"));
	/* Appending after the cut starts a fresh line; the cut one stays bad. */
	j = journal_open(path, err, sizeof err);
	{
		json_t *o = json_pack("{s:s, s:i}", "t", "x", "i", 3);
		assert_int_equal(journal_append(j, o), 0);
		json_decref(o);
	}
	journal_close(j);
	n = 0;
	rc = journal_replay(path, count_rec, &n, &bad, err, sizeof err);
	assert_int_equal(rc, 4);
	assert_int_equal(bad, 1);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* Cut on a character boundary, stray bytes as '?' (lib/utf8.h): what a
 * reason must be before jansson takes it. */
static void
t_utf8_cut(void **state)
{
	char	 buf[8], text[16];
	json_t	*o;

	(void)state;
	assert_int_equal(utf8_cut("a\xe2\x82\xac", 4, 3), 1);	/* in the euro */
	assert_int_equal(utf8_cut("a\xe2\x82\xac", 4, 4), 4);
	assert_int_equal(utf8_cut("ab\xc3\xa9", 4, 3), 2);
	assert_int_equal(utf8_cut("\xf0\x9f\x98\x80x", 5, 4), 4);
	assert_int_equal(utf8_cut("\xf0\x9f\x98\x80x", 5, 3), 0);
	assert_int_equal(utf8_cut("abc", 3, 10), 3);
	/* What vsnprintf leaves in an 8-byte buffer: the third euro cut. */
	snprintf(buf, sizeof buf, "%s", "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac");
	assert_null(json_pack("{s:s}", "r", buf));	/* what crashed */
	assert_string_equal(utf8_fix(buf, sizeof buf), "\xe2\x82\xac\xe2\x82\xac");
	snprintf(text, sizeof text, "a\xff" "b\xc3(\xed\xa0\x80");
	assert_string_equal(utf8_fix(text, sizeof text), "a?b?(???");
	o = json_pack("{s:s}", "r", text);
	assert_non_null(o);
	json_decref(o);
}

int	test_core_limits(void);

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_store_park_and_wake),
		cmocka_unit_test(t_store_timeout_and_drop),
		cmocka_unit_test(t_journal_cut_line),
		cmocka_unit_test(t_utf8_cut),
	};
	int	 failed = cmocka_run_group_tests(tests, NULL, NULL);

	return failed + test_core_limits();
}
