/*
 * sim-app.c: application models for `hunter sim` (sim.h): a directory
 * of folders, one an application, each holding
 *
 *   app.conf        "key value" lines: batch, micro_max, samples
 *                   (required), batch_max (default batch); # comments
 *   steps.csv       nodes,ranks,micro,accum,step_ms,exchange_ms: measured
 *                   steps, fitted by goodput_fit
 *   efficiency.csv  progress,noise_scale (optional): the gradient noise
 *                   scale at fractions of the work, read linearly between
 *                   points and flat past the ends
 *
 * (docs/scheduling.md, Application models).  Every error names the file
 * and the line.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/errf.h"
#include "lib/xmalloc.h"
#include "cmd/sim.h"

#define APP_LINE	512
#define APP_MAX_ROWS	4096

/* The numbers of one CSV line into v (at most max); how many, or -1 for
 * something that is not a number. */
static int
app_numbers(char *line, double *v, int max)
{
	int	 n = 0;

	for (char *tok = strtok(line, ","); tok != NULL;
	    tok = strtok(NULL, ",")) {
		char	*end;

		if (n == max)
			return -1;
		errno = 0;
		v[n] = strtod(tok, &end);
		while (*end == ' ' || *end == '\r' || *end == '\n')
			end++;
		if (end == tok || *end != '\0' || errno != 0 || !isfinite(v[n]))
			return -1;
		n++;
	}
	return n;
}

/*
 * Read a CSV of cols numbers a row after a header that must be want:
 * rows into *out (allocated, cols a row).  Returns the row count, or -1.
 * A missing file is 0 rows when optional.
 */
static int
app_csv(const char *path, const char *want, int cols, bool optional,
    double **out, char *err, size_t errlen)
{
	FILE	*f = fopen(path, "r");
	char	 line[APP_LINE];
	int	 n = 0, no = 0;

	*out = NULL;
	if (f == NULL) {
		if (optional && errno == ENOENT)
			return 0;
		return (errf(err, errlen, "%s: %s", path, strerror(errno)), -1);
	}
	if (fgets(line, sizeof line, f) == NULL ||
	    strncmp(line, want, strlen(want)) != 0) {
		fclose(f);
		return (errf(err, errlen, "%s:1: the header must be %s", path,
		    want), -1);
	}
	*out = xcalloc(APP_MAX_ROWS, (size_t)cols * sizeof **out);
	for (no = 2; fgets(line, sizeof line, f) != NULL; no++) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (n == APP_MAX_ROWS || app_numbers(line, *out + (size_t)n *
		    cols, cols) != cols) {
			fclose(f);
			free(*out);
			*out = NULL;
			return (errf(err, errlen, "%s:%d: %s", path, no,
			    n == APP_MAX_ROWS ? "too many rows" :
			    "expected a row of numbers like the header's"), -1);
		}
		n++;
	}
	fclose(f);
	if (n == 0 && !optional) {
		free(*out);
		*out = NULL;
		return (errf(err, errlen, "%s: no rows", path), -1);
	}
	return n;
}

/* app.conf: the keys into a. */
static int
app_conf(const char *path, struct sim_app *a, char *err, size_t errlen)
{
	FILE	*f = fopen(path, "r");
	char	 line[APP_LINE], key[64];
	double	 v;
	int	 no = 0;

	if (f == NULL)
		return (errf(err, errlen, "%s: %s", path, strerror(errno)), -1);
	a->batch = a->batch_max = a->micro_max = 0;
	a->samples = 0;
	while (fgets(line, sizeof line, f) != NULL) {
		no++;
		if (line[strspn(line, " \t")] == '#' ||
		    line[strspn(line, " \t\r\n")] == '\0')
			continue;
		if (sscanf(line, "%63s %lf", key, &v) != 2 || !isfinite(v) ||
		    v <= 0 || v > 1e15) {
			fclose(f);
			return (errf(err, errlen, "%s:%d: expected 'key value' "
			    "with a value > 0", path, no), -1);
		}
		if (strcmp(key, "batch") == 0)
			a->batch = (int)v;
		else if (strcmp(key, "batch_max") == 0)
			a->batch_max = (int)v;
		else if (strcmp(key, "micro_max") == 0)
			a->micro_max = (int)v;
		else if (strcmp(key, "samples") == 0)
			a->samples = v;
		else {
			fclose(f);
			return (errf(err, errlen, "%s:%d: unknown key '%s' "
			    "(known: batch, batch_max, micro_max, samples)", path,
			    no, key), -1);
		}
	}
	fclose(f);
	if (a->batch_max == 0)
		a->batch_max = a->batch;
	if (a->batch < 1 || a->micro_max < 1 || a->samples <= 0 ||
	    a->batch_max < a->batch)
		return (errf(err, errlen, "%s: batch, micro_max and samples are "
		    "needed, and batch_max >= batch", path), -1);
	return 0;
}

