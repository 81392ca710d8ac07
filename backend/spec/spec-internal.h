/*
 * spec-internal.h: what the files of backend/spec share and nobody else
 * sees.  A spec is read in two steps: yaml-doc.c turns the bytes into a
 * tree of nodes with positions, then spec-walk.c walks that tree against a
 * table of spec_field entries (one table per mapping level) and
 * spec-value.c converts each value and stores it at its offset in the
 * target struct, collecting every error.  spec-job.c and spec-cluster.c
 * hold the tables and the checks that span several keys; spec-file.c
 * reads files.
 */
#ifndef HUNTER_SPEC_INTERNAL_H
#define HUNTER_SPEC_INTERNAL_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/spec/spec.h"
#include "backend/spec/yaml-doc.h"

/* Spec files are a few hundred bytes; this leaves room and bounds the work. */
#define SPEC_FILE_LIMIT		(1024 * 1024)

/* After this many errors the rest would only hide the first ones. */
#define SPEC_ERRORS_MAX		100

static inline void *
spec_xcalloc(size_t n, size_t size)
{
	void	*p;

	if ((p = calloc(n ? n : 1, size ? size : 1)) == NULL) {
		fputs("hunter: out of memory\n", stderr);
		abort();
	}
	return p;
}

static inline void *
spec_xreallocarray(void *old, size_t n, size_t size)
{
	void	*p;

	if (size != 0 && n > (size_t)-1 / size)
		abort();
	if ((p = realloc(old, n * size != 0 ? n * size : 1)) == NULL) {
		fputs("hunter: out of memory\n", stderr);
		abort();
	}
	return p;
}

static inline char *
spec_xstrndup(const char *s, size_t len)
{
	char	*p = spec_xcalloc(1, len + 1);

	memcpy(p, s, len);
	return p;
}

enum spec_type {
	SF_MAP,		/* nested mapping: sub */
	SF_INT,		/* int */
	SF_U64,		/* uint64_t, non-negative */
	SF_REAL,	/* double, finite */
	SF_BOOL,	/* bool */
	SF_NAME,	/* char[size] of [A-Za-z0-9._-], not empty */
	SF_HOST,	/* char[size], a host name or address */
	SF_PATH,	/* char[size], any printable text */
	SF_SAFEPATH,	/* char[size], a path safe to pass to a remote shell */
	SF_ENUM,	/* int index into names */
	SF_WORD,	/* char[size] holding one of names */
	SF_SIZE,	/* uint64_t bytes */
	SF_DURATION,	/* double seconds */
	SF_PERCENT,	/* double fraction */
	SF_INTS,	/* int[size], count at count_off; items > 0 */
	SF_MICRO,	/* int > 0, or "auto" stored as 0 */
	SF_CUSTOM	/* handled by custom() */
};

enum spec_range {
	SR_ANY,
	SR_POS,		/* > 0 */
	SR_NONNEG,	/* >= 0 */
	SR_GE1,		/* >= 1 */
	SR_UNIT_OC,	/* (0, 1] */
	SR_UNIT_CO,	/* [0, 1) */
	SR_PORT		/* 1..65535 */
};

struct spec_walk;

struct spec_field {
	const char		*key;
	enum spec_type		 type;
	size_t			 off;
	enum spec_range		 range;
	size_t			 size;		/* strings: bytes; SF_INTS: items */
	size_t			 min_items;	/* SF_INTS */
	bool			 one_ok;	/* SF_INTS: a number is a list of one */
	bool			 glob_ok;	/* SF_SAFEPATH: a glob's * ? [ ] too */
	size_t			 count_off;	/* SF_INTS */
	const char *const	*names;		/* SF_ENUM, SF_WORD: NULL-ended */
	const char		*(*name_of)(int); /* SF_ENUM without names: the
						 * name of value i, NULL past
						 * the last */
	const char		*what;		/* a noun for messages */
	const struct spec_field	*sub;		/* SF_MAP */
	int			 required;
	void			(*custom)(struct spec_walk *,
				    const struct ydoc_node *, const char *path,
				    void *base);
};

#define SPEC_FSIZE(type, member) sizeof(((type *)0)->member)

struct spec_walk {
	const char		*file;
	struct spec_errors	*errs;
	int			 nerr;		/* errors this walk found */
};

/* Longest dotted key path in a message, "policy.failover.low_util". */
#define SPEC_KEYPATH_MAX	256

/* spec-cluster.c: scheduler: {policy, interval, restart}, of a cluster
 * file and of config.yaml (struct sched_config). */
extern const struct spec_field spec_sched_fields[];

/* spec-walk.c */
void	spec_walk_map(struct spec_walk *, const struct ydoc_node *,
	    const char *path, const struct spec_field *, void *base);
void	spec_walk_error(struct spec_walk *, const struct ydoc_node *,
	    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
const char *spec_describe(const struct ydoc_node *, char *buf, size_t size);

/* spec-value.c */
void	spec_walk_scalar(struct spec_walk *, const struct spec_field *,
	    const struct ydoc_node *, const char *path, void *base);
void	spec_walk_ints(struct spec_walk *, const struct spec_field *,
	    const struct ydoc_node *, const char *path, void *base);
void	spec_walk_expect(struct spec_walk *, const struct ydoc_node *,
	    const char *path, const char *expected);

/* spec-errors.c */
void	spec_quote(char *buf, size_t size, const char *s, size_t len);
const char *spec_suggest(const char *word, const char *const *names);
size_t	spec_error_count(const struct spec_errors *);

/* spec-units.c */
extern const char *const spec_priority_names[];
extern const char *const spec_device_names[];
extern const char *const spec_format_names[];
extern const char *const spec_placement_names[];
extern const char *const spec_optim_names[];
extern const char *const spec_schedule_names[];
extern const char *const spec_compress_names[];

/* spec-model.c */
const char *spec_model_name_at(int);
void	spec_model_defaults(const struct ydoc_node *root, struct job_spec *);
void	spec_model_check(struct spec_walk *, const struct ydoc_node *root,
	    const struct job_spec *);

/* spec-elastic.c */
void	spec_elastic_ranks(struct spec_walk *, const struct ydoc_node *,
	    const char *path, void *base);
void	spec_elastic_global(struct spec_walk *, const struct ydoc_node *,
	    const char *path, void *base);
void	spec_elastic_defaults(struct job_spec *);
void	spec_elastic_check(struct spec_walk *, const struct ydoc_node *root,
	    const struct job_spec *);

/* spec-program.c */
extern const struct spec_field spec_program_fields[];
void	spec_program_defaults(struct job_spec *);
void	spec_program_prepare(const struct ydoc_node *root, const char *file,
	    struct job_spec *);
void	spec_program_check(struct spec_walk *, const struct ydoc_node *root,
	    const struct job_spec *);

#endif
