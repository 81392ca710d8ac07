/*
 * record.c: the encoder and decoder of the frames that carry structure
 * (record.h): the launch order, the summary.  Each walks the record's
 * table of rows, so nothing in between names a field.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xmalloc.h"
#include "backend/proto/record.h"

static const char *const type_words[] = {
	[RT_INT] = "an integer", [RT_LONG] = "an integer",
	[RT_REAL] = "a number", [RT_BOOL] = "true or false",
	[RT_STR] = "a string", [RT_TEXT] = "a string", [RT_JSON] = "a value",
};

static json_t *
record_value(const struct record_field *f, const char *p)
{
	switch (f->type) {
	case RT_INT:
		return json_integer(*(const int *)p);
	case RT_LONG:
		return json_integer(*(const long long *)p);
	case RT_REAL:
		return json_real(*(const double *)p);
	case RT_BOOL:
		return json_boolean(*(const bool *)p);
	case RT_STR:
		return json_string(p);
	case RT_TEXT:
		return json_string(*(char *const *)p ? *(char *const *)p : "");
	case RT_JSON:
		return json_incref(*(json_t *const *)p);
	}
	return NULL;
}

int
record_pack(const struct record_field *fields, int n, const void *base,
    uint64_t have, json_t *obj, char *err, size_t errlen)
{
	for (int i = 0; i < n; i++) {
		const struct record_field *f = &fields[i];
		json_t	*v;

		if (f->need == RN_OPT && !(have >> i & 1))
			continue;
		if ((v = record_value(f, (const char *)base + f->at)) == NULL) {
			/* A JSON member left NULL is not there. */
			if (f->type == RT_JSON && f->need == RN_OPT)
				continue;
			snprintf(err, errlen, "\"%s\" cannot be encoded (not "
			    "UTF-8?)", f->name);
			return -1;
		}
		json_object_set_new(obj, f->name, v);
	}
	return 0;
}

/* Set member f at p from v, which is not NULL.  0, or -1 with why. */
static int
record_take(const struct record_field *f, const json_t *v, char *p,
    char *why, size_t whylen)
{
	json_int_t	 i = json_integer_value(v);

	switch (f->type) {
	case RT_INT:
		if (!json_is_integer(v))
			break;
		if (i < INT_MIN || i > INT_MAX) {
			snprintf(why, whylen, "out of range");
			return -1;
		}
		*(int *)p = (int)i;
		return 0;
	case RT_LONG:
		if (!json_is_integer(v))
			break;
		*(long long *)p = i;
		return 0;
	case RT_REAL:
		if (!json_is_number(v))
			break;
		*(double *)p = json_number_value(v);
		return 0;
	case RT_BOOL:
		if (!json_is_boolean(v))
			break;
		*(bool *)p = json_is_true(v);
		return 0;
	case RT_STR:
		if (!json_is_string(v))
			break;
		if (json_string_length(v) >= f->size ||
		    memchr(json_string_value(v), '\0', json_string_length(v))) {
			snprintf(why, whylen, "longer than %zu bytes", f->size - 1);
			return -1;
		}
		memcpy(p, json_string_value(v), json_string_length(v) + 1);
		return 0;
	case RT_TEXT:
		if (!json_is_string(v))
			break;
		*(char **)p = xstrdup(json_string_value(v));
		return 0;
	case RT_JSON:
		*(json_t **)p = json_incref((json_t *)v);
		return 0;
	}
	snprintf(why, whylen, "not %s", type_words[f->type]);
	return -1;
}

int
record_unpack(const struct record_field *fields, int n, const json_t *obj,
    void *base, uint64_t *have, char *err, size_t errlen)
{
	char	 why[64];

	*have = 0;
	for (int i = 0; i < n; i++) {
		const struct record_field *f = &fields[i];
		json_t	*v = json_object_get(obj, f->name);

		/* null is "unknown", for the numbers of an optional field. */
		if (v == NULL || (json_is_null(v) && f->need == RN_OPT &&
		    f->type <= RT_REAL)) {
			if (f->need == RN_OPT)
				continue;
			snprintf(err, errlen, "no \"%s\"", f->name);
			return -1;
		}
		if (record_take(f, v, (char *)base + f->at, why, sizeof why) != 0) {
			snprintf(err, errlen, "\"%s\" is %s", f->name, why);
			return -1;
		}
		*have |= (uint64_t)1 << i;
	}
	return 0;
}

void
record_free(const struct record_field *fields, int n, void *base)
{
	for (int i = 0; i < n; i++) {
		char	*p = (char *)base + fields[i].at;

		if (fields[i].type == RT_TEXT) {
			free(*(char **)p);
			*(char **)p = NULL;
		} else if (fields[i].type == RT_JSON) {
			json_decref(*(json_t **)p);
			*(json_t **)p = NULL;
		}
	}
}
