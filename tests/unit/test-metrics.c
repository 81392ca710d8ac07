/*
 * test-metrics.c: the Prometheus endpoint's parts (lib/inet.c,
 * lib/promtext.c, backend/core/backend-prom.c, spec-config.c), a job's
 * evaluation rows, and the saved series' bound
 * (backend/core/series-file.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/inet.h"
#include "backend/spec/spec.h"
#include "backend/proto/metrics.h"
#include "backend/core/backend.h"
#include "backend/core/backend-sim.h"
#include "backend/core/series-file.h"

static void
t_inet(void **state)
{
	struct inet_addr a;
	char		 err[256], buf[80];

	(void)state;
	static const char *const good[][2] = {
		{ "127.0.0.1:9400", "127.0.0.1:9400" },
		{ ":9400", "127.0.0.1:9400" }, { "9400", "127.0.0.1:9400" },
		{ "localhost:0", "127.0.0.1:0" },
		{ "0.0.0.0:80", "0.0.0.0:80" }, { "[::1]:9400", "[::1]:9400" },
	};
	static const char *const bad[] = { "", "x", "127.0.0.1", "1.2.3:9",
		"127.0.0.1:65536", "127.0.0.1:-1", "[::1]9400", "::1:9400",
		"host.example:9400", "127.0.0.1:94x", "[]:1" };

	for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
		assert_int_equal(inet_parse(good[i][0], &a, err, sizeof err), 0);
		inet_format(&a, buf, sizeof buf);
		assert_string_equal(buf, good[i][1]);
	}
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		assert_int_equal(inet_parse(bad[i], &a, err, sizeof err), -1);
		assert_non_null(strstr(err, "expected ADDR:PORT"));
	}
}

/* A port one listener holds is refused to the next, by name. */
static void
t_inet_in_use(void **state)
{
	struct inet_addr a, b;
	char		 err[256], name[80];
	int		 fd;

	(void)state;
	assert_int_equal(inet_parse("127.0.0.1:0", &a, err, sizeof err), 0);
	assert_true((fd = inet_listen(&a, err, sizeof err)) >= 0);
	inet_format(&a, name, sizeof name);
	assert_int_equal(inet_parse(name, &b, err, sizeof err), 0);
	assert_int_equal(inet_listen(&b, err, sizeof err), -1);
	assert_non_null(strstr(err, name));
	assert_non_null(strstr(err, "in use"));
	close(fd);
}

/* Every exported row of the three tables follows the conventions
 * promtool checks: snake case, _total exactly on counters. */
static void
t_names(void **state)
{
	const struct { const struct metric_field *f; int n; } t[] = {
		{ node_metrics, NM_COUNT }, { gpu_metrics, GM_COUNT },
		{ rank_metrics, RM_COUNT },
	};

	(void)state;
	for (size_t k = 0; k < 3; k++) {
		for (int i = 0; i < t[k].n; i++) {
			const char *p = t[k].f[i].prom;
			size_t	 l;

			if (p == NULL)
				continue;
			l = strlen(p);
			assert_true(l > 0 && strspn(p,
			    "abcdefghijklmnopqrstuvwxyz0123456789_") == l);
			assert_int_equal(t[k].f[i].kind == METRIC_COUNTER,
			    l > 6 && strcmp(p + l - 6, "_total") == 0);
			assert_null(strstr(p, "_ms"));
			assert_true(t[k].f[i].scale > 0);
		}
	}
}

/* The family name of an exposition line ("" for a comment). */
static void
family_of(const char *line, char *buf, size_t len)
{
	size_t	 n = strcspn(line, "{ ");

	if (line[0] == '#') {
		buf[0] = '\0';
		return;
	}
	snprintf(buf, len, "%.*s", (int)n, line);
}

/* The simulator's cluster and job, rendered: each family has one HELP and
 * one TYPE and its samples together; what the simulator leaves unknown
 * (the learning rate, compute time; power on odd nodes; everything on
 * its down node) is absent, not 0. */