static int
app_load(const char *dir, const char *name, struct sim_app *a, char *err,
    size_t errlen)
{
	char	 path[4096];
	double	*rows;
	struct goodput_obs *obs;
	int	 n, rc;

	memset(a, 0, sizeof *a);
	snprintf(a->name, sizeof a->name, "%s", name);
	snprintf(path, sizeof path, "%s/%s/app.conf", dir, name);
	if (app_conf(path, a, err, errlen) != 0)
		return -1;
	snprintf(path, sizeof path, "%s/%s/steps.csv", dir, name);
	if ((n = app_csv(path, "nodes,ranks,micro,accum,step_ms,exchange_ms", 6,
	    false, &rows, err, errlen)) < 0)
		return -1;
	obs = xcalloc((size_t)n, sizeof *obs);
	for (int i = 0; i < n; i++) {
		double	*r = rows + 6 * i;

		obs[i] = (struct goodput_obs){ (int)r[0], (int)r[1], (int)r[2],
		    (int)r[3], r[4] / 1e3, r[5] / 1e3 };
	}
	free(rows);
	rc = goodput_fit(obs, n, &a->model, err, errlen);
	free(obs);
	if (rc != 0) {
		char	 why[512];

		snprintf(why, sizeof why, "%s", err);
		return (errf(err, errlen, "%s: %s", path, why), -1);
	}
	snprintf(path, sizeof path, "%s/%s/efficiency.csv", dir, name);
	if ((n = app_csv(path, "progress,noise_scale", 2, true, &rows, err,
	    errlen)) < 0)
		return -1;
	a->ncurve = n;
	a->progress = xcalloc((size_t)n + 1, sizeof *a->progress);
	a->noise = xcalloc((size_t)n + 1, sizeof *a->noise);
	for (int i = 0; i < n; i++) {
		a->progress[i] = rows[2 * i];
		a->noise[i] = rows[2 * i + 1];
		if (a->noise[i] < 0 || a->progress[i] < 0 ||
		    a->progress[i] > 1 ||
		    (i > 0 && a->progress[i] <= a->progress[i - 1])) {
			free(rows);
			return (errf(err, errlen, "%s: progress must rise "
			    "within [0, 1] and the noise scale be >= 0", path), -1);
		}
	}
	free(rows);
	return 0;
}

static int
app_name_cmp(const void *a, const void *b)
{
	return strcmp(((const struct sim_app *)a)->name,
	    ((const struct sim_app *)b)->name);
}

int
sim_apps_load(const char *dir, struct sim_apps *apps, char *err, size_t errlen)
{
	DIR	*d = opendir(dir);
	struct dirent *e;
	int	 cap = 0;

	memset(apps, 0, sizeof *apps);
	if (d == NULL)
		return (errf(err, errlen, "%s: %s", dir, strerror(errno)), -1);
	while ((e = readdir(d)) != NULL) {
		char	 conf[4096];
		FILE	*f;

		if (e->d_name[0] == '.' || strlen(e->d_name) >= SIM_NAME_MAX)
			continue;
		snprintf(conf, sizeof conf, "%s/%s/app.conf", dir, e->d_name);
		if ((f = fopen(conf, "r")) == NULL)
			continue;	/* not a model: a script, a README */
		fclose(f);
		if (apps->n == cap) {
			cap = cap ? 2 * cap : 8;
			apps->v = xreallocarray(apps->v, (size_t)cap,
			    sizeof *apps->v);
		}
		if (app_load(dir, e->d_name, &apps->v[apps->n], err,
		    errlen) != 0) {
			apps->n++;
			closedir(d);
			sim_apps_free(apps);
			return -1;
		}
		apps->n++;
	}
	closedir(d);
	if (apps->n == 0)
		return (errf(err, errlen, "%s: no application models (folders "
		    "with an app.conf)", dir), -1);
	qsort(apps->v, (size_t)apps->n, sizeof *apps->v, app_name_cmp);
	return 0;
}

void
sim_apps_free(struct sim_apps *apps)
{
	for (int i = 0; i < apps->n; i++) {
		free(apps->v[i].progress);
		free(apps->v[i].noise);
	}
	free(apps->v);
	memset(apps, 0, sizeof *apps);
}

const struct sim_app *
sim_app_find(const struct sim_apps *apps, const char *name)
{
	for (int i = 0; i < apps->n; i++) {
		if (strcmp(apps->v[i].name, name) == 0)
			return &apps->v[i];
	}
	return NULL;
}

double
sim_app_noise(const struct sim_app *a, double p)
{
	int	 i;

	if (a->ncurve == 0)
		return -1;
	if (p <= a->progress[0])
		return a->noise[0];
	for (i = 1; i < a->ncurve && a->progress[i] < p; i++)
		;
	if (i == a->ncurve)
		return a->noise[a->ncurve - 1];
	return a->noise[i - 1] + (a->noise[i] - a->noise[i - 1]) *
	    (p - a->progress[i - 1]) / (a->progress[i] - a->progress[i - 1]);
}
