/*
 * summary.c: the summary frame's field list as a table (summary.h), and
 * the launch order's (launch.h): each the one encoder and decoder of its
 * frame.
 */
#include <string.h>

#include "backend/proto/launch.h"
#include "backend/proto/proto.h"
#include "backend/proto/summary.h"

#define SUMMARY_ROW(...)	RECORD_ROW(job_summary, __VA_ARGS__)
static const struct record_field summary_fields[SUMMARY_NFIELDS] = {
	SUMMARY_FIELDS(SUMMARY_ROW)
};
#undef SUMMARY_ROW

#define LAUNCH_ROW(...)		RECORD_ROW(launch_order, __VA_ARGS__)
static const struct record_field launch_fields[LAUNCH_NFIELDS] = {
	LAUNCH_FIELDS(LAUNCH_ROW)
};
#undef LAUNCH_ROW

_Static_assert(SUMMARY_NFIELDS <= 64 && LAUNCH_NFIELDS <= 64,
    "a record's have mask has 64 bits");

int
summary_pack(const struct job_summary *s, json_t *obj, char *err,
    size_t errlen)
{
	return record_pack(summary_fields, SUMMARY_NFIELDS, s, s->have, obj,
	    err, errlen);
}

int
summary_unpack(const json_t *msg, struct job_summary *s, char *err,
    size_t errlen)
{
	memset(s, 0, sizeof *s);
	return record_unpack(summary_fields, SUMMARY_NFIELDS, msg, s,
	    &s->have, err, errlen);
}

bool
summary_number(const struct job_summary *s, const char *name, double *v)
{
	for (int i = 0; i < SUMMARY_NFIELDS; i++) {
		const struct record_field *f = &summary_fields[i];
		const char *p = (const char *)s + f->at;

		if (strcmp(f->name, name) != 0 || !(s->have >> i & 1))
			continue;
		switch (f->type) {
		case RT_INT: *v = *(const int *)p; return true;
		case RT_LONG: *v = (double)*(const long long *)p; return true;
		case RT_REAL: *v = *(const double *)p; return true;
		default: return false;
		}
	}
	return false;
}

json_t *
launch_pack(const struct launch_order *l, char *err, size_t errlen)
{
	json_t	*m = json_pack("{s:s, s:s}", "t", MSG_CMD, "cmd", "launch");

	if (record_pack(launch_fields, LAUNCH_NFIELDS, l, l->have, m, err,
	    errlen) != 0) {
		json_decref(m);
		return NULL;
	}
	return m;
}

int
launch_unpack(const json_t *msg, struct launch_order *l, char *err,
    size_t errlen)
{
	memset(l, 0, sizeof *l);
	return record_unpack(launch_fields, LAUNCH_NFIELDS, msg, l, &l->have,
	    err, errlen);
}

void
launch_free(struct launch_order *l)
{
	record_free(launch_fields, LAUNCH_NFIELDS, l);
}
