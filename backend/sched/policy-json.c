/*
 * policy-json.c: requests and replies of the policy protocol as JSON
 * lines (policy-json.h).  A line is measured before it is parsed: its
 * objects and arrays are counted outside strings, so a request of a
 * million jobs is refused before jansson builds it.  Then every field is
 * read with its type checked and the request's own rules are
 * policy_check's; each message names the field, the job or the node.
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lib/errf.h"
#include "lib/xmalloc.h"
#include "backend/sched/policy-json.h"

/* The objects a request may hold: the top, the current map, a node or a
 * job each. */
#define JSON_MAX_OBJECTS	(POLICY_MAX_NODES + POLICY_MAX_JOBS + 2)

/* Count the objects and arrays of a line outside its strings. */
static int
json_measure(const char *s, size_t len, char *err, size_t errlen)
{
	size_t	 objects = 0, arrays = 0;
	bool	 str = false, esc = false;

	for (size_t i = 0; i < len; i++) {
		char	 c = s[i];

		if (str) {
			if (esc)
				esc = false;
			else if (c == '\\')
				esc = true;
			else if (c == '"')
				str = false;
			continue;
		}
		str = c == '"';
		objects += c == '{';
		arrays += c == '[';
	}
	if (objects > JSON_MAX_OBJECTS)
		return (errf(err, errlen, "the request holds %zu objects; at most "
		    "%d nodes and %d jobs are served", objects, POLICY_MAX_NODES,
		    POLICY_MAX_JOBS), -1);
	if (arrays > POLICY_MAX_ARRAYS)
		return (errf(err, errlen, "the request holds %zu arrays; at most "
		    "%d (speedup rows included) are served", arrays,
		    POLICY_MAX_ARRAYS), -1);
	return 0;
}

/* An optional number field: 0 with *v set (def when absent), or -1. */
static int
get_num(json_t *o, const char *key, double def, double *v, const char *where,
    char *err, size_t errlen)
{
	json_t	*x = json_object_get(o, key);

	*v = def;
	if (x == NULL)
		return 0;
	if (!json_is_number(x))
		return (errf(err, errlen, "%s%s: must be a number", where, key), -1);
	*v = json_number_value(x);
	return 0;
}

/* An optional integer field within int. */
static int
get_int(json_t *o, const char *key, int def, int *v, const char *where,
    char *err, size_t errlen)
{
	json_t	*x = json_object_get(o, key);
	json_int_t i;

	*v = def;
	if (x == NULL)
		return 0;
	if (!json_is_integer(x))
		return (errf(err, errlen, "%s%s: must be an integer", where, key), -1);
	i = json_integer_value(x);
	if (i < INT_MIN || i > INT_MAX)
		return (errf(err, errlen, "%s%s: %lld is out of range", where, key,
		    (long long)i), -1);
	*v = (int)i;
	return 0;
}