static void
t_exposition(void **state)
{
	struct backend	*b = backend_open_sim(8, 2, 1);
	char		*text, *line, *save, prev[128] = "", fam[128];
	char		 seen[256][128];
	int		 nseen = 0, helps = 0, types = 0, down = 0;
	size_t		 len;

	(void)state;
	assert_non_null(b);
	assert_int_equal(backend_sim_start(b, NULL), 0);
	sleep(2);
	backend_lock(b);
	text = backend_metrics_text(b, &len);
	backend_unlock(b);
	backend_close(b);
	assert_int_equal(strlen(text), len);
	assert_non_null(strstr(text, "hunter_node_up{node=\"sim0004\","
	    "rack=\"r02\"} 0\n"));
	assert_non_null(strstr(text, "hunter_node_up{node=\"sim0000\","
	    "rack=\"r01\"} 1\n"));
	/* The down node has its up series and nothing else. */
	for (const char *p = text; (p = strstr(p, "node=\"sim0004\"")) != NULL;
	    p++)
		down++;
	assert_int_equal(down, 1);
	assert_non_null(strstr(text, "hunter_node_power_watts{node=\"sim0000\""));
	assert_null(strstr(text, "hunter_node_power_watts{node=\"sim0001\""));
	assert_non_null(strstr(text, "hunter_rank_step{job=\"sim-train\","
	    "rank=\"0\","));
	assert_non_null(strstr(text, "# TYPE hunter_rank_step gauge\n"));
	assert_non_null(strstr(text, "# TYPE hunter_job_failovers_total "
	    "counter\n"));
	assert_non_null(strstr(text, "hunter_job_state{job=\"sim-train\","
	    "state=\"running\"} 1\n"));
	assert_null(strstr(text, "hunter_rank_learning_rate{"));
	assert_null(strstr(text, "hunter_rank_compute_seconds{"));
	assert_null(strstr(text, "hunter_rank_step_ms"));
	for (line = strtok_r(text, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		helps += strncmp(line, "# HELP ", 7) == 0;
		types += strncmp(line, "# TYPE ", 7) == 0;
		family_of(line, fam, sizeof fam);
		if (fam[0] == '\0' || strcmp(fam, prev) == 0)
			continue;
		for (int i = 0; i < nseen; i++)
			assert_string_not_equal(seen[i], fam);	/* split */
		assert_true(nseen < 256);
		snprintf(seen[nseen++], sizeof seen[0], "%s", fam);
		snprintf(prev, sizeof prev, "%s", fam);
	}
	assert_int_equal(helps, nseen);
	assert_int_equal(types, nseen);
	assert_true(nseen > 20);
	free(text);
}

/* A job's last evaluation: the newest of its last eval, its last epoch
 * and its summary that says it; a stopped job's summary, which says
 * none, leaves the last eval's. */
static void
t_eval_rows(void **state)
{
	struct backend	*b = backend_open_sim(4, 1, 1);
	struct job_state *j;
	char		*text;
	size_t		 len;

	(void)state;
	assert_non_null(b);
	assert_int_equal(backend_sim_start(b, NULL), 0);
	backend_lock(b);
	j = backend_job(b, "sim-train");
	assert_non_null(j);
	text = backend_metrics_text(b, &len);
	assert_null(strstr(text, "hunter_job_validation_loss"));
	free(text);
	json_decref(j->evals);
	j->evals = json_pack("[{s:I, s:f, s:f}, {s:I, s:f, s:f}]", "step",
	    (json_int_t)50, "val_loss", 3.0, "perplexity", 20.0, "step",
	    (json_int_t)100, "val_loss", 2.5, "perplexity", 12.25);
	text = backend_metrics_text(b, &len);
	assert_non_null(strstr(text, "# TYPE hunter_job_validation_loss "
	    "gauge\nhunter_job_validation_loss{job=\"sim-train\"} 2.5\n"));
	assert_non_null(strstr(text, "hunter_job_validation_perplexity{"
	    "job=\"sim-train\"} 12.25\n"));
	free(text);
	memset(&j->sum, 0, sizeof j->sum);
	snprintf(j->sum.state, sizeof j->sum.state, "stopped");
	j->sum.have = (uint64_t)1 << SUMMARY_F_state;
	text = backend_metrics_text(b, &len);
	assert_non_null(strstr(text, "hunter_job_validation_loss{"
	    "job=\"sim-train\"} 2.5\n"));
	free(text);
	SUMMARY_SET(&j->sum, val_loss, 2.25);
	text = backend_metrics_text(b, &len);
	assert_non_null(strstr(text, "hunter_job_validation_loss{"
	    "job=\"sim-train\"} 2.25\n"));
	free(text);
	backend_unlock(b);
	backend_close(b);
}

static void
t_config(void **state)
{
	char		 dir[] = "/tmp/hunter-cfg.XXXXXX", path[256];
	struct user_config uc;
	struct spec_errors errs = { 0 };
	FILE		*f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/hunter", dir);
	mkdir(path, 0700);
	snprintf(path, sizeof path, "%s/hunter/config.yaml", dir);
	setenv("XDG_CONFIG_HOME", dir, 1);
	f = fopen(path, "w");
	fputs("theme: dark\nmetrics: {listen: 0.0.0.0:9400}\n", f);
	fclose(f);
	spec_load_config(&uc, &errs);
	assert_int_equal(errs.n, 0);
	assert_string_equal(uc.theme, "dark");
	assert_string_equal(uc.metrics_listen, "0.0.0.0:9400");
	assert_string_equal(spec_config_metrics("1.2.3.4:5", &uc, stderr),
	    "1.2.3.4:5");
	f = fopen(path, "w");
	fputs("metrics:\n  listen: nine\n  port: 3\n", f);
	fclose(f);
	spec_load_config(&uc, &errs);
	assert_int_equal(errs.n, 2);
	assert_int_equal(errs.v[0].line, 3);		/* the unknown key */
	assert_int_equal(errs.v[1].line, 2);
	assert_int_equal(errs.v[1].col, 11);
	assert_non_null(strstr(errs.v[1].msg, "expected ADDR:PORT"));
	assert_string_equal(uc.metrics_listen, "");
	spec_errors_free(&errs);
	unlink(path);
	snprintf(path, sizeof path, "%s/hunter", dir);
	rmdir(path);
	rmdir(dir);
	unsetenv("XDG_CONFIG_HOME");
}

/* Far past its bound the file stays within it, keeps every rank, the
 * header and the epochs, and spans the whole run. */
static void
t_series_bound(void **state)
{
	char		 dir[] = "/tmp/hunter-series.XXXXXX", path[512], err[256];
	struct job_series *s;
	struct stat	 st;
	long		 ranks[2] = { 0 }, first = -1, last = -1, epochs = 0;
	char		*line = NULL;
	size_t		 cap = 0;
	FILE		*f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_non_null(s = series_file_open(dir, "big", 42, true, err,
	    sizeof err));
	for (long step = 1; step <= 40000; step++) {
		for (int r = 0; r < 2; r++) {
			json_t *m = json_pack("{s:s, s:s, s:s, s:i, s:I, s:f, "
			    "s:f, s:f, s:f, s:f, s:s}", "t", "metrics", "scope",
			    "rank", "job", "big", "rank", r, "step",
			    (json_int_t)step, "loss", 1.0 / step, "step_ms", 4.5,
			    "compute_ms", 1.0, "comm_ms", 3.0, "samples_per_s",
			    7000.0, "node", "local0");

			series_file_append(s, m);
			json_decref(m);
		}
		if (step % 4000 == 0) {
			json_t *e = json_pack("{s:s, s:s, s:I}", "t", "epoch",
			    "job", "big", "step", (json_int_t)step);

			series_file_append(s, e);
			json_decref(e);
		}
	}
	series_file_close(s);
	series_file_path(dir, "big", path, sizeof path);
	assert_int_equal(stat(path, &st), 0);
	assert_true(st.st_size <= SERIES_FILE_MAX);
	assert_true(st.st_size > SERIES_FILE_MAX / 4);
	f = fopen(path, "r");
	assert_true(getline(&line, &cap, f) > 0);
	assert_non_null(strstr(line, "\"t\":\"series\""));
	assert_non_null(strstr(line, "\"run\":42"));
	while (getline(&line, &cap, f) > 0) {
		json_t	*o = json_loads(line, 0, NULL);
		const char *t = json_string_value(json_object_get(o, "t"));

		assert_non_null(o);
		assert_null(json_object_get(o, "job"));
		if (strcmp(t, "epoch") == 0)
			epochs++;
		else {
			long st = (long)json_integer_value(json_object_get(o,
			    "step"));

			ranks[json_integer_value(json_object_get(o, "rank"))]++;
			if (first < 0)
				first = st;
			last = st;
		}
		json_decref(o);
	}
	fclose(f);
	free(line);
	assert_int_equal(epochs, 10);
	assert_true(ranks[0] > 1000 && ranks[1] > 1000);
	assert_true(labs(ranks[0] - ranks[1]) <= 1);
	assert_int_equal(first, 1);
	assert_true(last > 39000);
	unlink(path);
	snprintf(path, sizeof path, "%s/series", dir);
	rmdir(path);
	rmdir(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_inet),
		cmocka_unit_test(t_inet_in_use),
		cmocka_unit_test(t_names),
		cmocka_unit_test(t_exposition),
		cmocka_unit_test(t_eval_rows),
		cmocka_unit_test(t_config),
		cmocka_unit_test(t_series_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
