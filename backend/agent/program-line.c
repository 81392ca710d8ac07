/*
 * program-line.c: a program's lines on HUNTER_FD (docs/programs.md) into
 * the frames every other rank sends.  A line is one JSON object with a
 * string "t": hello, metrics, beat, idle, epoch, checkpoint, paused,
 * resumed, summary.  A metrics line's fields named as rows of the rank metrics
 * table (backend/proto/metrics.h) become those metrics, so the
 * detectors read a program as they read a worker; its other numbers go
 * along as "extra" for the job screen; samples/s and the step time are
 * derived from "samples" and "step" when the program does not say them.
 * Nothing here trusts the line: a wrong type is refused with the reason.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "lib/errf.h"
#include "backend/proto/metrics.h"
#include "backend/proto/proto.h"
#include "backend/agent/program-internal.h"

/* What the agent measures itself; a program's own word is not taken. */
static const char *const line_agent_fields[] = { "rss", "heartbeat", "pid",
	NULL };

/* The whole numbers of an epoch line; the rest are reals. */
static const char *const line_epoch_ints[] = { "epoch", "epochs", "step",
	NULL };

static bool
line_in(const char *const *list, const char *s)
{
	for (int i = 0; list[i] != NULL; i++) {
		if (strcmp(list[i], s) == 0)
			return true;
	}
	return false;
}

static const struct metric_field *
line_metric(const char *name)
{
	for (int i = 0; i < RM_COUNT; i++) {
		if (strcmp(rank_metrics[i].name, name) == 0)
			return &rank_metrics[i];
	}
	return NULL;
}

/* A name the screen can show as it is. */
static bool
line_extra_name(const char *s)
{
	size_t	 n = 0;

	for (; *s != '\0'; s++, n++) {
		if (!isalnum((unsigned char)*s) && strchr("_.-", *s) == NULL)
			return false;
	}
	return n > 0 && n <= 32;
}

static json_t *
line_frame(const struct program_rank *p, const char *t)
{
	return json_pack("{s:s, s:s, s:i}", "t", t, "job", p->job, "rank",
	    p->rank);
}

/* Integral reals count as integers: JSON writers differ. */
static int
line_int(const json_t *v, long *out)
{
	double	 d;

	if (json_is_integer(v)) {
		*out = (long)json_integer_value(v);
		return 0;
	}
	if (!json_is_real(v))
		return -1;
	d = json_real_value(v);
	if (!isfinite(d) || d != floor(d) || fabs(d) > 9e15)
		return -1;
	*out = (long)d;
	return 0;
}

static json_t *
line_metrics(struct program_rank *p, const json_t *o, double now, char *err,
    size_t errlen)
{
	const struct metric_field *f;
	json_t		*m = line_frame(p, MSG_METRICS), *extra = json_object();
	json_t		*v, *samples = json_object_get(o, "samples");
	const char	*k;
	long		 l;
	int		 nextra = 0;

	json_object_set_new(m, "scope", json_string("rank"));
	if (line_int(json_object_get(o, "step"), &l) != 0 || l < 0) {
		errf(err, errlen, "a metrics line needs \"step\", a whole "
		    "number >= 0");
		goto bad;
	}
	json_object_foreach((json_t *)o, k, v) {
		if (strcmp(k, "t") == 0 || strcmp(k, "samples") == 0 ||
		    line_in(line_agent_fields, k) || !json_is_number(v))
			continue;
		if ((f = line_metric(k)) != NULL) {
			if (f->type == METRIC_INT) {
				if (line_int(v, &l) != 0) {
					errf(err, errlen, "\"%.32s\" must be "
					    "a whole number", k);
					goto bad;
				}
				json_object_set_new(m, k, json_integer(l));
			} else if (isfinite(json_number_value(v)))
				json_object_set_new(m, k,
				    json_real(json_number_value(v)));
			continue;
		}
		if (nextra < PROGRAM_EXTRA_MAX && line_extra_name(k) &&
		    isfinite(json_number_value(v))) {
			json_object_set_new(extra, k,
			    json_real(json_number_value(v)));
			nextra++;
		}
	}
	/* Derived over at least PROGRAM_METRICS_EVERY, so a program that
	 * reports every step does not make them noise. */
	l = (long)json_integer_value(json_object_get(m, "step"));
	if (!p->has_prev || now - p->prev_t >= PROGRAM_METRICS_EVERY) {
		if (p->has_prev && now > p->prev_t) {
			if (json_object_get(m, "samples_per_s") == NULL &&
			    json_is_number(samples))
				json_object_set_new(m, "samples_per_s",
				    json_real((json_number_value(samples) -
				    p->prev_samples) / (now - p->prev_t)));
			if (json_object_get(m, "step_ms") == NULL &&
			    l > p->prev_step)
				json_object_set_new(m, "step_ms", json_real(
				    1000 * (now - p->prev_t) / (double)(l -
				    p->prev_step)));
		}
		p->prev_t = now;
		p->prev_step = l;
		p->prev_samples = json_number_value(samples);
		p->has_prev = true;
	}
	p->step = l;
	p->reported = true;
	p->idle = false;
	if (nextra > 0)
		json_object_set_new(m, "extra", extra);
	else
		json_decref(extra);
	return m;
bad:
	json_decref(extra);
	json_decref(m);
	return NULL;
}

