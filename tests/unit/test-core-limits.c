/*
 * test-core-limits.c: the bounds of the backend's store and journal
 * (issue 21): a store scope per run and generation, dropped whole; the
 * timeout, key, byte and parked-get bounds; a dead rank's parked gets;
 * the journal's batched fsyncs, in order, and its rotation; a short
 * write of the journal and of the series cut back to whole records,
 * reported once each way (issue 27).
 * Run from test-core.c's main.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "backend/core/journal.h"
#include "backend/core/series-file.h"
#include "backend/core/store.h"

int	test_core_limits(void);

struct answers {
	int	 n, errors, values;
	char	 last[256];
};

static void
count(void *ctx, int link, json_t *reply)
{
	struct answers	*a = ctx;
	const char	*op = json_string_value(json_object_get(reply, "op"));

	(void)link;
	a->n++;
	if (strcmp(op, "error") == 0) {
		a->errors++;
		snprintf(a->last, sizeof a->last, "%s", json_string_value(
		    json_object_get(reply, "reason")));
	} else
		a->values++;
	json_decref(reply);
}

static void
req(struct store *s, const char *scope, const char *op, const char *key,
    const char *value, int rank, double timeout_ms, double now)
{
	json_t	*m = json_pack("{s:s, s:s, s:s, s:s, s:i, s:i, s:f}", "t",
	    "store", "op", op, "key", key, "job", "j", "rank", rank, "req", 1,
	    "timeout_ms", timeout_ms);

	if (value != NULL)
		json_object_set_new(m, "value", json_string(value));
	store_handle(s, 0, scope, m, now);
	json_decref(m);
}

/* A job name run twice: the second run's get does not see the first's
 * value, and a generation's end takes its keys and parked gets. */
static void
t_store_scopes(void **state)
{
	struct answers	 a = { 0 };
	struct store	*s = store_create(count, &a);

	(void)state;
	req(s, "100.g0", "set", "j/g0/peer", "QUJD", 0, 0, 0);
	req(s, "200.g0", "get", "j/g0/peer", NULL, 0, 1000, 0);
	assert_int_equal(a.n, 0);		/* parked: not run 100's */
	req(s, "100.g0", "get", "j/g0/peer", NULL, 1, 1000, 0);
	assert_int_equal(a.values, 1);
	store_drop_scope(s, "100.g0");
	assert_int_equal(store_size(s), 0);
	assert_int_equal(store_parked(s), 1);	/* run 200's get waits on */
	req(s, "200.g0", "set", "j/g0/peer", "REVG", 1, 0, 0.1);
	assert_int_equal(a.values, 2);
	req(s, "200.g0", "get", "j/g0/other", NULL, 0, 1000, 0.2);
	store_drop_scope(s, "200.g0");
	assert_int_equal(store_parked(s), 0);
	assert_int_equal(store_size(s), 0);
	store_tick(s, 100);
	assert_int_equal(a.errors, 0);		/* dropped, not answered */
	store_free(s);
}

