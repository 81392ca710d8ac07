/*
 * spec-elastic.c: the keys of a job file that let the scheduler size it
 * (hunter(1), JOB FILES, Elastic jobs): resources.ranks and
 * train.batch.global each take a number, as before, or {min: A, max: B};
 * program.elastic says that a program job takes a new WORLD_SIZE.  A
 * number stores min = max = the number; a range stores both and leaves
 * ranks (global) at the min, the count (batch) a job starts with until
 * the scheduler says otherwise, so every reader of resources.ranks sees
 * a count it can launch.
 */
#include "config.h"

#include <errno.h>

#include "backend/spec/spec-internal.h"

struct elastic_range {
	int	min, max;
};

#define R(member)	offsetof(struct elastic_range, member)

static const struct spec_field elastic_range_fields[] = {
	{ .key = "min", .type = SF_INT, .off = R(min), .range = SR_POS,
	  .required = 1 },
	{ .key = "max", .type = SF_INT, .off = R(max), .range = SR_POS,
	  .required = 1 },
	{ NULL }
};

/* Whether s reads as a whole decimal integer (its range is checked by
 * spec_walk_scalar). */
static bool
elastic_is_integer(const char *s)
{
	char	*end;

	if (*s == '\0')
		return false;
	errno = 0;
	(void)strtoll(s, &end, 10);
	return *end == '\0' && (s[0] == '-' || s[0] == '+' ||
	    (s[0] >= '0' && s[0] <= '9'));
}

/*
 * One value that is a number or {min, max}: val, lo and hi get the number
 * three times, or min, min and max with *range set.  Nothing is stored
 * after an error, so the default stands.
 */
static void
elastic_walk(struct spec_walk *w, const struct ydoc_node *v, const char *path,
    int *val, int *lo, int *hi, bool *range)
{
	static const struct spec_field one = { .key = "", .type = SF_INT,
	    .off = 0, .range = SR_POS };
	struct elastic_range r = { 0, 0 };
	const struct ydoc_node *key = NULL;
	int	 before = w->nerr, x = 0;

	if (v->kind == YDOC_MAP) {
		spec_walk_map(w, v, path, elastic_range_fields, &r);
		if (w->nerr != before)
			return;
		if (r.min > r.max) {
			ydoc_get(v, "min", &key);
			spec_walk_error(w, key, "%s.min: must be <= %s.max (%d), "
			    "got %d", path, path, r.max, r.min);
			return;
		}
		*val = *lo = r.min;
		*hi = r.max;
		*range = true;
		return;
	}
	if (v->kind != YDOC_SCALAR || strlen(v->str) != v->len ||
	    !elastic_is_integer(v->str)) {
		spec_walk_expect(w, v, path, "an integer or {min: A, max: B}");
		return;
	}
	spec_walk_scalar(w, &one, v, path, &x);
	if (w->nerr != before)
		return;
	*val = *lo = *hi = x;
	*range = false;
}

void
spec_elastic_ranks(struct spec_walk *w, const struct ydoc_node *v,
    const char *path, void *base)
{
	struct job_spec	*j = base;

	elastic_walk(w, v, path, &j->resources.ranks, &j->resources.min_ranks,
	    &j->resources.max_ranks, &j->resources.elastic);
}

void
spec_elastic_global(struct spec_walk *w, const struct ydoc_node *v,
    const char *path, void *base)
{
	struct job_spec	*j = base;

	elastic_walk(w, v, path, &j->train.batch.global,
	    &j->train.batch.global_min, &j->train.batch.global_max,
	    &j->train.batch.adaptive);
}

void
spec_elastic_defaults(struct job_spec *j)
{
	j->resources.min_ranks = j->resources.max_ranks = j->resources.ranks;
	j->resources.elastic = false;
	j->train.batch.global_min = j->train.batch.global_max =
	    j->train.batch.global;
	j->train.batch.adaptive = false;
}

/*
 * What the tables cannot say: a program job is elastic only when it says
 * it can be (program.elastic: true), and an elastic job's first
 * configuration, min ranks at the min batch, must cut the batch evenly.
 */
void
spec_elastic_check(struct spec_walk *w, const struct ydoc_node *root,
    const struct job_spec *j)
{
	const struct ydoc_node	*key = NULL;
	int	 lo = j->resources.min_ranks, batch = j->train.batch.global;

	ydoc_get(ydoc_get(root, "resources", NULL), "ranks", &key);
	if (j->kind == JOB_PROGRAM) {
		if (j->resources.elastic && !j->program.elastic)
			spec_walk_error(w, key, "resources.ranks: {min, max} "
			    "lets the scheduler resize the job, and a program "
			    "job must say it can be: write program.elastic: "
			    "true once the program takes a new WORLD_SIZE and "
			    "HUNTER_RESUME_FROM after a restart");
		return;
	}
	if (j->resources.elastic && j->train.batch.micro == 0 &&
	    batch % lo != 0)
		spec_walk_error(w, key, "resources.ranks.min: the job starts "
		    "at %d ranks, and train.batch.global%s (%d) is not a "
		    "multiple of it", lo, j->train.batch.adaptive ? ".min" : "",
		    batch);
}