static json_t *
line_epoch(struct program_rank *p, const json_t *o, char *err, size_t errlen)
{
	json_t		*m = line_frame(p, MSG_EPOCH), *v;
	const char	*k;
	long		 l;

	if (line_int(json_object_get(o, "epoch"), &l) != 0) {
		errf(err, errlen, "an epoch line needs \"epoch\", a whole "
		    "number");
		json_decref(m);
		return NULL;
	}
	json_object_foreach((json_t *)o, k, v) {
		if (strcmp(k, "t") == 0 || !json_is_number(v) ||
		    !line_extra_name(k))
			continue;
		if (line_in(line_epoch_ints, k) && line_int(v, &l) == 0)
			json_object_set_new(m, k, json_integer(l));
		else if (isfinite(json_number_value(v)))
			json_object_set_new(m, k, json_real(json_number_value(v)));
	}
	if (json_is_number(json_object_get(o, "test_acc")))
		p->test_acc = json_number_value(json_object_get(o, "test_acc"));
	line_int(json_object_get(o, "epoch"), &p->epoch);
	/* The job's epochs are rank 0's, as a worker's are: the same line
	 * from every rank would be every epoch once a rank. */
	if (!p->rank0) {
		json_decref(m);
		return NULL;
	}
	return m;
}

/* "checkpoint complete at step N in PATH": a path on this node, made
 * absolute from the program's folder, that exists. */
static json_t *
line_checkpoint(struct program_rank *p, const json_t *o, char *err,
    size_t errlen)
{
	const char	*path = json_string_value(json_object_get(o, "path"));
	char		 full[4096 + 1024], why[4096 + 1200];
	struct stat	 st;
	json_t		*m;
	long		 step;

	if (line_int(json_object_get(o, "step"), &step) != 0 || step < 0 ||
	    path == NULL || path[0] == '\0' || strlen(path) > 1000) {
		errf(err, errlen, "a checkpoint line needs \"step\" (a whole "
		    "number) and \"path\" (at most 1000 bytes)");
		return NULL;
	}
	snprintf(full, sizeof full, "%s%s%s", path[0] == '/' ? "" : p->dir,
	    path[0] == '/' ? "" : "/", path);
	if (stat(full, &st) != 0) {
		errf(err, errlen, "declared checkpoint %.1100s of step %ld "
		    "is not there", full, step);
		return NULL;
	}
	m = line_frame(p, MSG_EVENT);
	snprintf(why, sizeof why, "checkpoint complete at step %ld in %s",
	    step, full);
	json_object_set_new(m, "kind", json_string("checkpoint"));
	json_object_set_new(m, "node", json_string(p->node));
	json_object_set_new(m, "reason", json_string(why));
	json_object_set_new(m, "step", json_integer(step));
	json_object_set_new(m, "path", json_string(full));
	return m;
}

static json_t *
line_hold(struct program_rank *p, const json_t *o, bool paused)
{
	json_t	*m = line_frame(p, MSG_EVENT);
	char	 why[128];
	long	 step = p->step;

	line_int(json_object_get(o, "step"), &step);
	p->paused = paused;
	snprintf(why, sizeof why, paused ? "holding at step %ld" :
	    "continuing from step %ld", step);
	json_object_set_new(m, "kind", json_string(paused ? "paused" :
	    "resumed"));
	json_object_set_new(m, "node", json_string(p->node));
	json_object_set_new(m, "reason", json_string(why));
	return m;
}

json_t *
program_line_frame(struct program_rank *p, const char *line, size_t len,
    double now, char *err, size_t errlen)
{
	json_error_t	 je;
	json_t		*o, *m = NULL, *v;
	const char	*t, *k;

	err[0] = '\0';
	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' '))
		len--;
	if (len == 0)
		return NULL;
	if ((o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je)) == NULL) {
		errf(err, errlen, "not JSON (%s)", je.text);
		return NULL;
	}
	if (!json_is_object(o) || (t = json_string_value(json_object_get(o,
	    "t"))) == NULL) {
		errf(err, errlen, "not an object with a string \"t\"");
		json_decref(o);
		return NULL;
	}
	if (strcmp(t, "hello") == 0) {
		p->speaks = true;
		p->hello_t = now;
	} else if (strcmp(t, "metrics") == 0)
		m = line_metrics(p, o, now, err, errlen);
	else if (strcmp(t, "beat") == 0) {
		m = line_frame(p, MSG_METRICS);
		json_object_set_new(m, "scope", json_string("rank"));
		json_object_set_new(m, "beat", json_true());
		json_object_set_new(m, "step", json_integer(p->step));
		p->reported = true;
	} else if (strcmp(t, "idle") == 0) {
		p->idle = true;
		p->idle_t = now;
	} else if (strcmp(t, "epoch") == 0)
		m = line_epoch(p, o, err, errlen);
	else if (strcmp(t, "checkpoint") == 0)
		m = line_checkpoint(p, o, err, errlen);
	else if (strcmp(t, "paused") == 0 || strcmp(t, "resumed") == 0)
		m = line_hold(p, o, strcmp(t, "paused") == 0);
	else if (strcmp(t, "summary") == 0) {
		json_decref(p->summary);
		p->summary = json_object();
		json_object_foreach(o, k, v) {
			if (json_is_number(v) && line_extra_name(k))
				json_object_set(p->summary, k, v);
		}
	} else
		errf(err, errlen, "unknown line type \"%.32s\"", t);
	json_decref(o);
	return m;
}

const char *
program_oom_words(const char *line)
{
	static const char *const words[] = {
		"CUDA out of memory",		/* torch.cuda.OutOfMemoryError */
		"OutOfMemoryError",
		"DefaultCPUAllocator: can't allocate memory",
		"DefaultCPUAllocator: not enough memory",
		"MemoryError",			/* Python's own */
		"std::bad_alloc",
		"Cannot allocate memory",	/* ENOMEM, as strerror says it */
		NULL
	};

	for (int i = 0; words[i] != NULL; i++) {
		if (strstr(line, words[i]) != NULL)
			return words[i];
	}
	return NULL;
}