static void
t_store_bounds(void **state)
{
	struct answers	 a = { 0 };
	struct store	*s = store_create(count, &a);
	char		 key[64], *big;
	size_t		 vlen = (1u << 20) - 16;

	(void)state;
	/* 1e300 ms: capped at STORE_MAX_TIMEOUT_MS. */
	req(s, "1.g0", "get", "never", NULL, 3, 1e300, 0);
	store_tick(s, STORE_MAX_TIMEOUT_MS / 1000.0 - 1);
	assert_int_equal(a.n, 0);
	store_tick(s, STORE_MAX_TIMEOUT_MS / 1000.0 + 1);
	assert_int_equal(a.errors, 1);
	assert_string_equal(a.last, "timed out waiting for the key");
	/* A dead rank's parked gets go; the others stay. */
	req(s, "1.g0", "get", "k1", NULL, 3, 1000, 0);
	req(s, "1.g0", "get", "k2", NULL, 4, 1000, 0);
	store_drop_rank(s, "1.g0", 3);
	assert_int_equal(store_parked(s), 1);
	store_drop_scope(s, "1.g0");
	/* Parked gets of a scope. */
	for (int i = 0; i <= STORE_SCOPE_PARKED; i++) {
		snprintf(key, sizeof key, "p%d", i);
		req(s, "2.g0", "get", key, NULL, 0, 1000, 0);
	}
	assert_int_equal(store_parked(s), STORE_SCOPE_PARKED);
	assert_int_equal(a.errors, 2);
	assert_non_null(strstr(a.last, "store busy"));
	/* ... and another scope is not held up by it. */
	req(s, "3.g0", "get", "p0", NULL, 0, 1000, 0);
	assert_int_equal(store_parked(s), STORE_SCOPE_PARKED + 1);
	store_drop_scope(s, "2.g0");
	store_drop_scope(s, "3.g0");
	/* Keys of a scope. */
	for (int i = 0; i <= STORE_SCOPE_KEYS; i++) {
		snprintf(key, sizeof key, "k%d", i);
		req(s, "4.g0", "set", key, "QQ==", 0, 0, 0);
	}
	assert_int_equal(store_size(s), STORE_SCOPE_KEYS);
	assert_int_equal(a.errors, 3);
	assert_non_null(strstr(a.last, "store full"));
	req(s, "4.g0", "set", "k0", "QkI=", 0, 0, 0);	/* a replace fits */
	assert_int_equal(a.errors, 3);
	store_drop_scope(s, "4.g0");
	/* Bytes of a scope. */
	big = malloc(vlen + 1);
	memset(big, 'A', vlen);
	big[vlen] = '\0';
	for (unsigned i = 0; i <= STORE_SCOPE_BYTES / vlen; i++) {
		snprintf(key, sizeof key, "b%u", i);
		req(s, "5.g0", "set", key, big, 0, 0, 0);
	}
	assert_int_equal(a.errors, 4);
	assert_non_null(strstr(a.last, "store full"));
	free(big);
	/* A key too long. */
	memset(key, 'x', sizeof key);
	{
		char long_key[STORE_MAX_KEY + 2];

		memset(long_key, 'x', sizeof long_key - 1);
		long_key[sizeof long_key - 1] = '\0';
		req(s, "6.g0", "set", long_key, "QQ==", 0, 0, 0);
		assert_int_equal(a.errors, 5);
		assert_non_null(strstr(a.last, "store key over"));
	}
	store_free(s);
}

static void
count_line(void *ctx, json_t *rec)
{
	int	*n = ctx;

	assert_int_equal(json_integer_value(json_object_get(rec, "i")), *n);
	(*n)++;
}

static void
append(struct journal *j, int i, int lazy)
{
	json_t	*o = json_pack("{s:s, s:i}", "t", "x", "i", i);

	assert_int_equal(lazy ? journal_append_lazy(j, o) :
	    journal_append(j, o), 0);
	json_decref(o);
}

/* A thousand lazy records cost no fsync until the tick or a durable one;
 * order is kept; a full file rotates to PATH.1 and a new one starts. */
static void
t_journal_batch_rotate(void **state)
{
	char		 dir[] = "/tmp/hunter-test-journal.XXXXXX", path[256];
	char		 old[300], err[512] = "", cmd[300];
	struct journal	*j;
	int		 n = 0, bad;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/journal.jsonl", dir);
	snprintf(old, sizeof old, "%s.1", path);
	assert_non_null(j = journal_open(path, err, sizeof err));
	assert_int_equal(journal_append(j, NULL), -1);	/* a failed pack */
	for (int i = 0; i < 1000; i++)
		append(j, i, 1);
	assert_int_equal(journal_syncs(j), 0);
	assert_int_equal(journal_tick(j, 0), 0);	/* not a second old */
	assert_int_equal(journal_syncs(j), 0);
	append(j, 1000, 0);				/* durable: one fsync */
	assert_int_equal(journal_syncs(j), 1);
	append(j, 1001, 1);
	journal_tick(j, 1e9);
	assert_int_equal(journal_syncs(j), 2);
	assert_int_equal(journal_replay(path, count_line, &n, &bad, err,
	    sizeof err), 1002);
	assert_false(journal_rotate_due(j));
	journal_set_limit(j, 4096);
	assert_true(journal_rotate_due(j));
	assert_int_equal(journal_rotate(j, err, sizeof err), 0);
	assert_false(journal_rotate_due(j));
	n = 0;
	assert_int_equal(journal_replay(old, count_line, &n, &bad, err,
	    sizeof err), 1002);
	n = 0;
	append(j, 0, 0);
	append(j, 1, 1);
	journal_close(j);
	assert_int_equal(journal_replay(path, count_line, &n, &bad, err,
	    sizeof err), 2);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

struct trouble {
	int	 n;
	char	 last[512];
};

static void
on_trouble(void *ctx, const char *what)
{
	struct trouble	*t = ctx;

	t->n++;
	snprintf(t->last, sizeof t->last, "%s", what);
}

/* The file-size limit (soft) of this process; RLIM_INFINITY lifts it. */
static void
fsize_limit(rlim_t n)
{
	struct rlimit	 rl;

	assert_int_equal(getrlimit(RLIMIT_FSIZE, &rl), 0);
	rl.rlim_cur = n;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &rl), 0);
}