static const char *
get_str(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

struct name_ix {
	const char	*name;
	int		 i;
};

static int
name_ix_cmp(const void *a, const void *b)
{
	return strcmp(((const struct name_ix *)a)->name,
	    ((const struct name_ix *)b)->name);
}

static int
name_find(const struct name_ix *v, int n, const char *name)
{
	struct name_ix	 key = { name, 0 };
	const struct name_ix *hit = bsearch(&key, v, (size_t)n, sizeof *v,
	    name_ix_cmp);

	return hit != NULL ? hit->i : -1;
}

static int
read_nodes(struct policy_doc *d, json_t *arr, struct name_ix **ix, char *err,
    size_t errlen)
{
	size_t	 n = json_array_size(arr);
	struct name_ix *racks;
	char	 where[64];

	if (!json_is_array(arr))
		return (errf(err, errlen, "nodes: must be an array"), -1);
	d->nodes = xcalloc(n + 1, sizeof *d->nodes);
	d->racks = xcalloc(n + 1, sizeof *d->racks);
	racks = xcalloc(n + 1, sizeof *racks);
	*ix = xcalloc(n + 1, sizeof **ix);
	for (size_t i = 0; i < n; i++) {
		json_t	*o = json_array_get(arr, i);
		const char *rack;

		snprintf(where, sizeof where, "nodes[%zu].", i);
		if (!json_is_object(o)) {
			free(racks);
			return (errf(err, errlen, "nodes[%zu]: must be an object",
			    i), -1);
		}
		d->nodes[i].name = get_str(o, "name");
		rack = json_object_get(o, "rack") == NULL ? "default" :
		    get_str(o, "rack");
		if (d->nodes[i].name == NULL || rack == NULL ||
		    !json_is_integer(json_object_get(o, "slots"))) {
			free(racks);
			return (errf(err, errlen, "nodes[%zu]: name (a string), "
			    "slots (an integer) and rack (a string) are needed",
			    i), -1);
		}
		if (get_int(o, "slots", 0, &d->nodes[i].slots, where, err,
		    errlen) != 0) {
			free(racks);
			return -1;
		}
		racks[i] = (struct name_ix){ rack, (int)i };
		(*ix)[i] = (struct name_ix){ d->nodes[i].name, (int)i };
	}
	/* Racks are numbered in name order. */
	qsort(racks, n, sizeof *racks, name_ix_cmp);
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || strcmp(racks[i].name, racks[i - 1].name) != 0)
			d->racks[d->req.nracks++] = racks[i].name;
		d->nodes[racks[i].i].rack = d->req.nracks - 1;
	}
	qsort(*ix, n, sizeof **ix, name_ix_cmp);
	d->req.nodes = d->nodes;
	d->req.nnodes = (int)n;
	d->req.racks = d->racks;
	free(racks);
	return 0;
}

static int
read_rows(struct policy_job *job, json_t *rows, struct policy_row *out,
    int *max, char *err, size_t errlen)
{
	size_t	 n = json_array_size(rows);

	job->rows = out;
	job->nrows = (int)n;
	*max = 0;
	for (size_t r = 0; r < n; r++) {
		json_t	*row = json_array_get(rows, r);
		json_t	*a = json_array_get(row, 0), *b = json_array_get(row, 1);
		json_t	*c = json_array_get(row, 2);

		if (!json_is_array(row) || json_array_size(row) != 3 ||
		    !json_is_integer(a) || !json_is_integer(b) ||
		    !json_is_number(c))
			return (errf(err, errlen, "job '%s': speedup[%zu] must be "
			    "[nodes, ranks, speedup], two integers and a number",
			    job->name, r), -1);
		if (json_integer_value(a) < 1 || json_integer_value(b) > INT_MAX ||
		    json_integer_value(b) < json_integer_value(a))
			return (errf(err, errlen, "job '%s': speedup[%zu] [%lld, "
			    "%lld, ...]: nodes must be >= 1 and ranks >= nodes",
			    job->name, r, (long long)json_integer_value(a),
			    (long long)json_integer_value(b)), -1);
		out[r].nodes = (int)json_integer_value(a);
		out[r].ranks = (int)json_integer_value(b);
		out[r].speedup = json_number_value(c);
		if (out[r].ranks > *max)
			*max = out[r].ranks;
	}
	return 0;
}

static int
read_job(struct policy_doc *d, json_t *o, size_t i, struct policy_row *rows,
    char *err, size_t errlen)
{
	struct policy_job *job = &d->jobs[i];
	json_t	*sp = json_object_get(o, "speedup"), *pre;
	char	 where[POLICY_MAX_NAME + 16];
	int	 top;

	if (!json_is_object(o) || (job->name = get_str(o, "name")) == NULL)
		return (errf(err, errlen, "jobs[%zu]: must be an object with a "
		    "name (a string)", i), -1);
	snprintf(where, sizeof where, "job '%.*s': ", POLICY_MAX_NAME,
	    job->name);
	if (!json_is_array(sp))
		return (errf(err, errlen, "%sspeedup: must be an array of [nodes, "
		    "ranks, speedup] rows", where), -1);
	if (json_array_size(sp) > POLICY_MAX_ROWS)
		return (errf(err, errlen, "%s%zu speedup rows; at most %d", where,
		    json_array_size(sp), POLICY_MAX_ROWS), -1);
	if (read_rows(job, sp, rows, &top, err, errlen) != 0)
		return -1;
	pre = json_object_get(o, "preemptible");
	if (pre != NULL && !json_is_boolean(pre))
		return (errf(err, errlen, "%spreemptible: must be true or false",
		    where), -1);
	job->preemptible = pre == NULL || json_is_true(pre);
	if (get_num(o, "submitted", 0, &job->submitted, where, err, errlen) ||
	    get_num(o, "age", 0, &job->age, where, err, errlen) ||
	    get_num(o, "attained", 0, &job->attained, where, err, errlen) ||
	    get_int(o, "restarts", 0, &job->restarts, where, err, errlen) ||
	    get_int(o, "min_ranks", 0, &job->min_ranks, where, err, errlen) ||
	    get_int(o, "max_ranks", top, &job->max_ranks, where, err, errlen))
		return -1;
	return 0;
}

