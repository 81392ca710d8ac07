/*
 * record.h: frames that carry structure, as C structs.  A record type is
 * one X-list of its fields,
 *	X(field, TYPE, size, NEED)
 * which expands into the struct's members (RECORD_MEMBER), a bit per
 * field (RECORD_BIT) and a table of rows (RECORD_ROW: the JSON name, the
 * type, the member's offset and size, whether it must be there).
 * record_pack and record_unpack are the one encoder and decoder of every
 * such frame, so a new field is one line in its list, and a frame that
 * lacks a required field, or holds one of the wrong type or size, does
 * not decode: it is never read as a silent default.
 *
 * Types: INT (int), LONG (long long), REAL (double), BOOL (bool), STR
 * (char[size]; a longer string does not decode), TEXT (a malloc'd char *,
 * freed by record_free) and JSON (a json_t * of any kind, a reference
 * that record_free drops).  NEED is REQ or OPT; an optional field is
 * there when its bit is set in the struct's `have` mask, and an INT, LONG
 * or REAL of a frame's list may be null for "unknown".
 */
#ifndef HUNTER_RECORD_H
#define HUNTER_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

enum record_type { RT_INT, RT_LONG, RT_REAL, RT_BOOL, RT_STR, RT_TEXT,
	RT_JSON };
enum record_need { RN_OPT, RN_REQ };

struct record_field {
	const char	*name;		/* the JSON field */
	enum record_type type;
	size_t		 at;		/* offset of the member */
	size_t		 size;		/* of a STR member; 0 for the others */
	enum record_need need;
};

#define RECORD_CTYPE_INT(f, n)	int f;
#define RECORD_CTYPE_LONG(f, n)	long long f;
#define RECORD_CTYPE_REAL(f, n)	double f;
#define RECORD_CTYPE_BOOL(f, n)	bool f;
#define RECORD_CTYPE_STR(f, n)	char f[n];
#define RECORD_CTYPE_TEXT(f, n)	char *f;
#define RECORD_CTYPE_JSON(f, n)	json_t *f;
#define RECORD_SIZE_INT(st, f, n)	0
#define RECORD_SIZE_LONG(st, f, n)	0
#define RECORD_SIZE_REAL(st, f, n)	0
#define RECORD_SIZE_BOOL(st, f, n)	0
#define RECORD_SIZE_STR(st, f, n)	sizeof ((struct st *)0)->f
#define RECORD_SIZE_TEXT(st, f, n)	0
#define RECORD_SIZE_JSON(st, f, n)	0

/* In the struct: one member per field. */
#define RECORD_MEMBER(f, type, n, need)	RECORD_CTYPE_##type(f, n)
/* In an enum: PREFIX_field, the field's bit in `have`. */
#define RECORD_BIT(prefix, f)	prefix##f,
/* In the table: the row of field f of struct st. */
#define RECORD_ROW(st, f, type, n, need) { #f, RT_##type,		\
	offsetof(struct st, f), RECORD_SIZE_##type(st, f, n), RN_##need },

/* Put each field of base that is there (a required one, or an optional
 * one whose bit is set in have) into obj.  0, or -1 with err naming the
 * field jansson refused (a string that is not UTF-8). */
int	record_pack(const struct record_field *, int n, const void *base,
	    uint64_t have, json_t *obj, char *err, size_t errlen);
/*
 * Read them from obj into base, which the caller zeroed: a field present
 * sets its member and its bit in *have; an absent (or, for numbers,
 * null) optional field is left zero.  0, or -1 with err naming the field
 * that is missing, of the wrong type, out of range or too long; what was
 * read before it is in base, to be freed with record_free.
 */
int	record_unpack(const struct record_field *, int n, const json_t *obj,
	    void *base, uint64_t *have, char *err, size_t errlen);
/* Free the TEXT members and drop the JSON ones (NULL afterwards). */
void	record_free(const struct record_field *, int n, void *base);

#endif