static void
count_any(void *ctx, json_t *rec)
{
	(void)rec;
	(*(int *)ctx)++;
}

/* Records past a file-size limit fail whole: the file keeps whole lines,
 * the failure and the recovery are told once each, and the records after
 * the recovery are there.  The series does the same, and a line a crash
 * cut short is dropped when the file is opened again. */
static void
t_short_writes(void **state)
{
	char		 dir[] = "/tmp/hunter-test-short.XXXXXX", path[256];
	char		 err[512] = "", cmd[300], spath[300];
	struct trouble	 tr = { 0 };
	struct journal	*j;
	struct job_series *s;
	struct stat	 st;
	json_t		*big;
	FILE		*f;
	int		 n = 0, bad;

	(void)state;
	signal(SIGXFSZ, SIG_IGN);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/journal.jsonl", dir);
	assert_non_null(j = journal_open(path, err, sizeof err));
	journal_on_trouble(j, on_trouble, &tr);
	append(j, 0, 0);
	assert_int_equal(stat(path, &st), 0);
	fsize_limit((rlim_t)st.st_size + 10);
	big = json_pack("{s:s, s:s}", "t", "x", "pad", "0123456789012345678901234567890123456789");
	assert_int_equal(journal_append_lazy(j, big), -1);	/* short */
	assert_int_equal(journal_append(j, big), -1);		/* refused */
	json_decref(big);
	assert_int_equal(tr.n, 1);
	assert_non_null(strstr(tr.last, "a record was not written (File too "
	    "large)"));
	assert_int_equal(stat(path, &st), 0);
	fsize_limit(RLIM_INFINITY);
	append(j, 1, 0);
	assert_int_equal(tr.n, 2);
	assert_non_null(strstr(tr.last, "writing again; 2 records were lost"));
	journal_close(j);
	n = 0;
	assert_int_equal(journal_replay(path, count_line, &n, &bad, err,
	    sizeof err), 2);
	assert_int_equal(bad, 0);

	assert_non_null(s = series_file_open(dir, "sj", 1, true, err,
	    sizeof err));
	series_file_close(s);
	series_file_path(dir, "sj", spath, sizeof spath);
	assert_int_equal(stat(spath, &st), 0);
	fsize_limit((rlim_t)st.st_size + 10);
	assert_non_null(s = series_file_open(dir, "sj", 1, false, err,
	    sizeof err));
	big = json_pack("{s:s, s:i, s:s}", "t", "epoch", "epoch", 1, "pad",
	    "0123456789012345678901234567890123456789");
	series_file_append(s, big);
	fsize_limit(RLIM_INFINITY);
	series_file_append(s, big);
	series_file_close(s);
	assert_non_null(f = fopen(spath, "a"));		/* a crash mid-line */
	fputs("{\"t\":\"epoch\",\"ep", f);
	fclose(f);
	assert_non_null(s = series_file_open(dir, "sj", 1, false, err,
	    sizeof err));
	series_file_append(s, big);
	series_file_close(s);
	json_decref(big);
	n = 0;
	assert_int_equal(journal_replay(spath, count_any, &n, &bad, err,
	    sizeof err), 3);		/* the header and two epochs */
	assert_int_equal(bad, 0);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

int
test_core_limits(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_store_scopes),
		cmocka_unit_test(t_store_bounds),
		cmocka_unit_test(t_journal_batch_rotate),
		cmocka_unit_test(t_short_writes),
	};
	return cmocka_run_group_tests_name("store and journal bounds", tests,
	    NULL, NULL);
}