static int
read_current(struct policy_doc *d, json_t *cur, const struct name_ix *nodes,
    char *err, size_t errlen)
{
	int	 nj = d->req.njobs, total = 0, k = 0;
	struct name_ix *jobs;
	const char *key;
	json_t	*v;
	int	 rc = 0;

	if (cur == NULL)
		return 0;
	if (!json_is_object(cur))
		return (errf(err, errlen, "current: must be an object of job "
		    "names to arrays of node names"), -1);
	json_object_foreach(cur, key, v) {
		if (!json_is_array(v))
			return (errf(err, errlen, "current['%s']: must be an array "
			    "of node names", key), -1);
		total += (int)json_array_size(v);
		if (total > POLICY_MAX_ARRAYS)
			return (errf(err, errlen, "current: more than %d ranks",
			    POLICY_MAX_ARRAYS), -1);
	}
	jobs = xcalloc((size_t)nj + 1, sizeof *jobs);
	for (int j = 0; j < nj; j++)
		jobs[j] = (struct name_ix){ d->jobs[j].name, j };
	qsort(jobs, (size_t)nj, sizeof *jobs, name_ix_cmp);
	d->current = xcalloc((size_t)total + 1, sizeof *d->current);
	json_object_foreach(cur, key, v) {
		int	 j = name_find(jobs, nj, key);

		if (j < 0) {
			rc = (errf(err, errlen, "current names job '%s', which is "
			    "not in jobs", key), -1);
			break;
		}
		d->jobs[j].current = &d->current[k];
		d->jobs[j].ncurrent = (int)json_array_size(v);
		for (size_t r = 0; r < json_array_size(v) && rc == 0; r++) {
			const char *nm = json_string_value(json_array_get(v, r));
			int	 x = nm != NULL ?
			    name_find(nodes, d->req.nnodes, nm) : -1;

			if (x < 0)
				rc = (errf(err, errlen, "current['%s'][%zu]: %s%s%s "
				    "is not a node of the request", key, r,
				    nm != NULL ? "node '" : "a non-string",
				    nm != NULL ? nm : "", nm != NULL ? "'" : ""), -1);
			d->current[k++] = x;
		}
		if (rc != 0)
			break;
	}
	free(jobs);
	return rc;
}

static int
read_doc(struct policy_doc *d, json_t *root, char *err, size_t errlen)
{
	json_t	*jobs = json_object_get(root, "jobs");
	struct name_ix *nodes = NULL;
	size_t	 nrows = 0, nj;
	int	 rc = -1;

	if (!json_is_object(root))
		return (errf(err, errlen, "a request must be a JSON object"), -1);
	if (get_num(root, "time", 0, &d->req.time, "", err, errlen) ||
	    get_num(root, "interval_s", 60, &d->req.interval_s, "", err,
	    errlen) || get_num(root, "restart_s", 30, &d->req.restart_s, "",
	    err, errlen))
		return -1;
	if (json_object_get(root, "nodes") == NULL || !json_is_array(jobs))
		return (errf(err, errlen, "a request needs nodes and jobs (arrays)"), -1);
	if (read_nodes(d, json_object_get(root, "nodes"), &nodes, err,
	    errlen) != 0)
		goto out;
	nj = json_array_size(jobs);
	for (size_t i = 0; i < nj; i++)
		nrows += json_array_size(json_object_get(json_array_get(jobs, i),
		    "speedup"));
	d->jobs = xcalloc(nj + 1, sizeof *d->jobs);
	d->rows = xcalloc(nrows + 1, sizeof *d->rows);
	d->req.jobs = d->jobs;
	d->req.njobs = (int)nj;
	nrows = 0;
	for (size_t i = 0; i < nj; i++) {
		json_t	*o = json_array_get(jobs, i);

		if (read_job(d, o, i, &d->rows[nrows], err, errlen) != 0)
			goto out;
		nrows += (size_t)d->jobs[i].nrows;
	}
	rc = read_current(d, json_object_get(root, "current"), nodes, err,
	    errlen);
out:
	free(nodes);
	return rc;
}

int
policy_json_read(struct policy_doc *d, const char *line, size_t len, char *err,
    size_t errlen)
{
	json_error_t	 je;
	json_t		*root;

	memset(d, 0, sizeof *d);
	if (len > POLICY_LINE_MAX)
		return (errf(err, errlen, "the request is %zu bytes; at most %d",
		    len, POLICY_LINE_MAX), -1);
	if (json_measure(line, len, err, errlen) != 0)
		return -1;
	if ((root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je)) == NULL)
		return (errf(err, errlen, "malformed JSON at column %d: %s",
		    je.column, je.text), -1);
	d->root = root;
	if (read_doc(d, root, err, errlen) != 0) {
		policy_json_free(d);
		return -1;
	}
	return 0;
}

void
policy_json_free(struct policy_doc *d)
{
	json_decref(d->root);
	free(d->nodes);
	free(d->jobs);
	free(d->rows);
	free(d->current);
	free(d->racks);
	memset(d, 0, sizeof *d);
}

static char *
dump(json_t *o)
{
	char	*s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);

	json_decref(o);
	if (s == NULL)
		s = xstrdup("{\"error\":\"the reply could not be encoded\"}");
	return s;
}

char *
policy_json_request(const struct policy_request *req)
{
	json_t	*nodes = json_array(), *jobs = json_array();
	json_t	*cur = json_object();

	for (int i = 0; i < req->nnodes; i++)
		json_array_append_new(nodes, json_pack("{s:s, s:i, s:s}", "name",
		    req->nodes[i].name, "slots", req->nodes[i].slots, "rack",
		    req->racks[req->nodes[i].rack]));
	for (int j = 0; j < req->njobs; j++) {
		const struct policy_job *job = &req->jobs[j];
		json_t	*rows = json_array(), *at = json_array();

		for (int r = 0; r < job->nrows; r++)
			json_array_append_new(rows, json_pack("[i, i, f]",
			    job->rows[r].nodes, job->rows[r].ranks,
			    job->rows[r].speedup));
		json_array_append_new(jobs, json_pack("{s:s, s:f, s:f, s:f, s:i, "
		    "s:i, s:i, s:b, s:o}", "name", job->name, "submitted",
		    job->submitted, "age", job->age, "attained", job->attained,
		    "restarts", job->restarts, "min_ranks", job->min_ranks,
		    "max_ranks", job->max_ranks, "preemptible", job->preemptible,
		    "speedup", rows));
		for (int k = 0; k < job->ncurrent; k++)
			json_array_append_new(at,
			    json_string(req->nodes[job->current[k]].name));
		if (job->ncurrent > 0)
			json_object_set_new(cur, job->name, at);
		else
			json_decref(at);
	}
	return dump(json_pack("{s:f, s:f, s:f, s:o, s:o, s:o}", "time",
	    req->time, "interval_s", req->interval_s, "restart_s",
	    req->restart_s, "nodes", nodes, "jobs", jobs, "current", cur));
}

char *
policy_json_reply(const struct policy_request *req,
    const struct policy_reply *rep)
{
	json_t	*all = json_object();

	for (int j = 0; j < req->njobs; j++) {
		json_t	*a = json_array();

		for (int k = 0; k < rep->n[j]; k++)
			json_array_append_new(a,
			    json_string(req->nodes[rep->node_of[j][k]].name));
		json_object_set_new(all, req->jobs[j].name, a);
	}
	return dump(json_pack("{s:o}", "allocations", all));
}

char *
policy_json_error(const char *msg)
{
	json_t	*s = json_string(msg);

	/* A message quoting the request may hold bytes that are not UTF-8. */
	if (s == NULL)
		s = json_string("the request was refused (its text is not UTF-8)");
	return dump(json_pack("{s:o}", "error", s));
}
